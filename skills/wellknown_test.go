package skills_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/skills"
)

// The well-known index of a settable catalog follows SetLibraries, lists
// only what the catalog serves, mounts below a path, and answers 503 once
// the catalog is closed.
func TestWellKnown(t *testing.T) {
	ctx := context.Background()
	c, err := skills.Open(ctx, nil, &skills.Options{Settable: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := httptest.NewServer(http.StripPrefix("/below", c.WellKnown(&skills.WellKnownOptions{Private: true})))
	defer srv.Close()
	index := func() (names []string, status int, cache string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/below/.well-known/agent-skills/index.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var ix struct {
			Skills []struct{ Name, Type, URL string }
		}
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(body, &ix); err != nil {
				t.Fatalf("index: %v\n%s", err, body)
			}
		}
		for _, e := range ix.Skills {
			names = append(names, e.Name+":"+e.Type)
		}
		return names, resp.StatusCode, resp.Header.Get("Cache-Control")
	}
	if names, st, _ := index(); st != http.StatusOK || len(names) != 0 {
		t.Fatalf("empty catalog: %d %v", st, names)
	}
	pdf := mapFS("pdf")
	pdf["pdf/.env"] = &fstest.MapFile{Data: []byte("SECRET=1\n"), Mode: 0o644} // a dotfile: withheld
	pdf["pdf/ref.md"] = &fstest.MapFile{Data: []byte("ref\n"), Mode: 0o644}
	if _, err := c.SetLibraries(ctx, []skills.Library{{Namespace: "one", FS: pdf}, {Namespace: "two", FS: mapFS("xlsx")}}); err != nil {
		t.Fatal(err)
	}
	names, st, cache := index()
	if st != http.StatusOK || len(names) != 2 || names[0] != "pdf:archive" || names[1] != "xlsx:skill-md" || cache != "private, no-cache" {
		t.Fatalf("after SetLibraries: %d %v %q", st, names, cache)
	}
	for path, want := range map[string]int{"pdf/ref.md": http.StatusOK, "pdf/.env": http.StatusNotFound} {
		resp, err := http.Get(srv.URL + "/below/.well-known/skills/" + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if _, err := c.SetLibraries(ctx, []skills.Library{{Namespace: "two", FS: mapFS("xlsx")}}); err != nil {
		t.Fatal(err)
	}
	if names, _, _ := index(); len(names) != 1 || names[0] != "xlsx:skill-md" {
		t.Errorf("after removing a library: %v", names)
	}
	c.Close()
	if _, st, _ := index(); st != http.StatusServiceUnavailable {
		t.Errorf("closed catalog: %d, want 503", st)
	}
}
