package endpoint_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	hubops "github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/endpoint"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/storetest"
)

// lockedBuffer is a log destination the test reads while the server writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// get fetches url and returns the status, body and headers.
func get(t *testing.T, url string) (int, []byte, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

// indexEntry is an entry of the 0.2.0 index.
type indexEntry struct{ Name, Type, Description, URL, Digest string }

// listed returns the 0.2.0 index at base, by name, or nil with the status
// when it is not answered.
func listed(t *testing.T, base string) (map[string]indexEntry, int) {
	t.Helper()
	st, body, _ := get(t, base+"/.well-known/agent-skills/index.json")
	if st != http.StatusOK {
		return nil, st
	}
	var ix struct{ Skills []indexEntry }
	if err := json.Unmarshal(body, &ix); err != nil {
		t.Fatalf("index: %v\n%s", err, body)
	}
	out := map[string]indexEntry{}
	for _, e := range ix.Skills {
		out[e.Name] = e
	}
	return out, st
}

func indexCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(body, &e)
	return e.Error.Code
}

// A project's well-known index: opened by an index token in its URL while
// an administrator has it on and the project runs; its bound versions'
// served files, byte for byte, never a withheld one; it follows the
// bindings; every other capability gets one answer; the capability opens
// nothing else and never reaches the log.
func TestProjectIndex(t *testing.T) {
	backends(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var logs lockedBuffer
		h := startHub(t, db, endpoint.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		pdfFiles := storetest.Tree{
			"scripts/extract.py": "x:print('pdf')\n",
			"references/crlf.md": "a\r\nb\r\n",
			"assets/logo.bin":    "\x00\x01\xff binary",
			".env":               "SECRET=withheld\n", // a dotfile: the catalog withholds it
		}
		pdf := install(t, db, "pdf", "Reads PDF files.", pdfFiles)
		solo := install(t, db, "solo", "A skill that is one file.", nil)
		xlsx := install(t, db, "xlsx", "Reads spreadsheets.", storetest.Tree{"notes.md": "n\n"})
		for _, id := range []string{"alpha", "beta"} {
			if err := db.CreateProject(ctx, id, id); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range []store.Version{pdf, solo} {
			if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
				t.Fatal(err)
			}
		}
		it, capability, err := db.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "alpha"})
		if err != nil {
			t.Fatal(err)
		}
		base := h.srv.URL + hubops.IndexPath("alpha", capability)

		// Off until an administrator turns it on.
		st, body, _ := get(t, base+"/.well-known/agent-skills/index.json")
		if st != http.StatusNotFound || indexCode(t, body) != "index_off" {
			t.Fatalf("index while off: %d %s", st, body)
		}
		if _, err := db.SetWellKnown(ctx, "alpha", true); err != nil {
			t.Fatal(err)
		}
		var ix map[string]indexEntry
		waitFor(t, "the index on", func() bool { ix, st = listed(t, base); return st == http.StatusOK })
		if got := slices.Sorted(maps.Keys(ix)); !slices.Equal(got, []string{"pdf", "solo"}) {
			t.Fatalf("listed %v, want pdf and solo", got)
		}
		if ix["solo"].Type != "skill-md" || ix["pdf"].Type != "archive" {
			t.Errorf("types: %+v", ix)
		}
		// Every artifact has its digest; the archive holds the served files
		// of the version, byte for byte, and not the withheld one.
		for name, e := range ix {
			st, data, hd := get(t, base+"/.well-known/agent-skills/"+e.URL)
			if sum := sha256.Sum256(data); st != http.StatusOK || "sha256:"+hex.EncodeToString(sum[:]) != e.Digest {
				t.Errorf("%s: %d, digest differs from the index's %s", name, st, e.Digest)
			}
			if hd.Get("Cache-Control") != "private, no-cache" {
				t.Errorf("%s: Cache-Control %q, want private: its URL is a credential", name, hd.Get("Cache-Control"))
			}
		}
		_, zdata, _ := get(t, base+"/.well-known/agent-skills/pdf.zip")
		zr, err := zip.NewReader(bytes.NewReader(zdata), int64(len(zdata)))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"SKILL.md": skillMD("pdf", "Reads PDF files.")}
		for p, c := range pdfFiles {
			if p != ".env" {
				want[p] = strings.TrimPrefix(c, "x:")
			}
		}
		got := map[string]string{}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			got[f.Name] = string(b)
		}
		if !maps.Equal(got, want) {
			t.Errorf("pdf.zip holds %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		// The older index: files listed and served one by one, the
		// withheld one neither.
		_, v1, _ := get(t, base+"/.well-known/skills/index.json")
		if !bytes.Contains(v1, []byte(`"scripts/extract.py"`)) || bytes.Contains(v1, []byte(".env")) {
			t.Errorf("older index: %s", v1)
		}
		if st, b, _ := get(t, base+"/.well-known/skills/pdf/references/crlf.md"); st != http.StatusOK || string(b) != "a\r\nb\r\n" {
			t.Errorf("a file of the older index: %d %q", st, b)
		}
		if st, _, _ := get(t, base+"/.well-known/skills/pdf/.env"); st != http.StatusNotFound {
			t.Errorf("the withheld file: %d, want 404", st)
		}

		// It follows the bindings.
		if _, err := db.BindVersion(ctx, "alpha", xlsx.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UnbindVersion(ctx, "alpha", solo.ID); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the index after a bind and an unbind", func() bool {
			ix, _ = listed(t, base)
			return slices.Equal(slices.Sorted(maps.Keys(ix)), []string{"pdf", "xlsx"})
		})

		// One answer for every capability that does not open it.
		_, other, err := db.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "beta"})
		if err != nil {
			t.Fatal(err)
		}
		ptoken := projectToken(t, db, "alpha")
		_, admin, err := db.CreateToken(ctx, store.NewToken{Kind: store.AdminToken, Scope: store.ScopeAdmin})
		if err != nil {
			t.Fatal(err)
		}
		flipped := []byte(capability)
		flipped[len(flipped)-1] ^= 1
		var refusal []byte
		for what, u := range map[string]string{
			"another project's capability":  h.srv.URL + hubops.IndexPath("alpha", other),
			"a project token":               h.srv.URL + hubops.IndexPath("alpha", ptoken),
			"an admin token":                h.srv.URL + hubops.IndexPath("alpha", admin),
			"a wrong secret":                h.srv.URL + hubops.IndexPath("alpha", string(flipped)),
			"garbage":                       h.srv.URL + "/p/alpha/i/hello",
			"the capability, wrong project": h.srv.URL + hubops.IndexPath("beta", capability),
			"no such project":               h.srv.URL + hubops.IndexPath("nope", capability),
		} {
			st, body, _ := get(t, u+"/.well-known/agent-skills/index.json")
			if st != http.StatusNotFound || indexCode(t, body) != "index_not_found" {
				t.Errorf("%s: %d %s", what, st, body)
			}
			if refusal != nil && !bytes.Equal(body, refusal) {
				t.Errorf("%s: %s, unlike the other refusals: %s", what, body, refusal)
			}
			refusal = body
		}
		// The capability opens no endpoint.
		if st, m, _ := rpc(t, h.url("alpha"), capability, "2026-07-28", "tools/list", map[string]any{}); st != http.StatusForbidden || errCode(m) != "wrong_token_kind" {
			t.Errorf("the capability as a bearer token: %d %v", st, m)
		}

		// A paused project answers as its endpoint does.
		if _, err := db.PauseProject(ctx, "alpha"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the index paused", func() bool {
			st, body, _ := get(t, base+"/.well-known/agent-skills/index.json")
			return st == http.StatusForbidden && indexCode(t, body) == "project_paused"
		})
		if _, err := db.ResumeProject(ctx, "alpha"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the index resumed", func() bool { _, st := listed(t, base); return st == http.StatusOK })
		// Off again: the capability stays, the index is gone.
		if _, err := db.SetWellKnown(ctx, "alpha", false); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the index off", func() bool {
			st, body, _ := get(t, base+"/.well-known/agent-skills/index.json")
			return st == http.StatusNotFound && indexCode(t, body) == "index_off"
		})
		if _, err := db.SetWellKnown(ctx, "alpha", true); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the index on again", func() bool { _, st := listed(t, base); return st == http.StatusOK })
		// Revoked: refused at once in this process.
		if _, err := db.RevokeToken(ctx, it.ID); err != nil {
			t.Fatal(err)
		}
		h.e.TokenRevoked(it.ID)
		if st, body, _ := get(t, base+"/.well-known/agent-skills/index.json"); st != http.StatusNotFound || !bytes.Equal(body, refusal) {
			t.Errorf("a revoked capability: %d %s", st, body)
		}

		var served int64
		for _, p := range h.e.Stats().Projects {
			if p.ID == "alpha" {
				served = p.IndexRequests
			}
		}
		if served < 10 {
			t.Errorf("IndexRequests = %d", served)
		}
		// Nothing logged the capability: the logs name tokens by id.
		secretPart := capability[len("smcp_i_")+16:]
		if strings.Contains(logs.String(), secretPart) {
			t.Errorf("the capability reached the log:\n%s", logs.String())
		}
	})
}

// The index's file names may escape in the URL; the project's id and the
// capability are what they are decoded, and an escaped path elsewhere is
// still no endpoint.
func TestProjectIndexPaths(t *testing.T) {
	ctx := context.Background()
	db := openStore(t, store.Options{Dir: t.TempDir()})
	h := startHub(t, db, endpoint.Options{})
	v := install(t, db, "docs", "Has odd names.", storetest.Tree{"notes (draft).md": "draft\n", "références/naïve.md": "é\n"})
	if err := db.CreateProject(ctx, "alpha", "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BindVersion(ctx, "alpha", v.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetWellKnown(ctx, "alpha", true); err != nil {
		t.Fatal(err)
	}
	_, capability, err := db.CreateToken(ctx, store.NewToken{Kind: store.IndexToken, ProjectID: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	base := h.srv.URL + hubops.IndexPath("alpha", capability)
	for _, p := range []string{"notes%20(draft).md", "notes (draft).md", "r%C3%A9f%C3%A9rences/na%C3%AFve.md"} {
		if st, _, _ := get(t, base+"/.well-known/skills/docs/"+p); st != http.StatusOK {
			t.Errorf("%s: %d", p, st)
		}
	}
	for _, u := range []string{
		h.srv.URL + "/p/alpha%2Fx/i/" + capability + "/.well-known/skills/index.json",
		h.srv.URL + "/p/alpha/i/",
		h.srv.URL + "/p/alpha/i",
	} {
		if st, _, _ := get(t, u); st != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", u, st)
		}
	}
	// The URL itself, without the index below it, says where it is.
	if st, body, _ := get(t, base); st != http.StatusNotFound || !bytes.Contains(body, []byte(".well-known/agent-skills/index.json")) {
		t.Errorf("the index URL itself: %d %s", st, body)
	}
}
