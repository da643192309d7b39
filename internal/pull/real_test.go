package pull_test

// Pulls from the real skills-mcp server (internal/server over
// internal/catalog) serving a copy of the repository's test library.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/pull"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

const testLibrary = "../../testdata/library"

// realServer serves a copy of the test library. Rescan picks up changes
// made to the copy.
type realServer struct {
	lib   string
	store *catalog.Store
	srv   *mcp.Server
	reads atomic.Int64
	gen   uint64
}

func newRealServer(t *testing.T) *realServer {
	t.Helper()
	lib := filepath.Join(t.TempDir(), "library")
	if err := os.CopyFS(lib, os.DirFS(testLibrary)); err != nil {
		t.Fatal(err)
	}
	return newRealServerAt(t, lib)
}

// newRealServerAt serves the library at lib in place.
func newRealServerAt(t *testing.T, lib string) *realServer {
	t.Helper()
	rs := &realServer{lib: lib}
	rs.store = catalog.NewStore(rs.scan(t))
	rs.srv = server.New(rs.store, nil)
	rs.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" {
				rs.reads.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return rs
}

func (rs *realServer) scan(t *testing.T) *catalog.Snapshot {
	t.Helper()
	root, err := os.OpenRoot(rs.lib)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	rs.gen++
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: root.FS(), Kind: "directory"}}, rs.gen, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func (rs *realServer) rescan(t *testing.T) { rs.store.Swap(rs.scan(t)) }

// client connects a new client over transport: "memory" or "http".
func (rs *realServer) client(t *testing.T, transport string) *pull.Client {
	t.Helper()
	ctx := context.Background()
	var c *pull.Client
	var err error
	switch transport {
	case "memory":
		ct, st := mcp.NewInMemoryTransports()
		ss, serr := rs.srv.Connect(ctx, st, nil)
		if serr != nil {
			t.Fatal(serr)
		}
		t.Cleanup(func() { ss.Close() })
		c, err = pull.Connect(ctx, ct, nil)
	case "http":
		ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rs.srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
		t.Cleanup(ts.Close)
		c, err = pull.Dial(ctx, pull.Endpoint{URL: ts.URL}, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// pullWith lists and pulls refs (all when none) with a fresh client.
func (rs *realServer) pullWith(t *testing.T, transport string, opts *pull.PullOptions, refs ...string) (*pull.Report, error) {
	t.Helper()
	c := rs.client(t, transport)
	entries, err := c.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) > 0 {
		if entries, err = pull.Select(entries, refs); err != nil {
			t.Fatal(err)
		}
	}
	return c.Pull(context.Background(), entries, opts)
}

// contents maps every file below root to its content.
func contents(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalContents(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("missing %s", k)
		} else if g != v {
			t.Errorf("%s differs", k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s", k)
		}
	}
}

func counts(rep *pull.Report) map[pull.Action]int {
	m := map[pull.Action]int{}
	for _, s := range rep.Skills {
		m[s.Action]++
	}
	return m
}

func TestRealKeepPath(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			rs := newRealServer(t)
			dest := filepath.Join(t.TempDir(), "skills")
			rep, err := rs.pullWith(t, transport, &pull.PullOptions{Dest: dest, KeepPath: true})
			if err != nil {
				t.Fatal(err)
			}
			// With --keep-path the destination mirrors the library.
			equalContents(t, contents(t, dest), contents(t, rs.lib))
			// platform/deploy/rollback is inside platform/deploy's folder.
			if c := counts(rep); c[pull.Created] != 8 || c[pull.Included] != 1 {
				t.Errorf("actions = %v", c)
			}
			// 20 files are listed; the nested rollback/SKILL.md is read once,
			// as part of platform/deploy.
			if rep.Reads != 19 || rs.reads.Load() != 19 {
				t.Errorf("reads = %d (server saw %d), want one per file: 19", rep.Reads, rs.reads.Load())
			}
		})
	}
}

func TestRealSync(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			rs := newRealServer(t)
			dest := filepath.Join(t.TempDir(), "skills")
			rep, err := rs.pullWith(t, transport, &pull.PullOptions{Dest: dest})
			if err != nil {
				t.Fatal(err)
			}
			if c := counts(rep); c[pull.Created] != 9 {
				t.Fatalf("actions = %v", c)
			}
			refunds := filepath.Join(dest, "refunds")
			want := contents(t, filepath.Join(rs.lib, "finance/billing/refunds"))
			equalContents(t, contents(t, refunds), want)
			before := snapshot(t, dest)

			// Without --sync or --force, existing folders are skipped.
			rs.reads.Store(0)
			rep, err = rs.pullWith(t, transport, &pull.PullOptions{Dest: dest})
			if err != nil || counts(rep)[pull.Skipped] != 9 || rs.reads.Load() != 0 {
				t.Fatalf("second pull: %v, %v, %d reads", counts(rep), err, rs.reads.Load())
			}

			// --sync on an unchanged copy: one listing, local hashing, no read,
			// no write.
			rep, err = rs.pullWith(t, transport, &pull.PullOptions{Dest: dest, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			if c := counts(rep); c[pull.Unchanged] != 9 || rs.reads.Load() != 0 || rep.Reads != 0 {
				t.Errorf("no-op sync: %v, %d reads", c, rs.reads.Load())
			}
			sameTree(t, before, snapshot(t, dest))

			// A local edit and a stray file: --sync restores the one and
			// deletes the other, reading only the changed file.
			md := filepath.Join(refunds, "SKILL.md")
			if err := os.WriteFile(md, []byte("tampered\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(refunds, "stray/empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(refunds, "stray/notes.md"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err = rs.pullWith(t, transport, &pull.PullOptions{Dest: dest, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			s := find(t, rep, "finance/billing/refunds")
			if s.Action != pull.Updated || s.Updated != 1 || s.Kept != 1 || s.Deleted != 1 || rs.reads.Load() != 1 {
				t.Errorf("sync after an edit: %+v, %d reads", s, rs.reads.Load())
			}
			equalContents(t, contents(t, refunds), want)
			if _, err := os.Stat(filepath.Join(refunds, "stray")); !errors.Is(err, os.ErrNotExist) {
				t.Error("the stray folder was not pruned")
			}
			sameTree(t, before, snapshot(t, dest))

			// A file removed upstream is deleted; nothing is read.
			if err := os.Remove(filepath.Join(rs.lib, "api-docs/references/http/v1/orders.md")); err != nil {
				t.Fatal(err)
			}
			rs.rescan(t)
			rs.reads.Store(0)
			rep, err = rs.pullWith(t, transport, &pull.PullOptions{Dest: dest, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			s = find(t, rep, "api-docs")
			if s.Action != pull.Updated || s.Deleted != 1 || s.Kept != 3 || rs.reads.Load() != 0 {
				t.Errorf("sync after an upstream removal: %+v, %d reads", s, rs.reads.Load())
			}
			equalContents(t, contents(t, filepath.Join(dest, "api-docs")), contents(t, filepath.Join(rs.lib, "api-docs")))
			if _, err := os.Stat(filepath.Join(dest, "api-docs/references/http/v1")); !errors.Is(err, os.ErrNotExist) {
				t.Error("the emptied folder v1 was not pruned")
			}

			// --force replaces a folder wholesale, reading every file.
			os.WriteFile(filepath.Join(refunds, "extra.md"), []byte("x"), 0o644)
			rs.reads.Store(0)
			rep, err = rs.pullWith(t, transport, &pull.PullOptions{Dest: dest, Force: true}, "refunds")
			if err != nil {
				t.Fatal(err)
			}
			equalContents(t, contents(t, refunds), want)
			if rs.reads.Load() != 2 || rep.Skills[0].Action != pull.Updated {
				t.Errorf("force: %+v, %d reads", rep.Skills[0], rs.reads.Load())
			}
		})
	}
}

func find(t *testing.T, rep *pull.Report, path string) pull.SkillReport {
	t.Helper()
	for _, s := range rep.Skills {
		if s.Path == path {
			return s
		}
	}
	t.Fatalf("no report for %s", path)
	return pull.SkillReport{}
}

func TestRealDryRun(t *testing.T) {
	rs := newRealServer(t)
	dest := filepath.Join(t.TempDir(), "skills")
	rep, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run created %s", dest)
	}
	// It still reads and verifies every file.
	if c := counts(rep); c[pull.Created] != 9 || rep.Reads != 20 || !rep.DryRun {
		t.Errorf("dry run: %v, %d reads", c, rep.Reads)
	}

	// On an existing copy, a dry-run sync writes nothing either.
	if _, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dest, "refunds/SKILL.md"), []byte("tampered\n"), 0o644)
	before := snapshot(t, dest)
	rep, err = rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, DryRun: true, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, dest))
	if s := find(t, rep, "finance/billing/refunds"); s.Action != pull.Updated || s.Updated != 1 {
		t.Errorf("dry-run sync: %+v", s)
	}
}

func TestRealSymlinkRefused(t *testing.T) {
	rs := newRealServer(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("keep"), 0o644)

	t.Run("skill folder", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "skills")
		os.MkdirAll(dest, 0o755)
		os.Symlink(outside, filepath.Join(dest, "refunds"))
		before, out := snapshot(t, dest), snapshot(t, outside)
		_, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, Sync: true}, "refunds")
		if err == nil || !strings.Contains(err.Error(), "refunds is a symbolic link; pull never follows links in the destination") {
			t.Fatalf("err = %v", err)
		}
		sameTree(t, before, snapshot(t, dest))
		sameTree(t, out, snapshot(t, outside))
	})
	t.Run("namespace folder", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "skills")
		os.MkdirAll(dest, 0o755)
		os.Symlink(outside, filepath.Join(dest, "finance"))
		before, out := snapshot(t, dest), snapshot(t, outside)
		_, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, KeepPath: true}, "refunds")
		if err == nil || !strings.Contains(err.Error(), "finance is a symbolic link") {
			t.Fatalf("err = %v", err)
		}
		sameTree(t, before, snapshot(t, dest))
		sameTree(t, out, snapshot(t, outside))
	})
	t.Run("destination", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "skills")
		os.Symlink(outside, dest)
		out := snapshot(t, outside)
		_, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest}, "refunds")
		if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
			t.Fatalf("err = %v", err)
		}
		sameTree(t, out, snapshot(t, outside))
	})
	t.Run("file inside a synced folder", func(t *testing.T) {
		// A link inside a skill folder is never read through: --sync
		// replaces it with the verified file.
		dest := filepath.Join(t.TempDir(), "skills")
		if _, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest}, "refunds"); err != nil {
			t.Fatal(err)
		}
		md := filepath.Join(dest, "refunds/SKILL.md")
		os.Remove(md)
		os.Symlink(filepath.Join(outside, "precious"), md)
		rep, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, Sync: true}, "refunds")
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(md); err != nil || !fi.Mode().IsRegular() || rep.Skills[0].Updated != 1 {
			t.Errorf("SKILL.md after sync: %v, %v, %+v", fi, err, rep.Skills[0])
		}
		if data, _ := os.ReadFile(filepath.Join(outside, "precious")); string(data) != "keep" {
			t.Error("the link target was written")
		}
	})
}

func TestRealNameCollision(t *testing.T) {
	rs := newRealServer(t)
	os.MkdirAll(filepath.Join(rs.lib, "other/refunds"), 0o755)
	os.WriteFile(filepath.Join(rs.lib, "other/refunds/SKILL.md"), []byte("---\nname: refunds\ndescription: Other refunds.\n---\n"), 0o644)
	rs.rescan(t)
	dest := filepath.Join(t.TempDir(), "skills")
	_, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest})
	var ce *pull.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "use --keep-path") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused pull created the destination")
	}
	if _, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, KeepPath: true}); err != nil {
		t.Fatal(err)
	}
}

// TestRealVersionControl: pull never writes into a repository's metadata,
// and never replaces or deletes a skill folder that is a repository, with
// --sync or --force; the folder and the repository stay as they were.
func TestRealVersionControl(t *testing.T) {
	rs := newRealServer(t)
	for _, tc := range []struct {
		name string
		opts pull.PullOptions
	}{
		{"sync", pull.PullOptions{Sync: true}},
		{"force", pull.PullOptions{Force: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "skills")
			if _, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest}, "refunds"); err != nil {
				t.Fatal(err)
			}
			// The user made the copy a repository (or a worktree, whose
			// .git is a file), deeper down too.
			for _, git := range []string{"refunds/.git/config", "refunds/vendor/lib/.git"} {
				p := filepath.Join(dest, filepath.FromSlash(git))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("[core]\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(dest, "refunds/SKILL.md"), []byte("edited\n"), 0o644)
			before := snapshot(t, dest)
			opts := tc.opts
			opts.Dest = dest
			_, err := rs.pullWith(t, "memory", &opts, "refunds")
			if err == nil || !strings.Contains(err.Error(), "refunds holds ") || !strings.Contains(err.Error(), "pull never replaces or deletes version-control metadata") {
				t.Fatalf("err = %v", err)
			}
			sameTree(t, before, snapshot(t, dest))
		})
	}
	t.Run("destination inside .git", func(t *testing.T) {
		repo := t.TempDir()
		dest := filepath.Join(repo, ".git", "hooks")
		os.MkdirAll(dest, 0o755)
		before := snapshot(t, repo)
		_, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest}, "refunds")
		if err == nil || !strings.Contains(err.Error(), "lies inside a .git folder; pull never writes into version-control metadata") {
			t.Fatalf("err = %v", err)
		}
		sameTree(t, before, snapshot(t, repo))
		// Through a link above the destination too.
		link := filepath.Join(t.TempDir(), "innocent")
		os.Symlink(filepath.Join(repo, ".git"), link)
		_, err = rs.pullWith(t, "memory", &pull.PullOptions{Dest: filepath.Join(link, "skills")}, "refunds")
		if err == nil || !strings.Contains(err.Error(), "lies inside a .git folder") {
			t.Fatalf("through a link: err = %v", err)
		}
		sameTree(t, before, snapshot(t, repo))
	})
}

// TestRealSyncFolderLink: a folder inside a synced skill swapped for a link
// out of the destination is never written through; --sync replaces the
// link with the verified folder.
func TestRealSyncFolderLink(t *testing.T) {
	rs := newRealServer(t)
	dest := filepath.Join(t.TempDir(), "skills")
	if _, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest}, "refunds"); err != nil {
		t.Fatal(err)
	}
	var sub string
	ents, _ := os.ReadDir(filepath.Join(dest, "refunds"))
	for _, e := range ents {
		if e.IsDir() {
			sub = e.Name()
		}
	}
	if sub == "" {
		t.Fatal("the test skill has no folder; the test proves nothing")
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "precious"), []byte("keep"), 0o644)
	out := snapshot(t, outside)
	os.RemoveAll(filepath.Join(dest, "refunds", sub))
	os.Symlink(outside, filepath.Join(dest, "refunds", sub))
	if _, err := rs.pullWith(t, "memory", &pull.PullOptions{Dest: dest, Sync: true}, "refunds"); err != nil {
		t.Fatal(err)
	}
	sameTree(t, out, snapshot(t, outside))
	if fi, err := os.Lstat(filepath.Join(dest, "refunds", sub)); err != nil || !fi.IsDir() {
		t.Errorf("%s after sync: %v, %v", sub, fi, err)
	}
	equalContents(t, contents(t, filepath.Join(dest, "refunds")), contents(t, filepath.Join(rs.lib, "finance/billing/refunds")))
}
