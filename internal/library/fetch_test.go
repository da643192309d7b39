package library

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// host is a loopback TLS server that records what it was asked.
type host struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seenReq
}

type seenReq struct {
	path, auth, accept string
}

func newHost(t *testing.T, h http.HandlerFunc) *host {
	t.Helper()
	s := &host{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, seenReq{r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Accept")})
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *host) seen() []seenReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenReq(nil), s.reqs...)
}

func (s *host) hits(path string) int {
	n := 0
	for _, r := range s.seen() {
		if r.path == path {
			n++
		}
	}
	return n
}

// served is an archive the test servers hand out.
var served = sync.OnceValue(func() []byte {
	return goodZip(&testing.T{}, "lib/demo/SKILL.md", skillMD, "lib/demo/notes.md", "notes")
})

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// files serves a fixed set of paths; anything else is 404.
func files(m map[string][]byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, ok := m[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}
}

func newFetchCache(t *testing.T, client *http.Client) *Cache {
	t.Helper()
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache"), HTTPClient: client, Limits: testLimits}
	t.Cleanup(func() { c.Close() })
	return c
}

// assertNoDownloads fails if anything but url records sits in downloads.
func assertNoDownloads(t *testing.T, c *Cache) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(c.Dir, downloadsDir))
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "url-") {
			t.Errorf("left in downloads: %s", e.Name())
		}
	}
}

func TestFetchPinned(t *testing.T) {
	zipb := served()
	s := newHost(t, files(map[string][]byte{"/lib.zip": zipb}))
	c := newFetchCache(t, s.Client())
	spec := URLSpec{URL: s.URL + "/lib.zip", SHA256: digestOf(zipb)}
	dir, digest, warning, err := c.Fetch(context.Background(), spec)
	if err != nil || warning != "" {
		t.Fatalf("Fetch = %v, %q", err, warning)
	}
	if digest != spec.SHA256 || readTree(t, dir)["lib/demo/SKILL.md"] != skillMD {
		t.Errorf("Fetch = %s, %s", dir, digest)
	}
	// Fetched again (a rescan, or another library with the same URL): the
	// network is not touched.
	if _, _, _, err := c.Fetch(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if n := len(s.seen()); n != 1 {
		t.Errorf("%d requests, want 1 (pinned and cached)", n)
	}
	if s.hits("/lib.zip.sha256") != 0 {
		t.Error("a pinned URL fetched a sidecar")
	}
}

func TestFetchPinMismatch(t *testing.T) {
	s := newHost(t, files(map[string][]byte{"/lib.zip": served()}))
	c := newFetchCache(t, s.Client())
	_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + "/lib.zip", SHA256: strings.Repeat("ab", 32)})
	if !errors.Is(err, ErrDigestMismatch) || !strings.Contains(err.Error(), "pinned") {
		t.Fatalf("Fetch = %v, want ErrDigestMismatch", err)
	}
	assertEmptyCache(t, c.Dir)
}

func TestFetchSidecar(t *testing.T) {
	zipb := served()
	s := newHost(t, files(map[string][]byte{
		"/lib.zip":        zipb,
		"/lib.zip.sha256": []byte(strings.ToUpper(digestOf(zipb)) + "  lib.zip\n"),
	}))
	c := newFetchCache(t, s.Client())
	spec := URLSpec{URL: s.URL + "/lib.zip"}
	_, digest, warning, err := c.Fetch(context.Background(), spec)
	if err != nil || warning != "" || digest != digestOf(zipb) {
		t.Fatalf("Fetch = %s, %q, %v", digest, warning, err)
	}
	// A refresh asks for the sidecar; it names the digest already held, so
	// the archive is not downloaded again.
	if _, _, _, err := c.Fetch(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if got := s.hits("/lib.zip"); got != 1 {
		t.Errorf("archive downloaded %d times, want 1", got)
	}
	if got := s.hits("/lib.zip.sha256"); got != 2 {
		t.Errorf("sidecar fetched %d times, want 2", got)
	}
}

func TestFetchSidecarRefused(t *testing.T) {
	zipb := served()
	for _, tc := range []struct {
		name    string
		sidecar string
		status  int
		err     error
		detail  string
	}{
		{"mismatch", strings.Repeat("0", 64) + "  lib.zip\n", 200, ErrDigestMismatch, "sidecar"},
		{"malformed", "not a digest\n", 200, nil, "does not start with a sha256"},
		{"empty", "", 200, nil, "does not start with a sha256"},
		{"server-error", "", 500, nil, "500"},
		{"absent", "", 404, ErrUnverified, "no #sha256= pin and no"},
		{"gone", "", 410, ErrUnverified, "allow unverified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newHost(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/lib.zip":
					w.Write(zipb)
				case "/lib.zip.sha256":
					w.WriteHeader(tc.status)
					io.WriteString(w, tc.sidecar)
				}
			})
			c := newFetchCache(t, s.Client())
			_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + "/lib.zip"})
			if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("Fetch = %v, want %v mentioning %q", err, tc.err, tc.detail)
			}
			assertEmptyCache(t, c.Dir)
			if tc.err == ErrUnverified && s.hits("/lib.zip") != 0 {
				t.Error("downloaded an archive it could not verify")
			}
		})
	}
}

func TestFetchAllowUnverified(t *testing.T) {
	zipb := served()
	s := newHost(t, files(map[string][]byte{"/lib.zip": zipb}))
	var logs bytes.Buffer
	c := newFetchCache(t, s.Client())
	c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, digest, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + "/lib.zip", AllowUnverified: true})
	if err != nil || digest != digestOf(zipb) {
		t.Fatalf("Fetch = %s, %v", digest, err)
	}
	if !strings.Contains(logs.String(), "unverified") {
		t.Errorf("no warning about an unverified archive: %q", logs.String())
	}
}

func TestFetchRedirects(t *testing.T) {
	zipb := served()
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { plainHits.Add(1); w.Write(zipb) }))
	defer plain.Close()

	s := newHost(t, func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/to-http.zip":
			http.Redirect(w, r, plain.URL+"/lib.zip", http.StatusFound)
		case p == "/loop-a.zip":
			http.Redirect(w, r, "/loop-b.zip", http.StatusFound)
		case p == "/loop-b.zip":
			http.Redirect(w, r, "/loop-a.zip", http.StatusFound)
		case strings.HasPrefix(p, "/hop/"):
			// /hop/N/K redirects K more times, then serves the archive.
			var n, k int
			fmt.Sscanf(p, "/hop/%d/%d", &n, &k)
			if k == 0 {
				w.Write(zipb)
				return
			}
			http.Redirect(w, r, fmt.Sprintf("/hop/%d/%d", n, k-1), http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	})
	pin := digestOf(zipb)
	for _, tc := range []struct {
		name   string
		path   string
		err    error
		detail string
	}{
		{"to-http", "/to-http.zip", ErrInsecureURL, "redirect to http://"},
		{"loop", "/loop-a.zip", ErrRedirect, "loop"},
		{"five-redirects", "/hop/5/5", nil, ""},
		{"six-redirects", "/hop/6/6", ErrRedirect, "more than 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFetchCache(t, s.Client())
			_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + tc.path, SHA256: pin})
			if tc.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("Fetch = %v, want %v mentioning %q", err, tc.err, tc.detail)
			}
			assertEmptyCache(t, c.Dir)
		})
	}
	if n := plainHits.Load(); n != 0 {
		t.Errorf("the http server was asked %d times", n)
	}
}

// TestFetchTokenScope: SKILLS_FETCH_TOKEN reaches the first host and
// same-host redirects only. Both test servers listen on 127.0.0.1, so the
// port is what makes them different hosts.
func TestFetchTokenScope(t *testing.T) {
	zipb := served()
	var other *host
	first := newHost(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same.zip":
			http.Redirect(w, r, "/lib.zip", http.StatusFound)
		case "/cross.zip":
			http.Redirect(w, r, other.URL+"/lib.zip", http.StatusFound)
		case "/away-and-back.zip":
			http.Redirect(w, r, other.URL+"/back", http.StatusFound)
		case "/lib.zip", "/back.zip":
			w.Write(zipb)
		default:
			http.NotFound(w, r)
		}
	})
	other = newHost(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/back":
			http.Redirect(w, r, first.URL+"/back.zip", http.StatusFound)
		default:
			w.Write(zipb)
		}
	})
	env := func(k string) (string, bool) {
		if k == "SKILLS_FETCH_TOKEN" {
			return "s3cret", true
		}
		return "", false
	}
	pin := digestOf(zipb)
	for _, path := range []string{"/same.zip", "/cross.zip", "/away-and-back.zip"} {
		c := newFetchCache(t, first.Client())
		c.Env = env
		if _, _, _, err := c.Fetch(context.Background(), URLSpec{URL: first.URL + path, SHA256: pin}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	want := map[string]string{
		"/same.zip": "Bearer s3cret", "/lib.zip": "Bearer s3cret", // first host, and a same-host redirect
		"/cross.zip": "Bearer s3cret", "/away-and-back.zip": "Bearer s3cret",
		"/back.zip": "", // back on the first host after leaving it: dropped for good
	}
	for _, r := range first.seen() {
		if w, ok := want[r.path]; ok && r.auth != w {
			t.Errorf("first host %s: Authorization %q, want %q", r.path, r.auth, w)
		}
	}
	for _, r := range other.seen() {
		if r.auth != "" {
			t.Errorf("other host %s got Authorization %q", r.path, r.auth)
		}
	}
	if len(other.seen()) != 2 {
		t.Errorf("other host saw %d requests, want 2", len(other.seen()))
	}
}

// TestAuthorization checks the credential rules directly, GitHub hosts
// included (the tests cannot serve github.com).
func TestAuthorization(t *testing.T) {
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	envOf := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	gh := envOf("GH_TOKEN", "gh", "GITHUB_TOKEN", "github")
	for _, tc := range []struct {
		name  string
		chain []string
		env   func(string) (string, bool)
		want  string
	}{
		{"github.com", []string{"https://github.com/o/r/releases/download/v1/lib.zip"}, gh, "Bearer gh"},
		{"api.github.com", []string{"https://api.github.com/repos/o/r/releases/assets/1"}, gh, "Bearer gh"},
		{"subdomain", []string{"https://uploads.github.com/x"}, gh, "Bearer gh"},
		{"upper-case host", []string{"https://GitHub.COM/x"}, gh, "Bearer gh"},
		{"explicit 443", []string{"https://github.com:443/x"}, gh, "Bearer gh"},
		{"GITHUB_TOKEN fallback", []string{"https://github.com/x"}, envOf("GITHUB_TOKEN", "github"), "Bearer github"},
		{"empty GH_TOKEN ignored", []string{"https://github.com/x"}, envOf("GH_TOKEN", " ", "GITHUB_TOKEN", "github"), "Bearer github"},
		{"asset redirect", []string{"https://github.com/o/r/releases/download/v1/lib.zip", "https://objects.githubusercontent.com/x?sig=1"}, gh, ""},
		{"githubusercontent", []string{"https://objects.githubusercontent.com/x"}, gh, ""},
		{"lookalike", []string{"https://evilgithub.com/x"}, gh, ""},
		{"suffix trick", []string{"https://github.com.evil.example/x"}, gh, ""},
		{"other port", []string{"https://github.com:8443/x"}, gh, ""},
		{"http", []string{"http://github.com/x"}, gh, ""},
		{"other host", []string{"https://example.com/x"}, gh, ""},
		{"fetch token anywhere first", []string{"https://example.com/x"}, envOf("SKILLS_FETCH_TOKEN", "f"), "Bearer f"},
		{"fetch token wins on github", []string{"https://github.com/x"}, envOf("SKILLS_FETCH_TOKEN", "f", "GH_TOKEN", "gh"), "Bearer f"},
		{"fetch token same host", []string{"https://example.com/a", "https://EXAMPLE.com:443/b"}, envOf("SKILLS_FETCH_TOKEN", "f"), "Bearer f"},
		{"fetch token other port", []string{"https://example.com/a", "https://example.com:8443/b"}, envOf("SKILLS_FETCH_TOKEN", "f"), ""},
		{"fetch token subdomain", []string{"https://example.com/a", "https://cdn.example.com/b"}, envOf("SKILLS_FETCH_TOKEN", "f"), ""},
		{"fetch token back home", []string{"https://example.com/a", "https://cdn.example.com/b", "https://example.com/c"}, envOf("SKILLS_FETCH_TOKEN", "f"), ""},
		{"no env", []string{"https://github.com/x"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var chain []*url.URL
			for _, s := range tc.chain {
				chain = append(chain, mustURL(s))
			}
			if got := authorization(chain, tc.env); got != tc.want {
				t.Errorf("authorization = %q, want %q", got, tc.want)
			}
		})
	}
}

// roundTripFunc is a Transport that answers in memory, for the one test
// that must see a request to a GitHub URL without a network.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFetchGitHubAsset: a release asset API URL is asked for the bytes
// (Accept: application/octet-stream) with the GitHub token; the redirect to
// the storage host gets no token.
func TestFetchGitHubAsset(t *testing.T) {
	zipb := served()
	var mu sync.Mutex
	seen := map[string][2]string{}
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seen[r.URL.Host] = [2]string{r.Header.Get("Authorization"), r.Header.Get("Accept")}
		mu.Unlock()
		resp := &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{}, Request: r, Body: io.NopCloser(bytes.NewReader(zipb)), ContentLength: int64(len(zipb))}
		if r.URL.Host == "api.github.com" {
			resp.StatusCode, resp.Status = http.StatusFound, "302 Found"
			resp.Header.Set("Location", "https://objects.githubusercontent.com/release/lib.zip?X-Amz-Signature=secret")
			resp.Body, resp.ContentLength = http.NoBody, 0
		}
		return resp, nil
	})
	c := newFetchCache(t, &http.Client{Transport: rt})
	c.Env = func(k string) (string, bool) { return "ghp_x", k == "GH_TOKEN" }
	_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: "https://api.github.com/repos/o/r/releases/assets/42", SHA256: digestOf(zipb)})
	if err != nil {
		t.Fatal(err)
	}
	if got := seen["api.github.com"]; got != [2]string{"Bearer ghp_x", "application/octet-stream"} {
		t.Errorf("api.github.com saw %q", got)
	}
	if got := seen["objects.githubusercontent.com"]; got[0] != "" {
		t.Errorf("storage host got Authorization %q", got[0])
	}
}

func TestFetchSizeCap(t *testing.T) {
	big := bytes.Repeat([]byte("z"), int(testLimits.MaxDownloadBytes)+1000)
	s := newHost(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/declared.zip":
			// Content-Length over the cap: refused before reading a byte.
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			w.WriteHeader(200)
		case "/streamed.zip":
			// No Content-Length: the cap holds while streaming.
			for i := 0; i < len(big); i += 64 << 10 {
				w.Write(big[i:min(i+64<<10, len(big))])
				w.(http.Flusher).Flush()
			}
		case "/short.zip":
			// A Content-Length larger than the body that follows.
			conn, brw, _ := w.(http.Hijacker).Hijack()
			defer conn.Close()
			brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n")
			brw.WriteString("only a little")
			brw.Flush()
		}
	})
	pin := digestOf(big)
	for _, tc := range []struct {
		path   string
		err    error
		detail string
	}{
		{"/declared.zip", ErrTooLarge, "Content-Length"},
		{"/streamed.zip", ErrTooLarge, "more than the download limit"},
		{"/short.zip", io.ErrUnexpectedEOF, "unexpected EOF"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c := newFetchCache(t, s.Client())
			_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + tc.path, SHA256: pin})
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("Fetch = %v, want %v mentioning %q", err, tc.err, tc.detail)
			}
			assertEmptyCache(t, c.Dir)
		})
	}
}

// TestFetchOfflineRestart: after a restart with the server gone, a pinned
// URL serves from the cache, and an unpinned one serves its last copy with
// a warning.
func TestFetchOfflineRestart(t *testing.T) {
	zipb := served()
	s := newHost(t, files(map[string][]byte{
		"/lib.zip":        zipb,
		"/lib.zip.sha256": []byte(digestOf(zipb)),
	}))
	cacheDir := filepath.Join(t.TempDir(), "cache")
	pinned := URLSpec{URL: s.URL + "/lib.zip", SHA256: digestOf(zipb)}
	unpinned := URLSpec{URL: s.URL + "/lib.zip?token=abc"}
	c1 := &Cache{Dir: cacheDir, HTTPClient: s.Client()}
	for _, spec := range []URLSpec{pinned, unpinned} {
		if _, _, _, err := c1.Fetch(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	c1.Close()
	client := s.Client()
	s.Close()

	c2 := &Cache{Dir: cacheDir, HTTPClient: client}
	defer c2.Close()
	dir, digest, warning, err := c2.Fetch(context.Background(), pinned)
	if err != nil || warning != "" || digest != pinned.SHA256 {
		t.Fatalf("pinned offline: %s, %q, %v", digest, warning, err)
	}
	if readTree(t, dir)["lib/demo/SKILL.md"] != skillMD {
		t.Error("wrong tree")
	}
	_, digest, warning, err = c2.Fetch(context.Background(), unpinned)
	if err != nil || digest != pinned.SHA256 || !strings.Contains(warning, "still serving the copy fetched earlier") {
		t.Fatalf("unpinned offline: %s, %q, %v", digest, warning, err)
	}
	if strings.Contains(warning, "token=abc") {
		t.Errorf("warning leaks the query: %q", warning)
	}
}

// TestFetchRefreshFails: when a refresh fails, for any reason, the copy
// fetched before keeps serving and the warning says why.
func TestFetchRefreshFails(t *testing.T) {
	v1 := served()
	v2 := goodZip(t, "lib/demo/SKILL.md", skillMD+"\nv2\n")
	evil := mustHex(symlinkZipHex) // verified by its sidecar, refused on extraction
	var mu sync.Mutex
	mode := "v1"
	s := newHost(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		m := mode
		mu.Unlock()
		body := map[string][]byte{"v1": v1, "evil": evil}[m]
		side := digestOf(body)
		switch {
		case m == "down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/lib.zip.sha256":
			io.WriteString(w, side)
		default:
			w.Write(body)
		}
	})
	c := newFetchCache(t, s.Client())
	spec := URLSpec{URL: s.URL + "/lib.zip"}
	_, d1, _, err := c.Fetch(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, detail string }{
		{"down", "503"},
		{"evil", "link entry"},
	} {
		mu.Lock()
		mode = tc.mode
		mu.Unlock()
		_, d, warning, err := c.Fetch(context.Background(), spec)
		if err != nil || d != d1 || !strings.Contains(warning, tc.detail) || !strings.Contains(warning, "still serving") {
			t.Errorf("%s: Fetch = %s, %q, %v", tc.mode, d, warning, err)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Dir, downloadsDir, digestOf(evil)+".zip")); err == nil {
		t.Error("the refused archive was kept in downloads")
	}
	// A pinned URL has no earlier copy to fall back on.
	mu.Lock()
	mode = "down"
	mu.Unlock()
	if _, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + "/other.zip", SHA256: digestOf(v2)}); err == nil {
		t.Error("pinned fetch from a down server succeeded")
	}
}

// TestFetchRefreshMismatch: an archive that no longer matches its sidecar
// is refused, nothing of it is kept, and the earlier copy keeps serving.
func TestFetchRefreshMismatch(t *testing.T) {
	v1 := served()
	v2 := goodZip(t, "lib/demo/SKILL.md", skillMD+"\nv2\n")
	var mu sync.Mutex
	body, side := v1, digestOf(v1)
	s := newHost(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/lib.zip.sha256" {
			io.WriteString(w, side)
			return
		}
		w.Write(body)
	})
	c := newFetchCache(t, s.Client())
	spec := URLSpec{URL: s.URL + "/lib.zip"}
	_, d1, _, err := c.Fetch(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	body, side = v2, strings.Repeat("1", 64)
	mu.Unlock()
	_, d, warning, err := c.Fetch(context.Background(), spec)
	if err != nil || d != d1 || !strings.Contains(warning, "sha256 mismatch") {
		t.Fatalf("Fetch = %s, %q, %v", d, warning, err)
	}
	ents, _ := os.ReadDir(filepath.Join(c.Dir, downloadsDir))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) || e.Name() == digestOf(v2)+".zip" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestFetchNeverLeaksQuery drives failures with secrets in the query and
// the redirect target, and checks errors, warnings and logs.
func TestFetchNeverLeaksQuery(t *testing.T) {
	zipb := served()
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	s := newHost(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-http.zip":
			http.Redirect(w, r, plain.URL+"/x.zip?sig=SECRET-REDIRECT", http.StatusFound)
		case "/bad-location.zip":
			w.Header().Set("Location", "https://[::1/x?sig=SECRET-LOCATION")
			w.WriteHeader(http.StatusFound)
		case "/loop.zip":
			http.Redirect(w, r, "/loop.zip?sig=SECRET-LOOP", http.StatusFound)
		case "/lib.zip":
			w.Write(zipb)
		default:
			http.NotFound(w, r)
		}
	})
	var logs bytes.Buffer
	c := newFetchCache(t, s.Client())
	c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var out []string
	for _, spec := range []URLSpec{
		{URL: s.URL + "/missing.zip?token=SECRET-Q"},
		{URL: s.URL + "/missing.zip?token=SECRET-Q", AllowUnverified: true},
		{URL: s.URL + "/lib.zip?token=SECRET-Q", SHA256: strings.Repeat("0", 64)},
		{URL: s.URL + "/to-http.zip?token=SECRET-Q", SHA256: strings.Repeat("0", 64)},
		{URL: s.URL + "/bad-location.zip?token=SECRET-Q", SHA256: strings.Repeat("0", 64)},
		{URL: s.URL + "/loop.zip?token=SECRET-Q", SHA256: strings.Repeat("0", 64)},
		{URL: "http://user:SECRET-PW@example.com/x.zip?token=SECRET-Q"},
	} {
		_, _, warning, err := c.Fetch(context.Background(), spec)
		if err == nil {
			t.Errorf("Fetch %s succeeded", Redact(spec.URL))
			continue
		}
		out = append(out, err.Error(), warning)
	}
	for _, s := range []string{"https://h/x.zip?token=SECRET-Q#sha256=" + strings.Repeat("0", 64), "http://u:SECRET-PW@h/x?token=SECRET-Q", "https://h/x.zip#sha256=zz?SECRET-Q"} {
		_, err := ParseURLSpec(s)
		if err != nil {
			out = append(out, err.Error())
		}
	}
	out = append(out, logs.String())
	for _, o := range out {
		if strings.Contains(o, "SECRET") {
			t.Errorf("secret leaked: %q", o)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://host/x.zip": "https://host/x.zip",
		"https://user:pw@host:8443/a/b.zip?token=t&x=1#sha256=": "https://host:8443/a/b.zip",
		"https://host/x%20y.zip?sig=1":                          "https://host/x%20y.zip",
		"https://[::1/x?sig=secret":                             "<unparsable URL>",
		"not a url ?secret":                                     "not%20a%20url%20",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseURLSpec(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		in   string
		want URLSpec
		err  string
	}{
		{"https://h/x.zip", URLSpec{URL: "https://h/x.zip"}, ""},
		{"https://h/x.zip#sha256=" + pin, URLSpec{URL: "https://h/x.zip", SHA256: pin}, ""},
		{"https://h/x.zip?sig=1#sha256=" + strings.ToUpper(pin), URLSpec{URL: "https://h/x.zip?sig=1", SHA256: pin}, ""},
		{"HTTPS://h/x.zip", URLSpec{URL: "https://h/x.zip"}, ""},
		{"http://h/x.zip", URLSpec{}, "only https"},
		{"ftp://h/x.zip", URLSpec{}, "only https"},
		{"/local/x.zip", URLSpec{}, "only https"},
		{"https:///x.zip", URLSpec{}, "no host"},
		{"https://u:p@h/x.zip", URLSpec{}, "credentials"},
		{"https://h/x.zip#sha256=abc", URLSpec{}, "64 hex"},
		{"https://h/x.zip#md5=" + pin, URLSpec{}, "#sha256="},
	} {
		got, err := ParseURLSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURLSpec(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseURLSpec(%q) = %+v, %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestFetchHTTPStatus: a non-200 answer names the status.
func TestFetchHTTPStatus(t *testing.T) {
	s := newHost(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusForbidden) })
	c := newFetchCache(t, s.Client())
	_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + "/lib.zip", SHA256: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("Fetch = %v", err)
	}
	assertEmptyCache(t, c.Dir)
}

// TestFetchDamagedDownload: a cached download that no longer matches its
// digest is discarded and fetched again, pinned or by sidecar.
func TestFetchDamagedDownload(t *testing.T) {
	zipb := served()
	s := newHost(t, files(map[string][]byte{
		"/lib.zip":        zipb,
		"/lib.zip.sha256": []byte(digestOf(zipb)),
	}))
	for _, spec := range []URLSpec{
		{URL: s.URL + "/lib.zip", SHA256: digestOf(zipb)},
		{URL: s.URL + "/lib.zip"},
	} {
		c := newFetchCache(t, s.Client())
		_, d, _, err := c.Fetch(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		c.Prune(d) // the extraction goes, and with it the download
		dl := filepath.Join(c.Dir, downloadsDir, d+".zip")
		if exists(dl) || exists(filepath.Join(c.Dir, d)) {
			t.Fatal("Prune left the download or the extraction")
		}
		if err := os.WriteFile(dl, []byte("damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
		before := s.hits("/lib.zip")
		dir, d2, warning, err := c.Fetch(context.Background(), spec)
		if err != nil || d2 != d || warning != "" {
			t.Fatalf("Fetch after damage = %s, %q, %v", d2, warning, err)
		}
		if s.hits("/lib.zip") != before+1 {
			t.Error("the damaged download was not fetched again")
		}
		if readTree(t, dir)["lib/demo/SKILL.md"] != skillMD {
			t.Error("wrong tree")
		}
	}
}

// TestFetchTimeout: a server that never answers is given up on after the
// per-request timeout. The handler waits for the client to leave, so the
// only way Fetch can return is the timeout.
func TestFetchTimeout(t *testing.T) {
	// The handler answers nothing until the test ends, whatever becomes of
	// the request's context on the server side: had it returned when that
	// context ended, an empty 200 could reach the client first.
	release := make(chan struct{})
	s := newHost(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	c := newFetchCache(t, s.Client())
	c.Timeout = 50 * time.Millisecond
	_, _, _, err := c.Fetch(context.Background(), URLSpec{URL: s.URL + "/lib.zip", SHA256: strings.Repeat("0", 64)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Fetch = %v, want a deadline error", err)
	}
	assertEmptyCache(t, c.Dir)
}
