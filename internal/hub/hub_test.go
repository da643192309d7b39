package hub_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"go.uber.org/goleak"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/hub/store/pgtest"
)

var pg pgtest.Shared

func TestMain(m *testing.M) {
	code := pg.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutines left behind: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

const skillMD = "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n# PDF tools\n"

// testHub is a hub over a store the test opened.
type testHub struct {
	*hub.Hub
	db *store.DB
}

// Store returns the store under the hub.
func (h *testHub) Store() *store.DB { return h.db }

// backends runs f against a hub on SQLite and one on PostgreSQL.
func backends(t *testing.T, f func(t *testing.T, open func(store.Options) *testHub)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		f(t, func(o store.Options) *testHub { o.Dir = dir; return openHub(t, o) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := pg.Database(t)
		f(t, func(o store.Options) *testHub { o.Database = url; return openHub(t, o) })
	})
}

// openHub opens a store and a hub over it as the command line does: it
// reads repositories on this machine's disk (the tests make them there).
func openHub(t *testing.T, o store.Options) *testHub {
	t.Helper()
	db, err := store.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &testHub{Hub: hub.New(db, &hub.Options{LocalRepositories: true}), db: db}
}

func sqliteHub(t *testing.T) (*testHub, string) {
	dir := filepath.Join(t.TempDir(), "data")
	return openHub(t, store.Options{Dir: dir}), dir
}

// buildZip archives files (name → content; a name ending in "*" is
// executable).
func buildZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		hdr := &zip.FileHeader{Name: name, Method: zip.Deflate}
		hdr.SetMode(mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func installZip(t *testing.T, h *testHub, name string, data []byte, dir string) *hub.Installed {
	t.Helper()
	inst, err := h.InstallZip(context.Background(), hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: name, Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestInstallZip(t *testing.T) {
	backends(t, func(t *testing.T, open func(store.Options) *testHub) {
		h := open(store.Options{})
		ctx := context.Background()
		data := buildZip(t, map[string]string{"SKILL.md": skillMD, "scripts/fill.py*": "#!/usr/bin/env python3\nprint(1)\n"})
		var stages []string
		inst, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: "pdf.zip",
			Progress: func(p pkgtree.Progress) {
				if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
					stages = append(stages, p.Stage)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		v := inst.Version
		sum := sha256.Sum256(data)
		switch {
		case !inst.Created:
			t.Error("first install: created = false")
		case v.Package != "pdf-tools" || v.FileCount != 2 || v.Description != "Fill and merge PDF forms.":
			t.Errorf("version = %+v", v)
		case v.ID != "pdf-tools@"+strings.TrimPrefix(v.TreeDigest, "sha256:")[:hub.ShortDigest]:
			t.Errorf("id %q does not match the tree digest %s", v.ID, v.TreeDigest)
		case v.Origin != pkgtree.Origin{Kind: "zip", FileName: "pdf.zip", FileSHA256: hex.EncodeToString(sum[:])}:
			t.Errorf("origin = %+v", v.Origin)
		case len(inst.Inspection.Scripts) != 1 || inst.Inspection.Note != pkgtree.NotProofOfSafety:
			t.Errorf("inspection = %+v", inst.Inspection)
		}
		if got := strings.Join(stages, ","); got != "reading,hashing,inspecting,storing" {
			t.Errorf("progress stages = %s", got)
		}

		// The same tree in another archive (other name, other order) is
		// the same version, and costs no inspection and no write.
		stages = nil
		again := buildZip(t, map[string]string{"scripts/fill.py*": "#!/usr/bin/env python3\nprint(1)\n", "SKILL.md": skillMD})
		inst2, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(again), Size: int64(len(again)), FileName: "copy.zip",
			Progress: func(p pkgtree.Progress) { stages = append(stages, p.Stage) }})
		if err != nil {
			t.Fatal(err)
		}
		if inst2.Created || inst2.Version.ID != v.ID || inst2.Version.Origin.FileName != "pdf.zip" {
			t.Errorf("second install = created %v, %s from %s; want the first version, unchanged", inst2.Created, inst2.Version.ID, inst2.Version.Origin.FileName)
		}
		for _, s := range stages {
			if s != pkgtree.StageReading {
				t.Errorf("second install went through stage %q; want reading only", s)
			}
		}
		stats, _ := h.Store().Stats(ctx)
		if stats.Versions != 1 || stats.Blobs != 2 {
			t.Errorf("stats = %+v; want 1 version, 2 blobs", stats)
		}

		// A changed tree is a new version; the old one stays.
		changed := buildZip(t, map[string]string{"SKILL.md": skillMD, "scripts/fill.py*": "#!/usr/bin/env python3\nprint(2)\n"})
		inst3 := installZip(t, h, "pdf2.zip", changed, "")
		if !inst3.Created || inst3.Version.ID == v.ID {
			t.Fatalf("changed tree: created %v id %s", inst3.Created, inst3.Version.ID)
		}
		vs, err := h.Versions(ctx, "pdf-tools")
		if err != nil || len(vs) != 2 || vs[0].ID != v.ID || vs[1].ID != inst3.Version.ID {
			t.Fatalf("Versions = %v, %v", vs, err)
		}
		pkgs, err := h.List(ctx)
		if err != nil || len(pkgs) != 1 || pkgs[0].Versions != 2 || pkgs[0].Latest.ID != inst3.Version.ID {
			t.Fatalf("List = %+v, %v", pkgs, err)
		}
	})
}

func TestInstallZipRefusals(t *testing.T) {
	h, _ := sqliteHub(t)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		data []byte
		path string
		want error
	}{
		"corrupt":     {data: []byte("PK\x03\x04 this is not a zip"), want: pkgtree.ErrArchive},
		"traversal":   {data: buildZip(t, map[string]string{"SKILL.md": skillMD, "../evil": "x"}), want: pkgtree.ErrPath},
		"no skill":    {data: buildZip(t, map[string]string{"README.md": "hi"}), want: pkgtree.ErrNoSkill},
		"escape path": {data: buildZip(t, map[string]string{"a/SKILL.md": skillMD}), path: "../a", want: pkgtree.ErrPath},
		"case dup":    {data: buildZip(t, map[string]string{"SKILL.md": skillMD, "a.txt": "1", "A.txt": "2"}), want: pkgtree.ErrDuplicate},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(tc.data), Size: int64(len(tc.data)), FileName: "up.zip", Path: tc.path})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "up.zip") {
				t.Errorf("err = %v; want %v, naming the upload", err, tc.want)
			}
		})
	}
	if stats, _ := h.Store().Stats(ctx); stats.Versions != 0 || stats.Blobs != 0 {
		t.Errorf("refused installs left %+v", stats)
	}
}

func TestInstallZipPackageDir(t *testing.T) {
	h, _ := sqliteHub(t)
	data := buildZip(t, map[string]string{"pkg/SKILL.md": skillMD, "pkg/ref.md": "r", "other/x": "y"})
	inst := installZip(t, h, "bundle.zip", data, "pkg")
	if inst.Version.FileCount != 2 || inst.Version.Origin.Path != "pkg" {
		t.Errorf("version = %+v", inst.Version)
	}
}

// testRepo is a git repository in a temporary folder, built with go-git.
type testRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repository
}

var sig = &object.Signature{Name: "Test", Email: "test@example.com", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

func newRepo(t *testing.T) *testRepo {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: r}
}

func (r *testRepo) commit(files map[string]string) plumbing.Hash {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.t.Fatal(err)
	}
	h, err := wt.Commit("commit", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func (r *testRepo) tag(name string, h plumbing.Hash) {
	r.t.Helper()
	if _, err := r.repo.CreateTag(name, h, nil); err != nil {
		r.t.Fatal(err)
	}
}

func TestInstallGit(t *testing.T) {
	repo := newRepo(t)
	c1 := repo.commit(map[string]string{"LICENSE": "MIT", "skills/pdf/SKILL.md": skillMD, "skills/pdf/a.md": "one"})
	repo.tag("v1", c1)
	c2 := repo.commit(map[string]string{"skills/pdf/a.md": "two"})
	backends(t, func(t *testing.T, open func(store.Options) *testHub) {
		h := open(store.Options{})
		ctx := context.Background()
		inst, err := h.InstallGit(ctx, hub.GitInstall{URL: repo.dir, Path: "skills/pdf", Ref: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		o := inst.Version.Origin
		if o.Kind != "git" || o.Commit != c1.String() || o.Ref != "v1" || o.Path != "skills/pdf" || o.Repository != repo.dir {
			t.Errorf("origin = %+v", o)
		}
		in, err := h.Inspect(ctx, inst.Version.ID)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range in.Files {
			paths = append(paths, f.Path)
		}
		if got := strings.Join(paths, " "); got != ".origin/LICENSE SKILL.md a.md" {
			t.Errorf("files = %s", got)
		}
		head, err := h.InstallGit(ctx, hub.GitInstall{URL: repo.dir, Path: "skills/pdf"})
		if err != nil {
			t.Fatal(err)
		}
		if !head.Created || head.Version.Origin.Commit != c2.String() {
			t.Errorf("default branch: created %v at %s; want a new version at %s", head.Created, head.Version.Origin.Commit, c2)
		}
		for name, tc := range map[string]struct {
			g    hub.GitInstall
			want error
		}{
			"missing ref": {hub.GitInstall{URL: repo.dir, Path: "skills/pdf", Ref: "nope"}, pkgtree.ErrNotFound},
			"escape":      {hub.GitInstall{URL: repo.dir, Path: "../x"}, pkgtree.ErrPath},
		} {
			if _, err := h.InstallGit(ctx, tc.g); !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v; want %v", name, err, tc.want)
			}
		}
	})
}

func catalogDoc(t *testing.T, items ...index.Item) string {
	t.Helper()
	raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInstallCatalogItem(t *testing.T) {
	repo := newRepo(t)
	c1 := repo.commit(map[string]string{"skills/pdf/SKILL.md": skillMD})
	ctx := context.Background()

	// The tree digest the catalog would publish: install once elsewhere.
	probe, _ := sqliteHub(t)
	want, err := probe.InstallGit(ctx, hub.GitInstall{URL: repo.dir, Path: "skills/pdf", Commit: c1.String()})
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.ToSlash(repo.dir)
	item := index.Item{ID: "local/pdf", Name: "pdf-tools", Description: "PDF forms", Author: "test", Category: "documents", Repository: url, Path: "skills/pdf", Commit: c1.String()}
	bad := item
	bad.ID, bad.TreeDigest = "local/pdf-bad", "sha256:"+strings.Repeat("0", 64)
	good := item
	good.ID, good.TreeDigest = "local/pdf-good", want.Version.TreeDigest

	h, _ := sqliteHub(t)
	if _, err := h.ImportCatalog(ctx, catalogDoc(t, item, bad, good)); err != nil {
		t.Fatal(err)
	}
	hits, ix, err := h.SearchCatalog(ctx, index.Query{Text: "pdf"})
	if err != nil || ix.Len() != 3 || ix.Source() != "import:catalog.json" {
		t.Fatalf("SearchCatalog: %v, %v", ix, err)
	}
	if len(hits) != 3 {
		t.Fatalf("search: %d hits; want 3", len(hits))
	}
	if got, _, _ := h.SearchCatalog(ctx, index.Query{Category: "documents", Limit: 2}); len(got) != 2 {
		t.Errorf("browse with limit 2: %d items", len(got))
	}

	if _, err := h.InstallCatalogItem(ctx, bad.ID, nil); !errors.Is(err, hub.ErrDigestMismatch) {
		t.Errorf("mismatching digest: err = %v; want ErrDigestMismatch", err)
	}
	if stats, _ := h.Store().Stats(ctx); stats.Versions != 0 {
		t.Errorf("a refused catalog install left %d versions", stats.Versions)
	}
	inst, err := h.InstallCatalogItem(ctx, item.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := inst.Version.Origin
	if o.Kind != "catalog" || o.CatalogItem != item.ID || o.Commit != c1.String() || o.Repository != url || inst.Version.TreeDigest != want.Version.TreeDigest {
		t.Errorf("origin = %+v, digest %s", o, inst.Version.TreeDigest)
	}
	again, err := h.InstallCatalogItem(ctx, good.ID, nil)
	if err != nil || again.Created || again.Version.ID != inst.Version.ID {
		t.Errorf("item with the installed digest: %+v, %v; want the existing version", again, err)
	}
	if _, err := h.InstallCatalogItem(ctx, "no/such", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown item: err = %v", err)
	}
}

func TestResolve(t *testing.T) {
	h, _ := sqliteHub(t)
	ctx := context.Background()
	v1 := installZip(t, h, "a.zip", buildZip(t, map[string]string{"SKILL.md": skillMD}), "").Version
	hex := strings.TrimPrefix(v1.TreeDigest, "sha256:")
	for _, ref := range []string{v1.ID, "pdf-tools@" + hex[:4], "pdf-tools@" + strings.ToUpper(hex[:20]), v1.TreeDigest, "pdf-tools@" + v1.TreeDigest, "pdf-tools"} {
		got, err := h.Resolve(ctx, ref)
		if err != nil || got.ID != v1.ID {
			t.Errorf("Resolve(%q) = %s, %v; want %s", ref, got.ID, err, v1.ID)
		}
	}
	installZip(t, h, "b.zip", buildZip(t, map[string]string{"SKILL.md": skillMD, "b": "b"}), "")
	for ref, want := range map[string]error{
		"pdf-tools":                         hub.ErrAmbiguous,
		"pdf-tools@" + hex[:3]:              hub.ErrBadID,
		"pdf-tools@xyz1234":                 hub.ErrBadID,
		"sha256:1234":                       hub.ErrBadID,
		"nothing@1234":                      store.ErrNotFound,
		"pdf-tools@ffffffffffff":            store.ErrNotFound,
		"other@" + v1.TreeDigest:            store.ErrNotFound,
		"sha256:" + strings.Repeat("0", 64): store.ErrNotFound,
		"pdf\x00tools@1234":                 hub.ErrBadID,
	} {
		if _, err := h.Resolve(ctx, ref); !errors.Is(err, want) {
			t.Errorf("Resolve(%q) = %v; want %v", ref, err, want)
		}
	}
}

func TestLabelsAndUninstall(t *testing.T) {
	backends(t, func(t *testing.T, open func(store.Options) *testHub) {
		h := open(store.Options{RequireApproval: true})
		ctx := context.Background()
		shared := "shared content"
		v1 := installZip(t, h, "a.zip", buildZip(t, map[string]string{"SKILL.md": skillMD, "s.txt": shared}), "").Version
		v2 := installZip(t, h, "b.zip", buildZip(t, map[string]string{"SKILL.md": skillMD, "s.txt": shared, "b.txt": "b"}), "").Version
		if _, err := h.Approve(ctx, v1.ID, " "); err == nil {
			t.Error("an approval without an approver was accepted")
		}
		st := h.Store()
		if err := st.CreateProject(ctx, "p1", "Project one"); err != nil {
			t.Fatal(err)
		}
		if err := st.Bind(ctx, "p1", v1.StoreID()); !errors.Is(err, store.ErrNotApproved) {
			t.Errorf("binding an unapproved version under --require-approval: %v", err)
		}
		a, err := h.Approve(ctx, v1.ID, "alice")
		if err != nil || !a.Approved || a.Labels.ApprovedBy != "alice" || a.Labels.ApprovedAt.IsZero() {
			t.Fatalf("Approve = %+v, %v", a, err)
		}
		if n, err := h.SetNotes(ctx, v1.ID, "reviewed"); err != nil || n.Labels.Notes != "reviewed" {
			t.Fatalf("SetNotes = %+v, %v", n, err)
		}
		if err := st.Bind(ctx, "p1", v1.StoreID()); err != nil {
			t.Fatal(err)
		}
		_, err = h.Uninstall(ctx, v1.ID)
		var be *store.BoundError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), "p1") {
			t.Errorf("uninstalling a bound version: %v; want a *store.BoundError naming p1", err)
		}
		in, err := h.Inspect(ctx, v1.ID)
		if err != nil || len(in.Bindings) != 1 {
			t.Fatalf("Inspect after a refused uninstall: %+v, %v", in, err)
		}
		if err := st.Unbind(ctx, "p1", v1.StoreID()); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Uninstall(ctx, v1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Resolve(ctx, v1.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("uninstalled version still resolves: %v", err)
		}
		if _, err := h.Inspect(ctx, v2.ID); err != nil {
			t.Errorf("the other version: %v", err)
		}
		if stats, _ := st.Stats(ctx); stats.Versions != 1 || stats.Blobs != 3 {
			t.Errorf("after uninstall: %+v; want 1 version, 3 blobs (its own)", stats)
		}
	})
}

func TestBackupRestore(t *testing.T) {
	h, _ := sqliteHub(t)
	ctx := context.Background()
	v := installZip(t, h, "a.zip", buildZip(t, map[string]string{"SKILL.md": skillMD, "x": "y"}), "").Version
	if _, err := h.Approve(ctx, v.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := h.Store().Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	before, _ := h.List(ctx)
	dir := filepath.Join(t.TempDir(), "restored")
	if err := store.Restore(ctx, bytes.NewReader(buf.Bytes()), dir); err != nil {
		t.Fatal(err)
	}
	r := openHub(t, store.Options{Dir: dir})
	after, _ := r.List(ctx)
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if !bytes.Equal(b1, b2) {
		t.Errorf("restored list differs:\n%s\n%s", b1, b2)
	}
	if err := store.Restore(ctx, bytes.NewReader(buf.Bytes()), dir); err == nil {
		t.Error("restoring into a data directory in use succeeded")
	}
}

// FuzzResolve: any reference resolves to a version whose id it names, or
// is refused with one of Resolve's errors; it never panics.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"pdf-tools", "pdf-tools@abcd", "sha256:", "@", "pdf-tools@sha256:00", "a@b@c", ""} {
		f.Add(s)
	}
	db, err := store.Open(context.Background(), store.Options{Dir: filepath.Join(f.TempDir(), "data")})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	h := hub.New(db, nil)
	data := buildZip(f, map[string]string{"SKILL.md": skillMD})
	if _, err := h.InstallZip(context.Background(), hub.ZipInstall{R: bytes.NewReader(data), Size: int64(len(data)), FileName: "a.zip"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		v, err := h.Resolve(context.Background(), ref)
		if err == nil {
			if v.Package != "pdf-tools" {
				t.Fatalf("Resolve(%q) = %+v", ref, v)
			}
			return
		}
		if !errors.Is(err, store.ErrNotFound) && !errors.Is(err, hub.ErrBadID) && !errors.Is(err, hub.ErrAmbiguous) {
			t.Fatalf("Resolve(%q): unexpected error %v", ref, err)
		}
	})
}

func TestRefreshCatalog(t *testing.T) {
	raw, err := index.Marshal(&index.Snapshot{SchemaVersion: 1, Items: []index.Item{{ID: "a/b", Name: "pdf-tools", Description: "d", Repository: "https://example.com/a/b"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/good.json" {
			w.Write(raw)
			return
		}
		w.Write([]byte(`{"schema_version": 2, "items": []}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	h, _ := sqliteHub(t)
	ix, err := h.RefreshCatalog(ctx, srv.URL+"/good.json")
	if err != nil || ix.Len() != 1 {
		t.Fatalf("refresh: %v, %v", ix, err)
	}
	ix, err = h.RefreshCatalog(ctx, srv.URL+"/v2.json")
	if err == nil || !strings.Contains(err.Error(), "schema_version") {
		t.Errorf("refresh of a version-2 document: %v", err)
	}
	if ix == nil || ix.Len() != 1 || ix.Source() != srv.URL+"/good.json" {
		t.Errorf("after a failed refresh the catalog is %v; want the last good one", ix)
	}
}
