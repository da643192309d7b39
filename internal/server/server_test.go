package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/server"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

var versions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

func library() fstest.MapFS {
	return fstest.MapFS{
		"code-review/SKILL.md":                {Data: []byte("---\nname: code-review\ndescription: Review code using the team's checklist.\n---\n\n# Code review\n\nRead `references/checklist.md`, then review the diff.\n")},
		"code-review/references/checklist.md": {Data: []byte("# Review checklist\n\nCheck correctness, tests, and compatibility.\n")},
		"ops/deploy/SKILL.md":                 {Data: []byte("---\nname: deploy\ndescription: Deploy a service.\nmetadata:\n  zeta: \"1\"\n  alpha: \"2\"\n---\nDeploy.\n")},
		"ops/deploy/rollback/SKILL.md":        {Data: []byte("---\nname: rollback\ndescription: Roll back a deploy.\n---\nRoll back.\n")},
		"ops/deploy/assets/icon.bin":          {Data: []byte{0x89, 'P', 'N', 'G', 0xff, 0x00}},
		"ops/deploy/refs/a/b/deep.md":         {Data: []byte("deep\r\n")},
	}
}

// connect starts a server on the library and returns a client session at
// protocol version v.
func connect(t *testing.T, v string, opts *server.Options) *mcp.ClientSession {
	t.Helper()
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: library(), Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *rawResult](c, skillsext.MethodList),
		mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *rawResult](c, skillsext.MethodGet),
		mcp.AddSendingCustomMethod[*skillsext.ReadDirectoryParams, *rawResult](c, skillsext.MethodReadDirectory),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return session(t, server.New(catalog.NewStore(snap), opts), c, v)
}

// session connects client c (a plain client if nil) to ms over in-memory
// transports at protocol version v ("" for the SDK's latest). Both ends
// close when the test ends.
func session(t *testing.T, ms *mcp.Server, c *mcp.Client, v string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	if c == nil {
		c = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	}
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// rawResult keeps the whole result object so tests see exactly what was
// sent.
type rawResult struct {
	mcp.ResultBase
	fields map[string]json.RawMessage
}

func (r *rawResult) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &r.fields) }

func call[P any, PP interface {
	*P
	mcp.Params
}](t *testing.T, cs *mcp.ClientSession, method string, p PP) (map[string]json.RawMessage, error) {
	t.Helper()
	res, err := mcp.CallCustomMethod[PP, *rawResult](context.Background(), cs, method, p)
	if err != nil {
		return nil, err
	}
	return res.fields, nil
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

func code(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func TestCapabilities(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, v, nil)
			caps := cs.InitializeResult().Capabilities
			if caps.Resources == nil || !caps.Resources.ListChanged {
				t.Error("resources capability with listChanged missing")
			}
			got, _ := json.Marshal(caps.Extensions[skillsext.ExtensionID])
			if string(got) != `{"directoryRead":true}` {
				t.Errorf("extension settings = %s", got)
			}
			if !strings.Contains(cs.InitializeResult().Instructions, "3 Agent Skills") {
				t.Errorf("instructions do not count the skills: %q", cs.InitializeResult().Instructions)
			}
		})
	}
}

func TestListGetRead(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, v, &server.Options{PageSize: 1})
			var entries []skillsext.Skill
			cursor := ""
			seen := map[string]bool{}
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("listing does not terminate")
				}
				res, err := call(t, cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if got := string(res["resultType"]); got != `"complete"` {
					t.Errorf("resultType = %s", got)
				}
				_, hasTTL := res["ttlMs"]
				if want := v >= "2026-07-28"; hasTTL != want || (want && string(res["cacheScope"]) != `"public"`) {
					t.Errorf("cache fields present = %v, want %v", hasTTL, want)
				}
				page := decode[[]skillsext.Skill](t, res["skills"])
				if len(page) != 1 {
					t.Fatalf("page of %d entries with page size 1", len(page))
				}
				if seen[page[0].URI] {
					t.Fatalf("%s listed twice", page[0].URI)
				}
				seen[page[0].URI] = true
				entries = append(entries, page...)
				if res["nextCursor"] == nil {
					break
				}
				cursor = decode[string](t, res["nextCursor"])
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.URI)
			}
			want := []string{"skill://code-review/SKILL.md", "skill://ops/deploy/SKILL.md", "skill://ops/deploy/rollback/SKILL.md"}
			if !slices.Equal(got, want) {
				t.Fatalf("listed %v, want %v", got, want)
			}
			deploy := entries[1]
			if string(deploy.Frontmatter) != `{"name":"deploy","description":"Deploy a service.","metadata":{"zeta":"1","alpha":"2"}}` {
				t.Errorf("frontmatter not verbatim in source order: %s", deploy.Frontmatter)
			}
			// Every listed file reads back with the published size and digest.
			for _, e := range entries {
				for _, r := range e.Resources.List {
					res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: r.URI})
					if err != nil {
						t.Fatalf("read %s: %v", r.URI, err)
					}
					c := res.Contents[0]
					data := []byte(c.Text)
					if c.Blob != nil {
						data = c.Blob
					}
					sum := sha256.Sum256(data)
					if d := "sha256:" + hex.EncodeToString(sum[:]); d != r.Digest || int64(len(data)) != r.Size {
						t.Errorf("%s: read %d bytes %s, manifest says %d %s", r.URI, len(data), d, r.Size, r.Digest)
					}
					if strings.HasSuffix(r.URI, ".bin") && c.Blob == nil {
						t.Errorf("%s: binary sent as text", r.URI)
					}
				}
			}
			// skills/get echoes the URI and matches the listed entry.
			res, err := call(t, cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: "skill://ops/deploy/rollback/SKILL.md"})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := res["nextCursor"]; ok {
				t.Error("skills/get carries a cursor")
			}
			got1 := decode[skillsext.Skill](t, res["skill"])
			if got1.URI != "skill://ops/deploy/rollback/SKILL.md" {
				t.Errorf("skills/get uri = %s", got1.URI)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	cs := connect(t, "2026-07-28", nil)
	ctx := context.Background()
	for _, uri := range []string{
		"skill://missing/SKILL.md",
		"skill://code-review/references/checklist.md",
		"skill://code-review",
		"skill://../etc/SKILL.md",
		"file:///etc/passwd",
	} {
		_, err := call(t, cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: uri})
		if code(err) != -32602 {
			t.Errorf("skills/get %s: %v, want -32602", uri, err)
		}
	}
	for _, uri := range []string{"skill://code-review", "skill://missing/x.md", "skill://code-review/../../secret"} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if code(err) != -32602 {
			t.Errorf("resources/read %s: %v, want -32602", uri, err)
		}
	}
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://code-review"})
	if err == nil || !strings.Contains(err.Error(), "resources/directory/read") {
		t.Errorf("reading a directory should point at resources/directory/read: %v", err)
	}
	for _, uri := range []string{"skill://code-review/SKILL.md", "skill://nothing"} {
		_, err := call(t, cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: uri})
		if code(err) != -32602 {
			t.Errorf("directory read %s: %v, want -32602", uri, err)
		}
	}
	if _, err := call(t, cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: "garbage!"}); code(err) != -32602 {
		t.Errorf("bad cursor: %v, want -32602", err)
	}
}

func TestDirectoryRead(t *testing.T) {
	cs := connect(t, "2026-07-28", &server.Options{PageSize: 1})
	var all []*mcp.Resource
	cursor := ""
	for {
		res, err := call(t, cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: "skill://ops/deploy", Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, decode[[]*mcp.Resource](t, res["resources"])...)
		if res["nextCursor"] == nil {
			break
		}
		cursor = decode[string](t, res["nextCursor"])
	}
	var got []string
	for _, r := range all {
		got = append(got, r.Name+"|"+r.MIMEType)
	}
	want := []string{"deploy|text/markdown", "assets|inode/directory", "refs|inode/directory", "rollback|inode/directory"}
	if !slices.Equal(got, want) {
		t.Errorf("children = %v, want %v", got, want)
	}
}

func TestResourcesList(t *testing.T) {
	cs := connect(t, "2025-11-25", nil)
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 3 {
		t.Fatalf("got %d resources, want 3", len(res.Resources))
	}
	r := res.Resources[0]
	if r.URI != "skill://code-review/SKILL.md" || r.Name != "code-review" || r.MIMEType != "text/markdown" || r.Description == "" {
		t.Errorf("resource = %+v", r)
	}
	tpl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 {
		t.Errorf("templates = %v, %v", tpl, err)
	}
}

func TestListingAcrossSwap(t *testing.T) {
	lib := func(names ...string) *catalog.Snapshot {
		fsys := fstest.MapFS{}
		for _, n := range names {
			fsys[n+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + n + "\ndescription: Skill " + n + ".\n---\n")}
		}
		snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: fsys, Kind: "test"}}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	store := catalog.NewStore(lib("a", "b", "c", "d"))
	ms := server.New(store, &server.Options{PageSize: 2})
	ct, st := mcp.NewInMemoryTransports()
	ss, _ := ms.Connect(context.Background(), st, nil)
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *skillsext.ListSkillsResult](c, skillsext.MethodList)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list := func(cursor string) *skillsext.ListSkillsResult {
		res, err := mcp.CallCustomMethod[*skillsext.ListSkillsParams, *skillsext.ListSkillsResult](context.Background(), cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := list("")
	// The catalog changes between pages: a skill before the cursor is added,
	// one after it removed.
	store.Swap(lib("a", "aa", "b", "d"))
	second := list(first.NextCursor)
	var got []string
	for _, s := range append(first.Skills, second.Skills...) {
		got = append(got, s.URI)
	}
	want := []string{"skill://a/SKILL.md", "skill://b/SKILL.md", "skill://d/SKILL.md"}
	if !slices.Equal(got, want) || second.NextCursor != "" {
		t.Errorf("listing across a swap = %v (next %q), want %v", got, second.NextCursor, want)
	}
}

// A server on a pending store answers the handshake at once and holds
// catalog requests until the first scan is in; they never see an empty
// catalog.
func TestPendingStore(t *testing.T) {
	store := catalog.NewPendingStore()
	n := new(server.Notifier)
	cs := session(t, server.New(store, &server.Options{Name: "later", Notifier: n}), nil, "")
	ctx := context.Background()
	instr := cs.InitializeResult().Instructions
	if !strings.Contains(instr, "later serves Agent Skills") || strings.Contains(instr, " 0 ") {
		t.Errorf("instructions before the scan: %q", instr)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list waited for the scan or failed: %v", err)
	}

	listed := make(chan *mcp.ListResourcesResult, 1)
	go func() {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Error(err)
		}
		listed <- res
	}()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := cs.ReadResource(short, &mcp.ReadResourceParams{URI: "skill://code-review/SKILL.md"})
	cancel()
	if err == nil {
		t.Error("a read was answered before the first scan")
	}
	snap, err := catalog.Scan(ctx, []*catalog.Library{{FS: library(), Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	store.Swap(snap)
	n.CatalogReady()
	select {
	case res := <-listed:
		if len(res.Resources) != snap.Len() {
			t.Errorf("listed %d resources after the scan, want %d", len(res.Resources), snap.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("resources/list still waiting after the scan")
	}
	if got := n.Instructions(); !strings.Contains(got, "serves 3 Agent Skills") {
		t.Errorf("instructions after the scan: %q", got)
	}

	// Instructions kept from an earlier run are sent while pending.
	cs2 := session(t, server.New(catalog.NewPendingStore(), &server.Options{PendingInstructions: "kept text"}), nil, "")
	if got := cs2.InitializeResult().Instructions; got != "kept text" {
		t.Errorf("pending instructions = %q", got)
	}
}

// Files whose names hold spaces, non-ASCII letters or URI delimiters are
// listed under escaped URIs, and every listed URI reads back through the
// SDK's resource template, escaped as listed or not; folder listings name
// the files as they are on disk.
func TestNamesThatNeedEscapes(t *testing.T) {
	lib := fstest.MapFS{
		"My Tools/tool/SKILL.md":          {Data: []byte("---\nname: tool\ndescription: A tool.\n---\nBody.\n")},
		"My Tools/tool/refs/my notes.md":  {Data: []byte("notes\n")},
		"My Tools/tool/refs/café.md":      {Data: []byte("café\n")},
		"My Tools/tool/refs/a+b[1]#2?.md": {Data: []byte("odd\n")},
		"My Tools/tool/refs/100%.md":      {Data: []byte("percent\n")},
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: lib, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*skillsext.ReadDirectoryParams, *rawResult](c, skillsext.MethodReadDirectory); err != nil {
		t.Fatal(err)
	}
	cs := session(t, server.New(catalog.NewStore(snap), nil), c, "")
	sk := snap.Skills()[0]
	if sk.URI != "skill://My%20Tools/tool/SKILL.md" {
		t.Errorf("skill URI = %s", sk.URI)
	}
	var uris []string
	for _, f := range sk.Files {
		uris = append(uris, f.URI)
		if _, err := skillsext.ParseURI(f.URI); err != nil {
			t.Errorf("listed URI %s does not parse: %v", f.URI, err)
		}
	}
	want := []string{
		"skill://My%20Tools/tool/SKILL.md",
		"skill://My%20Tools/tool/refs/100%25.md",
		"skill://My%20Tools/tool/refs/a+b%5B1%5D%232%3F.md",
		"skill://My%20Tools/tool/refs/caf%C3%A9.md",
		"skill://My%20Tools/tool/refs/my%20notes.md",
	}
	if !slices.Equal(uris, want) {
		t.Errorf("listed %q, want %q", uris, want)
	}
	for _, uri := range append(uris, "skill://My%20Tools/tool/refs/caf%c3%a9.md") {
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Errorf("read %s: %v", uri, err)
		}
	}
	res, err := call(t, cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: "skill://My%20Tools/tool/refs"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range decode[[]mcp.Resource](t, res["resources"]) {
		names = append(names, r.Name)
	}
	if want := []string{"100%.md", "a+b[1]#2?.md", "café.md", "my notes.md"}; !slices.Equal(names, want) {
		t.Errorf("folder listing names %q, want %q", names, want)
	}
}
