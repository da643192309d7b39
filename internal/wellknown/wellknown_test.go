package wellknown_test

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
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/wellknown"
)

// library writes files (path → content) under a new folder and returns it.
func library(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scan scans dir into a new snapshot of generation gen.
func scan(t testing.TB, dir string, gen uint64) *catalog.Snapshot {
	t.Helper()
	lib, err := catalog.OpenDirectory("", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{lib}, gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func md(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\r\nBody.\n"
}

// base is a library with a lone SKILL.md, a skill with files in folders
// (binary, empty, CRLF, non-ASCII names), a nested skill, a hidden skill
// and skills the index cannot list.
var base = map[string]string{
	"solo/SKILL.md":                 md("solo", "A skill that is one file."),
	"pdf/SKILL.md":                  md("pdf", "Reads PDF files."),
	"pdf/scripts/extract.py":        "print('x')\n",
	"pdf/references/empty.txt":      "",
	"pdf/references/crlf.md":        "a\r\nb\r\n",
	"pdf/assets/logo.bin":           "\x00\x01\xff\xfe binary",
	"pdf/références/naïve.md":       "non-ASCII name\n",
	"pdf/inner/SKILL.md":            md("inner", "A nested skill."),
	"hidden/SKILL.md":               "---\nname: hidden\ndescription: Only for people.\ndisable-model-invocation: true\n---\nbody\n",
	"Bad_Name/SKILL.md":             md("Bad_Name", "An invalid name."),
	"zother/solo/SKILL.md":          md("solo", "Same name as another skill, later by URI."),
	"long/SKILL.md":                 md("long", strings.Repeat("\U0001F600", 600)),
	"withheld/SKILL.md":             md("withheld", "A skill with a symlink."),
	"withheld/notes.md":             "kept\n",
	"withheld/.git/config":          "[core]\n",
	"withheld/references/dotdot..x": "two dots in a name\n",
}

func TestIndex(t *testing.T) {
	dir := library(t, base)
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "withheld", "link.md")); err != nil {
		t.Fatal(err)
	}
	store := catalog.NewStore(scan(t, dir, 1))
	srv := httptest.NewServer(wellknown.New(store, nil))
	defer srv.Close()

	var v2 struct {
		Schema string `json:"$schema"`
		Skills []struct{ Name, Type, Description, URL, Digest string }
	}
	getJSON(t, srv.URL+"/.well-known/agent-skills/index.json", &v2)
	if v2.Schema != wellknown.SchemaV2 {
		t.Errorf("$schema = %q", v2.Schema)
	}
	types := map[string]string{}
	for _, e := range v2.Skills {
		types[e.Name] = e.Type
		// The clients measure in UTF-16 code units.
		if n := len(utf16.Encode([]rune(e.Description))); n > wellknown.MaxDescription || n == 0 {
			t.Errorf("%s: description of %d UTF-16 units", e.Name, n)
		}
		// Every artifact has the digest the index names.
		data := get(t, srv.URL+"/.well-known/agent-skills/"+e.URL, http.StatusOK)
		if got := digest(data); got != e.Digest {
			t.Errorf("%s: artifact digest %s, index says %s", e.Name, got, e.Digest)
		}
	}
	want := map[string]string{"solo": "skill-md", "pdf": "archive", "inner": "skill-md", "hidden": "skill-md", "long": "skill-md", "withheld": "archive"}
	if !maps.Equal(want, types) {
		t.Errorf("listed skills %v, want %v", types, want)
	}

	// The archive holds the skill folder's served files, byte for byte.
	zr := readZip(t, get(t, srv.URL+"/.well-known/agent-skills/pdf.zip", http.StatusOK))
	wantFiles := map[string]string{}
	for name, data := range base {
		if rel, ok := strings.CutPrefix(name, "pdf/"); ok {
			wantFiles[rel] = data
		}
	}
	if !maps.Equal(wantFiles, zr) {
		t.Errorf("pdf.zip holds %q, want %q", zr, wantFiles)
	}
	// No symlink, no tool state in an archive.
	zw := readZip(t, get(t, srv.URL+"/.well-known/agent-skills/withheld.zip", http.StatusOK))
	if got := slices.Sorted(maps.Keys(zw)); !slices.Equal(got, []string{"SKILL.md", "notes.md", "references/dotdot..x"}) {
		t.Errorf("withheld.zip holds %q", got)
	}
	get(t, srv.URL+"/.well-known/agent-skills/withheld/link.md", http.StatusNotFound)
	get(t, srv.URL+"/.well-known/agent-skills/withheld/.git/config", http.StatusNotFound)
	get(t, srv.URL+"/.well-known/agent-skills/Bad_Name/SKILL.md", http.StatusNotFound)
	get(t, srv.URL+"/.well-known/agent-skills/pdf/../solo/SKILL.md", http.StatusNotFound)

	// The older index lists files, each served beside it; a skill with a
	// path those clients refuse is left out of it.
	var v1 struct {
		Skills []struct {
			Name, Description string
			Files             []string
		}
	}
	getJSON(t, srv.URL+"/.well-known/skills/index.json", &v1)
	names := []string{}
	for _, e := range v1.Skills {
		names = append(names, e.Name)
		for _, f := range e.Files {
			data := get(t, srv.URL+"/.well-known/skills/"+e.Name+"/"+f, http.StatusOK)
			if want := base[folderOf(e.Name)+f]; string(data) != want {
				t.Errorf("%s/%s: got %q, want %q", e.Name, f, data, want)
			}
		}
	}
	if want := []string{"hidden", "long", "pdf", "inner", "solo"}; !slices.Equal(names, want) {
		t.Errorf("v1 index lists %q, want %q", names, want)
	}
}

// folderOf maps a listed name to its folder in base.
func folderOf(name string) string {
	if name == "inner" {
		return "pdf/inner/"
	}
	return name + "/"
}

// The archive's bytes depend on the content alone: a second scan, a
// second handler and another file time give the same digest.
func TestArchiveDeterministic(t *testing.T) {
	dir := library(t, base)
	a := indexOf(t, wellknown.New(catalog.NewStore(scan(t, dir, 1)), &wellknown.Options{CacheBytes: -1}))
	if err := os.Chtimes(filepath.Join(dir, "pdf", "scripts", "extract.py"), timeZero, timeZero); err != nil {
		t.Fatal(err)
	}
	b := indexOf(t, wellknown.New(catalog.NewStore(scan(t, dir, 2)), nil))
	if !maps.Equal(a, b) {
		t.Errorf("two builds differ: %v, then %v", a, b)
	}
}

// The index follows the catalog: a changed skill gets a new digest and the
// index a new ETag; an unchanged ETag answers 304.
func TestIndexFollowsCatalog(t *testing.T) {
	dir := library(t, base)
	store := catalog.NewStore(scan(t, dir, 1))
	h := wellknown.New(store, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	url := srv.URL + "/.well-known/agent-skills/index.json"

	resp := do(t, url, "")
	tag := resp.Header.Get("ETag")
	if tag == "" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("headers %v", resp.Header)
	}
	if resp := do(t, url, tag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: %d, want 304", resp.StatusCode)
	}
	before := indexOf(t, h)

	if err := os.WriteFile(filepath.Join(dir, "pdf", "references", "empty.txt"), []byte("now full\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "solo")); err != nil {
		t.Fatal(err)
	}
	store.Swap(scan(t, dir, 2))
	if resp := do(t, url, tag); resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == tag {
		t.Errorf("after a change: %d with ETag %s, want 200 with a new one", resp.StatusCode, resp.Header.Get("ETag"))
	}
	after := indexOf(t, h)
	if before["pdf"] == after["pdf"] {
		t.Error("pdf's digest did not change with its content")
	}
	if before["inner"] != after["inner"] || before["long"] != after["long"] {
		t.Error("an unchanged skill's digest changed")
	}
	if after["solo"] == before["solo"] {
		t.Error("solo was removed, but the index still lists the same solo (the other one, later by URI, should be listed now)")
	}
}

// A private index (its URL a credential) is marked for the client alone,
// on every kind of answer, 304 included; a public one for any cache.
func TestPrivate(t *testing.T) {
	dir := library(t, base)
	srv := httptest.NewServer(wellknown.New(catalog.NewStore(scan(t, dir, 1)), &wellknown.Options{Private: true, CacheBytes: -1}))
	defer srv.Close()
	for _, p := range []string{"agent-skills/index.json", "skills/index.json", "agent-skills/pdf.zip", "agent-skills/solo/SKILL.md", "skills/pdf/scripts/extract.py"} {
		url := srv.URL + "/.well-known/" + p
		resp := do(t, url, "")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "private, no-cache" {
			t.Errorf("%s: %d, Cache-Control %q", p, resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
		if again := do(t, url, resp.Header.Get("ETag")); again.StatusCode != http.StatusNotModified || again.Header.Get("Cache-Control") != "private, no-cache" {
			t.Errorf("%s revalidated: %d, Cache-Control %q", p, again.StatusCode, again.Header.Get("Cache-Control"))
		}
	}
}

// A pending catalog answers 503 with Retry-After, not an empty index.
func TestPending(t *testing.T) {
	srv := httptest.NewServer(wellknown.New(catalog.NewPendingStore(), nil))
	defer srv.Close()
	resp := do(t, srv.URL+"/.well-known/agent-skills/index.json", "")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("pending: %d %v", resp.StatusCode, resp.Header)
	}
}

// Behind httpserve the index has the guards of /mcp: Host, token, method.
func TestGuards(t *testing.T) {
	store := catalog.NewStore(scan(t, library(t, base), 1))
	srv := httptest.NewServer(httpserve.Handler(http.NotFoundHandler(), &httpserve.Options{
		Tokens: []string{"secret-token"}, WellKnown: wellknown.New(store, nil),
	}))
	defer srv.Close()
	url := srv.URL + "/.well-known/agent-skills/index.json"
	for _, c := range []struct {
		name   string
		host   string
		token  string
		method string
		want   int
	}{
		{"no token", "", "", http.MethodGet, http.StatusUnauthorized},
		{"token", "", "secret-token", http.MethodGet, http.StatusOK},
		{"rebinding host", "evil.example", "secret-token", http.MethodGet, http.StatusForbidden},
		{"post", "", "secret-token", http.MethodPost, http.StatusMethodNotAllowed},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, url, nil)
			if c.host != "" {
				req.Host = c.host
			}
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("status %d, want %d", resp.StatusCode, c.want)
			}
		})
	}
}

// indexOf returns name → digest of h's current 0.2.0 index.
func indexOf(t testing.TB, h http.Handler) map[string]string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/agent-skills/index.json", nil))
	var ix struct {
		Skills []struct{ Name, Digest string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ix); err != nil {
		t.Fatalf("index: %v: %s", err, rec.Body)
	}
	m := map[string]string{}
	for _, e := range ix.Skills {
		m[e.Name] = e.Digest
	}
	return m
}

func do(t testing.TB, url, ifNoneMatch string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func get(t testing.TB, url string, want int) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Errorf("GET %s: %d, want %d: %s", url, resp.StatusCode, want, data)
	}
	return data
}

func getJSON(t testing.TB, url string, v any) {
	t.Helper()
	if err := json.Unmarshal(get(t, url, http.StatusOK), v); err != nil {
		t.Fatal(err)
	}
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func readZip(t testing.TB, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, f := range zr.File {
		if f.Method != zip.Store || f.Flags&0x800 == 0 || f.Mode() != 0o644 {
			t.Errorf("%s: method %d, flags %#x, mode %v", f.Name, f.Method, f.Flags, f.Mode())
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		m[f.Name] = string(b)
	}
	return m
}

var timeZero = time.Unix(0, 0)

// An index listing more skills than the connection limit allows to be
// fetched at once says so in the log.
func TestConnectionWarning(t *testing.T) {
	var logs bytes.Buffer
	h := wellknown.New(catalog.NewStore(scan(t, library(t, base), 1)), &wellknown.Options{
		MaxConns: 20, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	indexOf(t, h)
	if !strings.Contains(logs.String(), "raise --max-conns") || !strings.Contains(logs.String(), "listed=6") {
		t.Errorf("log: %s", logs.String())
	}
}
