package index

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// memStore is a SnapshotStore in memory. The package's only way to the
// hub's state is this interface, which holds catalog documents and nothing
// else: a catalog update cannot change an installed version or a binding.
type memStore struct {
	mu      sync.Mutex
	raw     []byte
	source  string
	puts    int
	failPut error
	failGet error
}

func (m *memStore) PutIndexSnapshot(ctx context.Context, raw []byte, source string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failPut != nil {
		return m.failPut
	}
	m.raw, m.source = append([]byte(nil), raw...), source
	m.puts++
	return nil
}

func (m *memStore) LatestIndexSnapshot(ctx context.Context) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.raw, m.source, m.failGet
}

func (m *memStore) latest() (string, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(m.raw), m.source
}

func openTest(t *testing.T, store *memStore, opts *Options) *Catalog {
	t.Helper()
	c, err := Open(t.Context(), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpen(t *testing.T) {
	// An empty store: the bundled snapshot.
	c := openTest(t, &memStore{}, nil)
	if c.Current() != Bundled() {
		t.Errorf("empty store: serving %q, want the bundled snapshot", c.Current().Source())
	}
	// A stored document is served, with its source.
	c = openTest(t, &memStore{raw: []byte(doc(goodItem(1))), source: "https://mirror/c.json"}, nil)
	if c.Current().Len() != 1 || c.Current().Source() != "https://mirror/c.json" {
		t.Errorf("stored document: %d items from %q", c.Current().Len(), c.Current().Source())
	}
	// A stored document that no longer validates: the bundled one, and the
	// stored one is left for the next update to replace.
	bad := &memStore{raw: []byte(`{"schema_version":7,"items":[]}`), source: "x"}
	c = openTest(t, bad, nil)
	if c.Current() != Bundled() || bad.puts != 0 {
		t.Errorf("invalid stored document: serving %q, %d puts", c.Current().Source(), bad.puts)
	}
	// A store that cannot be read fails Open.
	if _, err := Open(t.Context(), &memStore{failGet: errors.New("database is locked")}, nil); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Errorf("unreadable store: %v", err)
	}
}

// serve starts a loopback server answering every request with h.
func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestRefresh(t *testing.T) {
	body := doc(goodItem(1), goodItem(2))
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("a refresh sent credentials")
		}
		fmt.Fprint(w, body)
	})
	store := &memStore{}
	c := openTest(t, store, nil)
	ix, err := c.Refresh(t.Context(), srv.URL+"/skills.json")
	if err != nil {
		t.Fatal(err)
	}
	if c.Current() != ix || ix.Len() != 2 || ix.Source() != srv.URL+"/skills.json" {
		t.Errorf("after refresh: %d items from %q", ix.Len(), ix.Source())
	}
	if raw, source := store.latest(); raw != body || source != srv.URL+"/skills.json" {
		t.Errorf("stored %q from %q", raw, source)
	}
	if hits := c.Current().Search(Query{Text: "s2"}); len(hits) != 1 || hits[0].Item.ID != "github.com/o/r/skills/s2" {
		t.Errorf("search after refresh: %v", ids(hits))
	}
}

// refreshFails refreshes from a server answering with h and checks that
// the refresh fails saying want, and that the catalog served and stored is
// still the previous one.
func refreshFails(t *testing.T, opts *Options, h http.HandlerFunc, path string, want ...string) {
	t.Helper()
	srv := serve(t, h)
	prev := doc(goodItem(9))
	store := &memStore{raw: []byte(prev), source: "previous"}
	c := openTest(t, store, opts)
	before := c.Current()
	_, err := c.Refresh(t.Context(), srv.URL+path)
	if err == nil {
		t.Fatal("refresh succeeded")
	}
	for _, w := range append(want, "the previous catalog is kept") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if c.Current() != before {
		t.Error("a failed refresh replaced the catalog served")
	}
	if raw, source := store.latest(); raw != prev || source != "previous" {
		t.Errorf("a failed refresh replaced the stored catalog with %q from %q", raw, source)
	}
}

func TestRefreshFailuresKeepTheLastGoodSnapshot(t *testing.T) {
	text := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, s) }
	}
	t.Run("invalid JSON", func(t *testing.T) { refreshFails(t, nil, text(`{"schema_version":1,"items":[`), "/", "invalid JSON") })
	t.Run("wrong version", func(t *testing.T) {
		refreshFails(t, nil, text(`{"schema_version":2,"items":[]}`), "/", "schema_version 2 is not supported")
	})
	t.Run("item without repository", func(t *testing.T) {
		refreshFails(t, nil, text(doc(goodItem(0), `{"id":"lost","name":"lost","description":"d"}`)), "/", `catalog item 1 (id "lost")`, "repository is missing")
	})
	t.Run("not found", func(t *testing.T) { refreshFails(t, nil, http.NotFound, "/", "404") })
	t.Run("huge, announced", func(t *testing.T) {
		refreshFails(t, &Options{Limits: &Limits{MaxBytes: 1 << 20}}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(1<<30))
			w.WriteHeader(http.StatusOK) // and no body: refused before reading
		}, "/", "announces 1073741824 bytes")
	})
	t.Run("huge, streamed", func(t *testing.T) {
		// A body that never ends, without a length: refused at the limit.
		refreshFails(t, &Options{Limits: &Limits{MaxBytes: 1 << 20}}, func(w http.ResponseWriter, r *http.Request) {
			src := newEndless(`{"schema_version":1,"items":[`, goodItem(1))
			buf := make([]byte, 32<<10)
			for r.Context().Err() == nil {
				src.Read(buf)
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		}, "/", "over the limit of 1048576 bytes")
	})
	t.Run("a million items", func(t *testing.T) {
		refreshFails(t, &Options{Limits: &Limits{MaxItems: 1000}}, func(w http.ResponseWriter, r *http.Request) {
			src := newEndless(`{"schema_version":1,"items":[`, `{}`)
			buf := make([]byte, 32<<10)
			for r.Context().Err() == nil && src.items < 1_000_000 {
				src.Read(buf)
				if _, err := w.Write(buf); err != nil {
					return
				}
			}
		}, "/", "more than 1000 items")
	})
	t.Run("slow", func(t *testing.T) {
		// The server sends the opening, then nothing until the client goes.
		refreshFails(t, &Options{Timeout: 300 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"schema_version":1,"items":[`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "/", "not complete within 300ms")
	})
	t.Run("secret in the URL is not repeated", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusInternalServerError) })
		c := openTest(t, &memStore{}, nil)
		_, err := c.Refresh(t.Context(), srv.URL+"/c.json?token=s3cret")
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "500") {
			t.Errorf("got %v", err)
		}
	})
}

func TestRefreshURLRules(t *testing.T) {
	c := openTest(t, &memStore{}, nil)
	for _, u := range []string{
		"http://192.0.2.1/skills.json", // plain http off loopback: refused before dialing
		"ftp://127.0.0.1/skills.json",
		"file:///etc/passwd",
		"https://user:pw@192.0.2.1/skills.json",
		"::not a url",
	} {
		if _, err := c.Refresh(t.Context(), u); err == nil {
			t.Errorf("Refresh(%s) succeeded", u)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("Refresh(%s): the error repeats the credentials: %v", u, err)
		}
	}
	if c.Current() != Bundled() {
		t.Error("a refused URL changed the catalog")
	}

	// Redirects: followed on loopback, refused to plain http elsewhere, and
	// bounded.
	body := doc(goodItem(1))
	var srv *httptest.Server
	srv = serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, srv.URL+"/skills.json", http.StatusFound)
		case "/away":
			http.Redirect(w, r, "http://192.0.2.1/skills.json", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, srv.URL+"/loop", http.StatusFound)
		default:
			fmt.Fprint(w, body)
		}
	})
	if ix, err := c.Refresh(t.Context(), srv.URL+"/moved"); err != nil || ix.Len() != 1 {
		t.Errorf("redirect on loopback: %v", err)
	}
	if _, err := c.Refresh(t.Context(), srv.URL+"/away"); err == nil || !strings.Contains(err.Error(), "plain http is allowed only to a loopback address") {
		t.Errorf("redirect to http elsewhere: %v", err)
	}
	if _, err := c.Refresh(t.Context(), srv.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
}

func TestRefreshStoreFails(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, doc(goodItem(1))) })
	store := &memStore{failPut: errors.New("disk full")}
	c := openTest(t, store, nil)
	_, err := c.Refresh(t.Context(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "storing the catalog: disk full") {
		t.Errorf("got %v", err)
	}
	if c.Current() != Bundled() {
		t.Error("a catalog the store refused is served")
	}
}

func TestRefreshCancelled(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, doc(goodItem(1))) })
	c := openTest(t, &memStore{}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Refresh(ctx, srv.URL); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestImport(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "skills.json")
	if err := os.WriteFile(good, []byte(doc(goodItem(1), goodItem(2), goodItem(3))), 0o644); err != nil {
		t.Fatal(err)
	}
	store := &memStore{}
	c := openTest(t, store, nil)
	ix, err := c.Import(t.Context(), good)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 3 || ix.Source() != "import:skills.json" || c.Current() != ix {
		t.Errorf("imported %d items from %q", ix.Len(), ix.Source())
	}
	if _, source := store.latest(); source != "import:skills.json" {
		t.Errorf("stored from %q", source)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(doc(goodItem(1), goodItem(1))), 0o644)
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		bad:                          "already used by item 0",
		fifo:                         "not a regular file", // refused at once, never waiting for a writer
		dir:                          "not a regular file",
		filepath.Join(dir, "absent"): "no such file",
	} {
		if _, err := c.Import(t.Context(), name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Import(%s) = %v, want %q", filepath.Base(name), err, want)
		}
	}
	if c.Current() != ix {
		t.Error("a failed import replaced the catalog")
	}
}

func TestApply(t *testing.T) {
	store := &memStore{}
	c := openTest(t, store, nil)
	if _, err := c.Apply(t.Context(), []byte(`{"schema_version":1}`), "upload"); err == nil || !strings.Contains(err.Error(), "items is missing") {
		t.Errorf("got %v", err)
	}
	ix, err := c.Apply(t.Context(), []byte(doc(goodItem(5))), "upload")
	if err != nil || ix.Len() != 1 || store.puts != 1 {
		t.Errorf("Apply: %v, %d puts", err, store.puts)
	}
}

func TestConcurrentUpdatesAgree(t *testing.T) {
	// Updates at once: what is served is what is stored.
	store := &memStore{}
	c := openTest(t, store, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := c.Apply(t.Context(), []byte(doc(goodItem(i))), fmt.Sprint("u", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, source := store.latest(); source != c.Current().Source() || store.puts != 8 {
		t.Errorf("stored %q, serving %q, %d puts", source, c.Current().Source(), store.puts)
	}
}
