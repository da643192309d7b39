package adversarial_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/adversarial"
	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// The cases of the threat catalogue (adversarial.md §2a and §2b) that
// must each have a fixture.
var (
	v1Cases = []string{
		"adv-frontmatter-mismatch", "adv-supporting-file-digest-swap", "adv-content-rotation", "adv-allowed-tools-grant",
		"adv-nested-consent", "adv-cross-server-read", "adv-directory-walk-escape", "adv-name-collision", "adv-file-url",
		"adv-oversized-payload", "adv-walk-budget", "adv-enumeration-exhaustion",
	}
	archiveCases = []string{
		"adv-archive-traversal", "adv-zip-traversal", "adv-archive-windows-paths", "adv-archive-symlink-escape",
		"adv-zip-symlink-escape", "adv-archive-hardlink-escape", "adv-decompression-bomb", "adv-cumulative-budget",
		"adv-archive-setuid", "adv-archive-non-regular", "adv-archive-normalization-collision", "adv-live-read-divergence",
		"adv-archive-name-collision",
	}
)

func TestFixtureTable(t *testing.T) {
	fx := adversarial.Fixtures()
	ids := map[string]oracle.Fixture{}
	for _, f := range fx {
		if _, dup := ids[f.ID]; dup {
			t.Errorf("%s: duplicate id", f.ID)
		}
		ids[f.ID] = f
		if f.URI == "" || f.Clause == "" || f.Why == "" || f.Host == "" {
			t.Errorf("%s: missing uri, clause, why or host", f.ID)
		}
		if !slices.Contains([]oracle.Action{oracle.Reject, oracle.Gate, oracle.RePrompt, oracle.Sanitize}, f.Action) {
			t.Errorf("%s: action %q", f.ID, f.Action)
		}
		switch {
		case f.DetectableByCheck && (f.Check == "" || (f.Expect != "FAIL" && f.Expect != "WARN") || f.HostOnlyReason != ""):
			t.Errorf("%s: a detectable fixture needs check and expect, and no host-only reason", f.ID)
		case !f.DetectableByCheck && (f.HostOnlyReason == "" || f.Check != ""):
			t.Errorf("%s: a host-only fixture needs a reason and no check", f.ID)
		}
	}
	for _, id := range v1Cases {
		if f, ok := ids[id]; !ok || f.Deferred {
			t.Errorf("v1 case %s: missing or marked deferred", id)
		}
	}
	for _, id := range archiveCases {
		if f, ok := ids[id]; !ok || !f.Deferred {
			t.Errorf("archive case %s: missing or not marked deferred", id)
		}
	}
	if len(fx) != len(v1Cases)+len(archiveCases) {
		t.Errorf("%d fixtures, want %d", len(fx), len(v1Cases)+len(archiveCases))
	}
	// Fixtures returns a copy.
	fx[0].Also = append(fx[0].Also, "x")
	fx[0].ID = "changed"
	if adversarial.Fixtures()[0].ID == "changed" {
		t.Error("Fixtures shares its table")
	}
}

// rawResult keeps a custom result as sent.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) UnmarshalJSON(b []byte) error { r.raw = bytes.Clone(b); return nil }

func newClient() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "adversarial-test", Version: "1"}, nil)
	mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *rawResult](c, skillsext.MethodList)
	mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *rawResult](c, skillsext.MethodGet)
	mcp.AddSendingCustomMethod[*skillsext.ReadDirectoryParams, *rawResult](c, skillsext.MethodReadDirectory)
	return c
}

// connect opens an in-memory session of ms at protocol version v.
func connect(t testing.TB, ms *mcp.Server, v string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := newClient().Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// connectLarge connects over pipes whose client side accepts frames of up
// to 64 MiB.
func connectLarge(t testing.TB, ms *mcp.Server) *mcp.ClientSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ss, err := ms.Connect(context.Background(), &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := newClient().Connect(context.Background(), &mcp.IOTransport{Reader: cr, Writer: cw, MaxLineLength: 64 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call[P any, PP interface {
	*P
	mcp.Params
}](t testing.TB, cs *mcp.ClientSession, method string, p PP) json.RawMessage {
	t.Helper()
	res, err := mcp.CallCustomMethod[PP, *rawResult](context.Background(), cs, method, p)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return res.raw
}

type entry struct {
	URI         string                     `json:"uri"`
	Frontmatter map[string]json.RawMessage `json:"frontmatter"`
	Resources   []skillsext.Resource       `json:"resources"`
	Meta        struct {
		Fixture *oracle.Fixture `json:"io.github.skills-mcp/fixture"`
	} `json:"_meta"`
}

type page struct {
	Skills     []entry `json:"skills"`
	NextCursor string  `json:"nextCursor"`
	ResultType string  `json:"resultType"`
	TTLMs      *int    `json:"ttlMs"`
	CacheScope string  `json:"cacheScope"`
}

func listPage(t testing.TB, cs *mcp.ClientSession, cursor string) page {
	t.Helper()
	var p page
	if err := json.Unmarshal(call(t, cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor}), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t testing.TB, cs *mcp.ClientSession, uri string, meta mcp.Meta) []byte {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri, Meta: meta})
	if err != nil {
		t.Fatalf("reading %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("reading %s: %d contents", uri, len(res.Contents))
	}
	if res.Contents[0].Blob != nil {
		return res.Contents[0].Blob
	}
	return []byte(res.Contents[0].Text)
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func code(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

// TestServesFixtures checks that every fixture is offered, carries its
// oracle, and serves its violation as designed (the serve-checks of the
// threat catalogue).
func TestServesFixtures(t *testing.T) {
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			ms := adversarial.New(nil)
			cs := connect(t, ms, v)
			if got, _ := json.Marshal(cs.InitializeResult().Capabilities.Extensions[skillsext.ExtensionID]); string(got) != `{"directoryRead":true}` {
				t.Errorf("capability = %s", got)
			}
			p := listPage(t, cs, "")
			if p.ResultType != "complete" || p.NextCursor == "" || (v >= "2026-07-28") != (p.TTLMs != nil) {
				t.Errorf("first page: resultType %q, nextCursor %q, ttlMs %v", p.ResultType, p.NextCursor, p.TTLMs)
			}
			byURI := map[string]entry{}
			offered := map[string]bool{}
			table := map[string]oracle.Fixture{}
			for _, f := range adversarial.Fixtures() {
				table[f.ID] = f
			}
			for _, e := range p.Skills {
				byURI[e.URI] = e
				f := e.Meta.Fixture
				if f == nil {
					t.Errorf("%s carries no fixture", e.URI)
					continue
				}
				offered[f.ID] = true
				if !reflect.DeepEqual(*f, table[f.ID]) {
					t.Errorf("%s: _meta fixture %+v differs from the table", e.URI, *f)
				}
			}
			for _, f := range adversarial.Fixtures() {
				if !offered[f.ID] && f.ID != "adv-enumeration-exhaustion" {
					t.Errorf("%s is not offered on the first page", f.ID)
				}
			}
			manifest := func(uri string) map[string]skillsext.Resource {
				m := map[string]skillsext.Resource{}
				for _, r := range byURI[uri].Resources {
					m[r.URI] = r
				}
				return m
			}
			tester := mcp.Meta{oracle.TesterMetaKey: "serve-checks-" + v}

			// adv-frontmatter-mismatch: honest bytes, lying frontmatter.
			uri := "skill://adv-frontmatter-mismatch/SKILL.md"
			md := read(t, cs, uri, nil)
			doc, err := skill.Parse(md)
			if err != nil || manifest(uri)[uri].Digest != digest(md) {
				t.Fatalf("%s: %v", uri, err)
			}
			claimed, _ := json.Marshal(byURI[uri].Frontmatter)
			if desc, _ := doc.Frontmatter.Field("description"); bytes.Equal(desc, byURI[uri].Frontmatter["description"]) || len(claimed) == 0 {
				t.Errorf("%s: the frontmatter agrees", uri)
			}

			// adv-supporting-file-digest-swap: served, in the directory, not listed.
			helper := "skill://adv-supporting-file-digest-swap/scripts/helper.sh"
			read(t, cs, helper, nil)
			if _, listed := manifest("skill://adv-supporting-file-digest-swap/SKILL.md")[helper]; listed {
				t.Errorf("%s is in resources", helper)
			}
			if !strings.Contains(string(call(t, cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: "skill://adv-supporting-file-digest-swap/scripts"})), helper) {
				t.Errorf("%s is not in its directory", helper)
			}

			// adv-content-rotation: honest once, then rotated.
			uri = "skill://adv-content-rotation/SKILL.md"
			first, second := read(t, cs, uri, tester), read(t, cs, uri, tester)
			if digest(first) != manifest(uri)[uri].Digest || digest(second) == digest(first) || !bytes.Contains(second, []byte("ROTATED")) {
				t.Errorf("%s: reads %s then %s, listed %s", uri, digest(first), digest(second), manifest(uri)[uri].Digest)
			}

			// adv-allowed-tools-grant: the grant is in both.
			uri = "skill://adv-allowed-tools-grant/SKILL.md"
			if string(byURI[uri].Frontmatter["allowed-tools"]) != `"Bash Write"` || !bytes.Contains(read(t, cs, uri, nil), []byte("allowed-tools: Bash Write")) {
				t.Errorf("%s: no allowed-tools grant", uri)
			}

			// adv-nested-consent: the nested SKILL.md is in the enclosing manifest, and listed itself.
			nested := "skill://adv-nested-consent/nested-danger/SKILL.md"
			if _, ok := manifest("skill://adv-nested-consent/SKILL.md")[nested]; !ok || byURI[nested].URI == "" {
				t.Errorf("%s: not in the enclosing manifest or not listed", nested)
			}

			// adv-cross-server-read: a foreign URI in the body.
			if !bytes.Contains(read(t, cs, "skill://adv-cross-server-read/SKILL.md", nil), []byte("skill://other-server.example/exfil/secrets.md")) {
				t.Error("adv-cross-server-read: no foreign URI")
			}

			// adv-directory-walk-escape: escaping children, not served.
			dir := string(call(t, cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: "skill://adv-directory-walk-escape"}))
			for _, u := range table["adv-directory-walk-escape"].Also {
				if !strings.Contains(dir, u) {
					t.Errorf("the root listing lacks %s: %s", u, dir)
				}
				if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: u}); code(err) != -32602 {
					t.Errorf("reading %s: %v, want -32602", u, err)
				}
			}

			// adv-name-collision: one name, two URIs.
			for _, u := range table["adv-name-collision"].URIs() {
				if string(byURI[u].Frontmatter["name"]) != `"review-staged"` {
					t.Errorf("%s: name %s", u, byURI[u].Frontmatter["name"])
				}
			}

			// adv-file-url: both forms listed.
			for _, u := range table["adv-file-url"].URIs() {
				if _, ok := byURI[u]; !ok || !strings.HasPrefix(u, "file:") {
					t.Errorf("%s is not listed", u)
				}
			}

			// adv-oversized-payload and adv-walk-budget: over 16 MiB, honest.
			var total int64
			for _, r := range byURI["skill://adv-walk-budget/SKILL.md"].Resources {
				total += r.Size
			}
			uri = "skill://adv-oversized-payload/SKILL.md"
			if r := manifest(uri)[uri]; r.Size != skillsext.MaxTotalBytes+1 || total != 3*(9<<20)+manifest("skill://adv-walk-budget/SKILL.md")["skill://adv-walk-budget/SKILL.md"].Size {
				t.Errorf("sizes: oversized %d, walk budget %d", r.Size, total)
			}
			if v == "2026-07-28" {
				// An SDK client with its default 16 MiB frame limit refuses
				// the read; one with a larger limit gets the listed bytes.
				if _, err := connect(t, ms, v).ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
					t.Errorf("%s: read within the default frame limit", uri)
				}
				if big := read(t, connectLarge(t, ms), uri, nil); digest(big) != manifest(uri)[uri].Digest {
					t.Errorf("%s: digest mismatch", uri)
				}
			}

			// adv-enumeration-exhaustion: fresh cursors forever; the tail is served.
			seen := map[string]bool{}
			cursor := p.NextCursor
			for i := 1; i <= 30; i++ {
				tp := listPage(t, cs, cursor)
				if len(tp.Skills) != 1 || tp.NextCursor == "" || seen[tp.NextCursor] {
					t.Fatalf("tail page %d: %+v", i, tp)
				}
				seen[tp.NextCursor] = true
				cursor = tp.NextCursor
				if i == 30 {
					u := tp.Skills[0].URI
					read(t, cs, u, nil)
					call(t, cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: u})
				}
			}
			if _, err := mcp.CallCustomMethod[*skillsext.ListSkillsParams, *rawResult](context.Background(), cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: "bogus"}); code(err) != -32602 {
				t.Errorf("a bogus cursor: %v", err)
			}
		})
	}
}

// TestArchives reads skill://index.json and checks that every archive is
// served with the digest the index gives and holds its hostile entries.
func TestArchives(t *testing.T) {
	cs := connect(t, adversarial.New(nil), "2026-07-28")
	var index struct {
		Skills []struct {
			URL         string          `json:"url"`
			Digest      string          `json:"digest"`
			Frontmatter json.RawMessage `json:"frontmatter"`
			Archives    []struct{ URL, MIMEType, Digest string }
		} `json:"skills"`
	}
	if err := json.Unmarshal(read(t, cs, "skill://index.json", nil), &index); err != nil {
		t.Fatal(err)
	}
	archives := map[string][]byte{}
	for _, e := range index.Skills {
		if len(e.Archives) != 1 {
			t.Fatalf("entry %+v", e)
		}
		a := e.Archives[0]
		data := read(t, cs, a.URL, nil)
		if digest(data) != a.Digest {
			t.Errorf("%s: digest %s, index %s", a.URL, digest(data), a.Digest)
		}
		archives[a.URL] = data
	}
	for _, f := range adversarial.Fixtures() {
		if f.Deferred {
			if _, ok := archives[f.URI]; !ok {
				t.Errorf("%s: %s is not in the index", f.ID, f.URI)
			}
		}
	}
	type member struct {
		typ  byte
		mode int64
		link string
		size int64
		sum  string
	}
	untar := func(uri string) map[string]member {
		gz, err := gzip.NewReader(bytes.NewReader(archives[uri]))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(gz)
		out := map[string]member{}
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
				t.Fatalf("%s: %v", uri, err)
			}
			hs := sha256.New()
			n, _ := io.Copy(hs, tr)
			out[h.Name] = member{h.Typeflag, h.Mode, h.Linkname, n, "sha256:" + hex.EncodeToString(hs.Sum(nil))}
		}
	}
	m := untar("skill://adv-archive-traversal.tar.gz")
	if _, ok := m["../../skills-mcp-canary-traversal.txt"]; !ok {
		t.Errorf("traversal: %v", m)
	}
	if _, ok := m["/tmp/skills-mcp-canary-absolute.txt"]; !ok {
		t.Errorf("absolute: %v", m)
	}
	if m := untar("skill://adv-archive-windows-paths.tar.gz"); len(m) != 4 {
		t.Errorf("windows paths: %v", m)
	}
	if m := untar("skill://adv-archive-symlink-escape.tar.gz")["id_rsa.example"]; m.typ != tar.TypeSymlink || !strings.HasPrefix(m.link, "../") {
		t.Errorf("symlink: %+v", m)
	}
	if m := untar("skill://adv-archive-hardlink-escape.tar.gz")["creds.example"]; m.typ != tar.TypeLink {
		t.Errorf("hard link: %+v", m)
	}
	if m := untar("skill://adv-archive-setuid.tar.gz")["tools/escalate"]; m.mode != 0o4755 {
		t.Errorf("setuid: %+v", m)
	}
	if m := untar("skill://adv-archive-non-regular.tar.gz")["pipe.fifo"]; m.typ != tar.TypeFifo {
		t.Errorf("fifo: %+v", m)
	}
	if m := untar("skill://adv-archive-normalization-collision.tar.gz"); m["SKILL.md"].sum == m["Skill.md"].sum || m["Skill.md"].size == 0 {
		t.Errorf("collision: %+v", m)
	}
	if m := untar("skill://adv-decompression-bomb.tar.gz")["bomb.txt"]; m.size != 128<<20 || len(archives["skill://adv-decompression-bomb.tar.gz"]) > 1<<20 {
		t.Errorf("bomb: %d bytes from %d", m.size, len(archives["skill://adv-decompression-bomb.tar.gz"]))
	}
	if m := untar("skill://adv-cumulative-budget-3.tar.gz")["data.bin"]; m.size != 45<<20 {
		t.Errorf("cumulative part: %+v", m)
	}
	if m := untar("skill://adv-live-read-divergence.tar.gz")["scripts/helper.sh"]; m.sum == digest(read(t, cs, "skill://adv-live-read-divergence/scripts/helper.sh", nil)) {
		t.Error("live-read divergence: the archive copy equals the live one")
	}
	for _, u := range []string{"skill://adv-zip-traversal.zip", "skill://adv-zip-symlink-escape.zip"} {
		zr, err := zip.NewReader(bytes.NewReader(archives[u]), int64(len(archives[u])))
		if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
			t.Fatal(err)
		}
		var hostile bool
		for _, f := range zr.File {
			hostile = hostile || strings.HasPrefix(f.Name, "../") || f.Mode()&fs.ModeSymlink != 0
		}
		if !hostile {
			t.Errorf("%s holds nothing hostile", u)
		}
	}
	for _, team := range []string{"billing", "support"} {
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://adv-archive-collision/" + team + "/refunds/SKILL.md"}); code(err) != -32602 {
			t.Errorf("the archive-only %s refunds SKILL.md is readable: %v", team, err)
		}
	}
}

// TestDeterministic: two servers serve the same bytes.
func TestDeterministic(t *testing.T) {
	a, b := connect(t, adversarial.New(nil), "2026-07-28"), connect(t, adversarial.New(nil), "2026-07-28")
	pa := call(t, a, skillsext.MethodList, &skillsext.ListSkillsParams{})
	pb := call(t, b, skillsext.MethodList, &skillsext.ListSkillsParams{})
	// The SDK adds the same serverInfo to both; the rest must be equal.
	if !bytes.Equal(pa, pb) {
		t.Error("first pages differ")
	}
	for _, u := range []string{"skill://index.json", "skill://adv-zip-symlink-escape.zip", "skill://adv-decompression-bomb.tar.gz"} {
		if !bytes.Equal(read(t, a, u, nil), read(t, b, u, nil)) {
			t.Errorf("%s differs between servers", u)
		}
	}
}

// TestRotationScopes: reads are counted per session, per tester id, and
// over stateless HTTP per client identity; concurrent testers do not see
// each other's reads.
func TestRotationScopes(t *testing.T) {
	const uri = "skill://adv-content-rotation/SKILL.md"
	ms := adversarial.New(nil)
	honest := read(t, connect(t, ms, "2026-07-28"), uri, nil)
	rotated := func(b []byte) bool { return !bytes.Equal(b, honest) }

	t.Run("sessions", func(t *testing.T) {
		s1, s2 := connect(t, ms, "2025-11-25"), connect(t, ms, "2025-11-25")
		if rotated(read(t, s1, uri, nil)) || rotated(read(t, s2, uri, nil)) {
			t.Error("a first read was rotated")
		}
		if !rotated(read(t, s1, uri, nil)) || !rotated(read(t, s2, uri, nil)) {
			t.Error("a second read was honest")
		}
	})
	t.Run("tester-id", func(t *testing.T) {
		x := mcp.Meta{oracle.TesterMetaKey: "x"}
		if rotated(read(t, connect(t, ms, "2025-11-25"), uri, x)) {
			t.Error("first read of tester x rotated")
		}
		if !rotated(read(t, connect(t, ms, "2025-11-25"), uri, x)) {
			t.Error("second read of tester x, on another session, honest")
		}
		if rotated(read(t, connect(t, ms, "2025-11-25"), uri, mcp.Meta{oracle.TesterMetaKey: "y"})) {
			t.Error("tester y sees tester x's reads")
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 8 {
			cs := connect(t, ms, "2025-11-25")
			wg.Go(func() {
				r1, err1 := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
				r2, err2 := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
				if err1 != nil || err2 != nil || rotated([]byte(r1.Contents[0].Text)) || !rotated([]byte(r2.Contents[0].Text)) {
					t.Errorf("a concurrent session saw %v %v", err1, err2)
				}
			})
		}
		wg.Wait()
	})
	t.Run("stateless-http", func(t *testing.T) {
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, &mcp.StreamableHTTPOptions{Stateless: true}))
		defer ts.Close()
		dial := func(t *testing.T, v, header string) *mcp.ClientSession {
			hc := &http.Client{Transport: headerTransport{header}}
			cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}
		// 2026-07-28 requests carry clientInfo: the client is the scope.
		cs := dial(t, "2026-07-28", "")
		if rotated(read(t, cs, uri, nil)) || !rotated(read(t, cs, uri, nil)) {
			t.Error("2026-07-28 over stateless HTTP: want honest, then rotated")
		}
		// A tester header is a scope of its own.
		cs = dial(t, "2026-07-28", "alice")
		if rotated(read(t, cs, uri, nil)) || !rotated(read(t, cs, uri, nil)) {
			t.Error("tester header: want honest, then rotated")
		}
		// 2025-11-25 over stateless HTTP has no scope: always honest.
		cs = dial(t, "2025-11-25", "")
		for range 3 {
			if rotated(read(t, cs, uri, nil)) {
				t.Error("2025-11-25 over stateless HTTP without a tester id: rotated")
			}
		}
	})
}

// headerTransport sets the tester header when it is not empty.
type headerTransport struct{ tester string }

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if h.tester != "" {
		req = req.Clone(req.Context())
		req.Header.Set(oracle.TesterHeader, h.tester)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestBenign: every command a fixture asks for only writes the canary to
// the marker file, and nothing fetches, deletes or escalates.
func TestBenign(t *testing.T) {
	cs := connect(t, adversarial.New(nil), "2025-11-25")
	redirect := regexp.MustCompile(`>\s*(\S+)\s*$`)
	var checked int
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Size == 0 || r.Size > 64<<10 {
			continue
		}
		body := string(read(t, cs, r.URI, mcp.Meta{oracle.TesterMetaKey: "benign"}))
		for _, bad := range []string{"rm -", "curl ", "wget ", "sudo ", "chmod ", "| sh", "base64 -d"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", r.URI, bad)
			}
		}
		for line := range strings.SplitSeq(body, "\n") {
			if m := redirect.FindStringSubmatch(line); m != nil && strings.Contains(line, "echo ") && m[1] != adversarial.MarkerFile {
				t.Errorf("%s writes to %s: %q", r.URI, m[1], line)
			}
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d files checked", checked)
	}
}
