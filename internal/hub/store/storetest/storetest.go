// Package storetest is the conformance suite every hub store backend
// passes: the same tests, run against SQLite and PostgreSQL.
package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// Opener opens one database, always the same one, with the options given
// (Dir and Database are the backend's to fill). Each call is a new
// connection to it, as another process would have.
type Opener func(opts store.Options) (*store.DB, error)

// NewDatabase makes a new, empty database and returns its Opener.
type NewDatabase func(t *testing.T) Opener

// Run runs the suite against a backend.
func Run(t *testing.T, newDB NewDatabase) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"InstallAndRead", testInstallAndRead},
		{"SameTreeTwice", testSameTreeTwice},
		{"ChangedTreeIsNewVersion", testChangedTree},
		{"ChunkedBlobs", testChunkedBlobs},
		{"InvalidRefused", testInvalidRefused},
		{"Labels", testLabels},
		{"BoundVersionNotDeleted", testBoundVersion},
		{"DeleteRemovesOrphanBlobs", testDeleteOrphans},
		{"RequireApproval", testRequireApproval},
		{"ConcurrentInstallsOfOneVersion", testConcurrentInstalls},
		{"ConcurrentOpensOfEmptyDatabase", testConcurrentOpens},
		{"Reopen", testReopen},
		{"IndexSnapshots", testIndexSnapshots},
		{"Materialize", testMaterialize},
		{"Lists", testLists},
	}
	tests = append(tests, projectTests...)
	tests = append(tests, jobTests...)
	tests = append(tests, consoleTests...)
	tests = append(tests, replicaTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newDB(t)) })
	}
}

func mustOpen(t *testing.T, open Opener, opts store.Options) *store.DB {
	t.Helper()
	s, err := open(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Tree builds NewVersions for tests.
type Tree map[string]string // path -> content; "x:" prefix marks an executable

// Version makes a NewVersion of package pkg from the tree, with its tree
// digest computed as pkgtree defines it.
func Version(pkg string, tree Tree) store.NewVersion {
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	nv := store.NewVersion{
		Package:     pkg,
		Frontmatter: json.RawMessage(`{"name":"` + pkg + `","description":"test","zeta":1,"alpha":2}`),
		Origin:      json.RawMessage(`{"kind":"zip","file_name":"` + pkg + `.zip"}`),
		Inspection:  json.RawMessage(`{"findings":[],"note":"inspection is not proof of safety"}`),
	}
	h := sha256.New()
	for _, p := range paths {
		content, mode := tree[p], uint32(0o644)
		if c, ok := strings.CutPrefix(content, "x:"); ok {
			content, mode = c, 0o755
		}
		d := sha256.Sum256([]byte(content))
		nv.Files = append(nv.Files, store.NewFile{Path: p, Mode: mode, Size: int64(len(content)), Digest: d, Data: []byte(content)})
		fmt.Fprintf(h, "%s\x00%o\x00%s\n", p, mode, hex.EncodeToString(d[:]))
	}
	nv.TreeDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return nv
}

func install(t *testing.T, s *store.DB, nv store.NewVersion) store.Version {
	t.Helper()
	v, _, err := s.Install(context.Background(), nv)
	if err != nil {
		t.Fatalf("install %s: %v", nv.Package, err)
	}
	return v
}

func stats(t *testing.T, s *store.DB) store.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var basic = Tree{
	"SKILL.md":           "---\nname: demo\ndescription: test\n---\nbody\n",
	"scripts/run.py":     "x:#!/usr/bin/env python3\nprint('hi')\n",
	"references/ref.md":  "reference\n",
	"assets/empty.txt":   "",
	".origin/LICENSE":    "MIT\n",
	"references/ref2.md": "reference\n", // same content as ref.md: one blob
}

func testInstallAndRead(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	nv := Version("demo", basic)
	v, created, err := s.Install(ctx, nv)
	if err != nil || !created {
		t.Fatalf("Install = %v, created %v", err, created)
	}
	if v.Package != "demo" || v.TreeDigest != nv.TreeDigest || v.FileCount != len(basic) || v.ID == 0 {
		t.Fatalf("version = %+v", v)
	}
	if string(v.Frontmatter) != string(nv.Frontmatter) || string(v.Origin) != string(nv.Origin) || string(v.Inspection) != string(nv.Inspection) {
		t.Fatalf("JSON not kept verbatim: %s %s %s", v.Frontmatter, v.Origin, v.Inspection)
	}
	if v.Approved() || v.CreatedAt.IsZero() {
		t.Fatalf("labels = %+v, created %v", v.Labels, v.CreatedAt)
	}
	files, err := s.VersionFiles(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, f := range files {
		paths = append(paths, f.Path)
		if f.Path != nv.Files[i].Path || f.Mode != nv.Files[i].Mode || f.Size != nv.Files[i].Size || f.Digest != nv.Files[i].Digest {
			t.Errorf("file %d = %+v, want %+v", i, f, nv.Files[i])
		}
	}
	if len(files) != len(nv.Files) {
		t.Fatalf("files = %v", paths)
	}
	for _, f := range nv.Files {
		got, err := s.ReadFile(ctx, v.ID, f.Path)
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", f.Path, got, err, f.Data)
		}
	}
	if _, err := s.ReadFile(ctx, v.ID, "nope.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReadFile(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.GetVersion(ctx, v.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetVersion(missing) = %v, want ErrNotFound", err)
	}
	if _, err := s.VersionFiles(ctx, v.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("VersionFiles(missing) = %v, want ErrNotFound", err)
	}
	got, err := s.FindVersion(ctx, nv.TreeDigest)
	if err != nil || got.ID != v.ID {
		t.Errorf("FindVersion = %+v, %v", got, err)
	}
	st := stats(t, s)
	// ref.md and ref2.md share a blob.
	if st.Versions != 1 || st.Packages != 1 || st.Blobs != len(basic)-1 {
		t.Errorf("stats = %+v", st)
	}
}

func testSameTreeTwice(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v1 := install(t, s, Version("demo", basic))
	before := stats(t, s)
	v2, created, err := s.Install(ctx, Version("demo", basic))
	if err != nil || created || v2.ID != v1.ID {
		t.Fatalf("second Install = %+v created=%v err=%v; want version %d, not created", v2, created, err, v1.ID)
	}
	if after := stats(t, s); after != before {
		t.Errorf("second install changed the store: %+v -> %+v", before, after)
	}
}

func testChangedTree(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v1 := install(t, s, Version("demo", basic))
	before := stats(t, s)
	changed := Tree{}
	for p, c := range basic {
		changed[p] = c
	}
	changed["SKILL.md"] += "more\n"
	v2, created, err := s.Install(ctx, Version("demo", changed))
	if err != nil || !created || v2.ID == v1.ID {
		t.Fatalf("Install(changed) = %+v, %v, %v", v2, created, err)
	}
	after := stats(t, s)
	if after.Blobs != before.Blobs+1 || after.Versions != 2 || after.Packages != 1 {
		t.Errorf("stats %+v -> %+v; want one new blob, two versions", before, after)
	}
	vs, err := s.ListVersions(ctx, "demo")
	if err != nil || len(vs) != 2 || vs[0].ID != v1.ID || vs[1].ID != v2.ID {
		t.Fatalf("ListVersions = %+v, %v", vs, err)
	}
	old, err := s.ReadFile(ctx, v1.ID, "SKILL.md")
	if err != nil || string(old) != basic["SKILL.md"] {
		t.Errorf("old version's SKILL.md = %q, %v", old, err)
	}
}

func testChunkedBlobs(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	big := make([]byte, 2*store.ChunkSize+12345)
	for i := range big {
		big[i] = byte(i * 7 / 13)
	}
	exact := bytes.Repeat([]byte{'e'}, store.ChunkSize)
	v := install(t, s, Version("big", Tree{"SKILL.md": "---\nname: big\n---\n", "assets/big.bin": string(big), "assets/exact.bin": string(exact)}))
	got, err := s.ReadFile(ctx, v.ID, "assets/big.bin")
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("ReadFile(big) = %d bytes, %v", len(got), err)
	}
	got, err = s.ReadFile(ctx, v.ID, "assets/exact.bin")
	if err != nil || !bytes.Equal(got, exact) {
		t.Fatalf("ReadFile(exact) = %d bytes, %v", len(got), err)
	}
	if st := stats(t, s); st.Chunks != 3+1+1 || st.BlobBytes != int64(len(big)+len(exact)+len("---\nname: big\n---\n")) {
		t.Errorf("stats = %+v; want 5 chunks", st)
	}
}

func testInvalidRefused(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	good := Version("demo", basic)
	cases := map[string]func(nv *store.NewVersion){
		"digest mismatch": func(nv *store.NewVersion) {
			nv.Files[len(nv.Files)-1].Data = []byte("tampered")
			nv.Files[len(nv.Files)-1].Size = int64(len("tampered"))
		},
		"unsorted":       func(nv *store.NewVersion) { nv.Files[0], nv.Files[1] = nv.Files[1], nv.Files[0] },
		"duplicate":      func(nv *store.NewVersion) { nv.Files[1] = nv.Files[0] },
		"traversal":      func(nv *store.NewVersion) { nv.Files[0].Path = "../x" },
		"absolute":       func(nv *store.NewVersion) { nv.Files[0].Path = "/etc/x" },
		"bad mode":       func(nv *store.NewVersion) { nv.Files[0].Mode = 0o777 },
		"size lie":       func(nv *store.NewVersion) { nv.Files[0].Size++ },
		"no SKILL.md":    func(nv *store.NewVersion) { nv.Files = nv.Files[:1] },
		"bad digest":     func(nv *store.NewVersion) { nv.TreeDigest = "md5:abc" },
		"bad JSON":       func(nv *store.NewVersion) { nv.Origin = json.RawMessage(`{`) },
		"no package":     func(nv *store.NewVersion) { nv.Package = "" },
		"no frontmatter": func(nv *store.NewVersion) { nv.Frontmatter = nil },
	}
	for name, mutate := range cases {
		nv := good
		nv.Files = slices.Clone(good.Files)
		mutate(&nv)
		if _, _, err := s.Install(ctx, nv); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: Install = %v, want ErrInvalid", name, err)
		}
	}
	if st := stats(t, s); st != (store.Stats{}) {
		t.Errorf("refused installs left %+v", st)
	}
}

func testLabels(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v := install(t, s, Version("demo", basic))
	a, err := s.Approve(ctx, v.ID, "alice")
	if err != nil || !a.Approved() || a.Labels.ApprovedBy != "alice" || a.Labels.ApprovedAt.IsZero() {
		t.Fatalf("Approve = %+v, %v", a.Labels, err)
	}
	if a.TreeDigest != v.TreeDigest || string(a.Frontmatter) != string(v.Frontmatter) {
		t.Errorf("approval changed the version")
	}
	n, err := s.SetNotes(ctx, v.ID, "reviewed scripts")
	if err != nil || n.Labels.Notes != "reviewed scripts" || n.Labels.ApprovedBy != "alice" {
		t.Fatalf("SetNotes = %+v, %v", n.Labels, err)
	}
	u, err := s.Unapprove(ctx, v.ID)
	if err != nil || u.Approved() || u.Labels.Notes != "reviewed scripts" {
		t.Fatalf("Unapprove = %+v, %v", u.Labels, err)
	}
	if _, err := s.Approve(ctx, v.ID, " "); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Approve(blank) = %v, want ErrInvalid", err)
	}
	if _, err := s.Approve(ctx, v.ID+99, "alice"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Approve(missing) = %v, want ErrNotFound", err)
	}
}

func testBoundVersion(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v := install(t, s, Version("demo", basic))
	if err := s.CreateProject(ctx, "p1", "Project one"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateProject(ctx, "p1", "again"); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateProject(dup) = %v, want ErrExists", err)
	}
	if err := s.Bind(ctx, "nope", v.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Bind(missing project) = %v, want ErrNotFound", err)
	}
	if err := s.Bind(ctx, "p1", v.ID+99); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Bind(missing version) = %v, want ErrNotFound", err)
	}
	for range 2 { // binding twice is fine
		if err := s.Bind(ctx, "p1", v.ID); err != nil {
			t.Fatal(err)
		}
	}
	err := s.DeleteVersion(ctx, v.ID)
	var be *store.BoundError
	if !errors.As(err, &be) || !errors.Is(err, store.ErrVersionBound) || !slices.Equal(be.Projects, []string{"p1"}) {
		t.Fatalf("DeleteVersion(bound) = %v, want a BoundError naming p1", err)
	}
	if _, err := s.ReadFile(ctx, v.ID, "SKILL.md"); err != nil {
		t.Fatalf("refused delete damaged the version: %v", err)
	}
	if err := s.Unbind(ctx, "p1", v.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteVersion(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteVersion(ctx, v.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteVersion(again) = %v, want ErrNotFound", err)
	}
}

func testDeleteOrphans(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v1 := install(t, s, Version("demo", basic))
	other := Tree{"SKILL.md": basic["SKILL.md"], "only.md": "only in v2\n"}
	v2 := install(t, s, Version("demo", other))
	if err := s.DeleteVersion(ctx, v1.ID); err != nil {
		t.Fatal(err)
	}
	st := stats(t, s)
	if st.Versions != 1 || st.Blobs != 2 || st.Chunks != 2 {
		t.Errorf("after deleting v1: %+v; want v2's two blobs only", st)
	}
	if got, err := s.ReadFile(ctx, v2.ID, "SKILL.md"); err != nil || string(got) != basic["SKILL.md"] {
		t.Errorf("shared blob lost: %q, %v", got, err)
	}
	if err := s.DeleteVersion(ctx, v2.ID); err != nil {
		t.Fatal(err)
	}
	if st := stats(t, s); st != (store.Stats{}) {
		t.Errorf("after deleting all: %+v", st)
	}
	if _, err := s.ListVersions(ctx, "demo"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ListVersions(emptied) = %v, want ErrNotFound", err)
	}
}

func testRequireApproval(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{RequireApproval: true})
	v := install(t, s, Version("demo", basic))
	if err := s.CreateProject(ctx, "p", "p"); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(ctx, "p", v.ID); !errors.Is(err, store.ErrNotApproved) {
		t.Fatalf("Bind(unapproved) = %v, want ErrNotApproved", err)
	}
	if b, _ := s.Bindings(ctx, v.ID); len(b) != 0 {
		t.Fatalf("refused bind left %v", b)
	}
	if _, err := s.Approve(ctx, v.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind(ctx, "p", v.ID); err != nil {
		t.Fatalf("Bind(approved) = %v", err)
	}
	// Without the option, approval is not needed.
	s2 := mustOpen(t, open, store.Options{})
	v2 := install(t, s2, Version("other", Tree{"SKILL.md": "other"}))
	if err := s2.Bind(ctx, "p", v2.ID); err != nil {
		t.Fatalf("Bind without RequireApproval = %v", err)
	}
}

func testConcurrentInstalls(t *testing.T, open Opener) {
	ctx := context.Background()
	const n = 8
	nv := Version("demo", basic)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		ids     = map[int64]bool{}
		errs    []error
	)
	stores := make([]*store.DB, n)
	for i := range stores {
		stores[i] = mustOpen(t, open, store.Options{})
	}
	for i := range n {
		wg.Go(func() {
			v, c, err := stores[i].Install(ctx, nv)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			ids[v.ID] = true
			if c {
				created++
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 || created != 1 || len(ids) != 1 {
		t.Fatalf("concurrent installs: errors %v, created %d, ids %v; want one creation, one id", errs, created, ids)
	}
	if st := stats(t, stores[0]); st.Versions != 1 || st.Blobs != len(basic)-1 || st.Chunks != len(basic)-2 {
		t.Errorf("stats = %+v", st)
	}
}

func testConcurrentOpens(t *testing.T, open Opener) {
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := open(store.Options{})
			if err == nil {
				_, err = s.ListPackages(context.Background())
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d of an empty database at once: %v", i, err)
		}
	}
}

func testReopen(t *testing.T, open Opener) {
	ctx := context.Background()
	s, err := open(store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := install(t, s, Version("demo", basic))
	if err := s.PutIndexSnapshot(ctx, []byte(`{"schema_version":1,"items":[]}`), "bundled"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := mustOpen(t, open, store.Options{})
	got, err := s2.GetVersion(ctx, v.ID)
	if err != nil || got.TreeDigest != v.TreeDigest {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	if raw, src, err := s2.LatestIndexSnapshot(ctx); err != nil || src != "bundled" || len(raw) == 0 {
		t.Fatalf("snapshot after reopen: %q %q %v", raw, src, err)
	}
}

func testIndexSnapshots(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	raw, src, err := s.LatestIndexSnapshot(ctx)
	if raw != nil || src != "" || err != nil {
		t.Fatalf("empty store: %q %q %v; want nil, \"\", nil", raw, src, err)
	}
	for i := range 6 {
		if err := s.PutIndexSnapshot(ctx, fmt.Appendf(nil, `{"schema_version":1,"n":%d}`, i), fmt.Sprintf("src%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	raw, src, err = s.LatestIndexSnapshot(ctx)
	if err != nil || src != "src5" || string(raw) != `{"schema_version":1,"n":5}` {
		t.Fatalf("latest = %q %q %v", raw, src, err)
	}
	if err := s.PutIndexSnapshot(ctx, nil, "empty"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Put(empty) = %v, want ErrInvalid", err)
	}
	if _, src, _ := s.LatestIndexSnapshot(ctx); src != "src5" {
		t.Errorf("a refused put replaced the last good snapshot: %s", src)
	}
}

func testMaterialize(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	v := install(t, s, Version("demo", basic))
	cache := filepath.Join(t.TempDir(), "cache")
	t.Cleanup(func() { makeWritable(cache) })
	check := func(dir string) {
		t.Helper()
		for p, c := range basic {
			c, exec := strings.CutPrefix(c, "x:")
			fp := filepath.Join(dir, filepath.FromSlash(p))
			got, err := os.ReadFile(fp)
			if err != nil || string(got) != c {
				t.Errorf("%s = %q, %v", p, got, err)
			}
			fi, err := os.Stat(fp)
			if err != nil {
				continue
			}
			if fi.Mode().Perm()&0o222 != 0 || (fi.Mode().Perm()&0o100 != 0) != exec {
				t.Errorf("%s mode %v", p, fi.Mode())
			}
		}
	}
	dir, err := s.Materialize(ctx, v.ID, cache)
	if err != nil {
		t.Fatal(err)
	}
	check(dir)
	// Deleting the cache loses nothing.
	makeWritable(cache)
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	dir2, err := s.Materialize(ctx, v.ID, cache)
	if err != nil || dir2 != dir {
		t.Fatalf("after deleting the cache: %s, %v", dir2, err)
	}
	check(dir)
	// A tampered copy is found and rebuilt.
	skill := filepath.Join(dir, "SKILL.md")
	os.Chmod(dir, 0o755)
	os.Chmod(skill, 0o644)
	if err := os.WriteFile(skill, []byte("evil"), 0o444); err != nil {
		t.Fatal(err)
	}
	os.Chmod(skill, 0o444)
	os.Chmod(dir, 0o555)
	if _, err := s.Materialize(ctx, v.ID, cache); err != nil {
		t.Fatal(err)
	}
	check(dir)
}

func makeWritable(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

func testLists(t *testing.T, open Opener) {
	ctx := context.Background()
	s := mustOpen(t, open, store.Options{})
	for _, name := range []string{"zeta", "Alpha", "beta", "alpha"} {
		install(t, s, Version(name, Tree{"SKILL.md": "v1 of " + name}))
	}
	latest := install(t, s, Version("beta", Tree{"SKILL.md": "v2 of beta"}))
	pkgs, err := s.ListPackages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		names = append(names, fmt.Sprintf("%s:%d", p.Name, p.Versions))
	}
	if want := []string{"Alpha:1", "alpha:1", "beta:2", "zeta:1"}; !slices.Equal(names, want) {
		t.Errorf("ListPackages = %v, want %v (byte order)", names, want)
	}
	if pkgs[2].Latest.ID != latest.ID {
		t.Errorf("beta's latest = %d, want %d", pkgs[2].Latest.ID, latest.ID)
	}
	if _, err := s.ListVersions(ctx, "gamma"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ListVersions(missing) = %v", err)
	}
}
