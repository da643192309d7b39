// Package githubtest serves a fake GitHub for tests: the commits API and
// the archive endpoint, on two loopback TLS servers, over repositories
// given in memory. With [Server.Options] as the hub's
// pkgtree.GitHubOptions, an install from https://github.com/OWNER/REPO (a
// catalog item's or a direct one) goes through pkgtree's real GitHub path
// (commit resolution, the tar.gz download, its checks) with no network
// beyond loopback.
package githubtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
)

// Server is a fake GitHub. Its servers close when the test ends.
type Server struct {
	t            testing.TB
	api, archive *httptest.Server

	mu    sync.Mutex
	repos map[string]repo // "owner/name"
}

type repo struct {
	commit  string
	tarball []byte
}

// New starts a fake GitHub with no repository.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, repos: map[string]repo{}}
	s.api = httptest.NewTLSServer(http.HandlerFunc(s.serveCommit))
	s.archive = httptest.NewTLSServer(http.HandlerFunc(s.serveArchive))
	t.Cleanup(s.api.Close)
	t.Cleanup(s.archive.Close)
	return s
}

// Add publishes the repository owner/name with files (path → content; a
// .py or .sh file is executable) as one commit on every ref, replacing
// what it held, and returns the commit's id and the repository's URL.
func (s *Server) Add(owner, name string, files map[string]string) (commit, url string) {
	s.t.Helper()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha1.New()
	for _, p := range paths {
		h.Write([]byte(p + "\x00" + files[p] + "\x00"))
	}
	commit = hex.EncodeToString(h.Sum(nil))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	top := name + "-" + commit + "/"
	write := func(hdr *tar.Header, data string) {
		if err := tw.WriteHeader(hdr); err != nil {
			s.t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			s.t.Fatal(err)
		}
	}
	write(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": commit}}, "")
	write(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o755}, "")
	for _, p := range paths {
		mode := int64(0o644)
		if strings.HasSuffix(p, ".py") || strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		write(&tar.Header{Typeflag: tar.TypeReg, Name: top + p, Mode: mode, Size: int64(len(files[p]))}, files[p])
	}
	if err := tw.Close(); err != nil {
		s.t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.repos[owner+"/"+name] = repo{commit: commit, tarball: buf.Bytes()}
	s.mu.Unlock()
	return commit, "https://github.com/" + owner + "/" + name
}

// Options are the hub's GitHub options that reach this fake.
func (s *Server) Options() *pkgtree.GitHubOptions {
	return &pkgtree.GitHubOptions{APIBase: s.api.URL, ArchiveBase: s.archive.URL, Client: s.api.Client()}
}

func (s *Server) lookup(owner, name string) (repo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.repos[owner+"/"+name]
	return r, ok
}

// serveCommit answers GET /repos/OWNER/NAME/commits/REF with the commit's
// id, as GitHub does for the sha media type.
func (s *Server) serveCommit(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/repos/"), "/", 4)
	if len(parts) != 4 || parts[2] != "commits" {
		http.NotFound(w, r)
		return
	}
	rp, ok := s.lookup(parts[0], parts[1])
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	w.Write([]byte(rp.commit))
}

// serveArchive answers GET /OWNER/NAME/tar.gz/COMMIT with the tarball.
func (s *Server) serveArchive(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[2] != "tar.gz" {
		http.NotFound(w, r)
		return
	}
	rp, ok := s.lookup(parts[0], parts[1])
	if !ok || parts[3] != rp.commit {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Write(rp.tarball)
}
