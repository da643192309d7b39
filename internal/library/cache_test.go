package library

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func libZip(t testing.TB, version string) string {
	t.Helper()
	return writeZip(t, goodZip(t,
		"lib/demo/SKILL.md", skillMD,
		"lib/demo/VERSION", version,
		"lib/demo/references/long.txt", strings.Repeat("long ", 5000),
	))
}

func mustExtract(t testing.TB, c *Cache, zp string) (string, string) {
	t.Helper()
	dir, digest, err := c.Extract(context.Background(), zp)
	if err != nil {
		t.Fatal(err)
	}
	return dir, digest
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// TestExtractVerifiesCachedTree tampers with a cached extraction in several
// ways; a new Cache (a new process) notices on first use and extracts again.
func TestExtractVerifiesCachedTree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, final string)
	}{
		{"edited-same-size", func(t *testing.T, final string) {
			p := filepath.Join(final, treeName, "lib/demo/VERSION")
			os.WriteFile(p, []byte("v9"), 0o644)
		}},
		{"extra-file", func(t *testing.T, final string) {
			os.WriteFile(filepath.Join(final, treeName, "lib/demo/extra.md"), []byte("injected"), 0o644)
		}},
		{"missing-file", func(t *testing.T, final string) {
			os.Remove(filepath.Join(final, treeName, "lib/demo/references/long.txt"))
		}},
		{"file-replaced-by-symlink", func(t *testing.T, final string) {
			p := filepath.Join(final, treeName, "lib/demo/VERSION")
			os.Remove(p)
			os.Symlink("/etc/passwd", p)
		}},
		{"record-corrupt", func(t *testing.T, final string) {
			os.WriteFile(filepath.Join(final, recordName), []byte("{not json"), 0o644)
		}},
		{"record-missing", func(t *testing.T, final string) {
			os.Remove(filepath.Join(final, recordName))
		}},
		{"partial-after-crash", func(t *testing.T, final string) {
			os.Truncate(filepath.Join(final, treeName, "lib/demo/references/long.txt"), 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cacheDir := t.TempDir()
			zp := libZip(t, "v1")
			c1 := &Cache{Dir: cacheDir}
			_, digest := mustExtract(t, c1, zp)
			c1.Close()
			tc.tamper(t, filepath.Join(cacheDir, digest))

			var logs bytes.Buffer
			c2 := &Cache{Dir: cacheDir, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			defer c2.Close()
			dir, digest2 := mustExtract(t, c2, zp)
			if digest2 != digest {
				t.Fatalf("digest changed: %s", digest2)
			}
			got := readTree(t, dir)
			if got["lib/demo/VERSION"] != "v1" || len(got) != 3 || len(got["lib/demo/references/long.txt"]) != 25000 {
				t.Errorf("tree not restored: %v", keys(got))
			}
			assertModes(t, dir)
			if !strings.Contains(logs.String(), "fails its integrity check") {
				t.Errorf("no warning logged: %q", logs.String())
			}
		})
	}
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

// TestExtractVerifiesOncePerProcess: a Cache verifies an extraction the
// first time it uses it, not on every later call (a rescan of an unchanged
// archive costs a hash of the archive, not of the tree).
func TestExtractVerifiesOncePerProcess(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	defer c.Close()
	zp := libZip(t, "v1")
	dir, _ := mustExtract(t, c, zp)
	os.WriteFile(filepath.Join(dir, "lib/demo/VERSION"), []byte("v9"), 0o644)
	dir2, _ := mustExtract(t, c, zp)
	if got := readTree(t, dir2)["lib/demo/VERSION"]; got != "v9" {
		t.Errorf("second use re-verified the tree (VERSION = %q)", got)
	}
}

// TestExtractTamperedInUse: a tampered extraction that another process
// holds is not pulled from under it; the error says why.
func TestExtractTamperedInUse(t *testing.T) {
	if !canLock {
		t.Skip("no flock on this system")
	}
	cacheDir := t.TempDir()
	zp := libZip(t, "v1")
	c1 := &Cache{Dir: cacheDir}
	defer c1.Close()
	dir, _ := mustExtract(t, c1, zp)
	os.WriteFile(filepath.Join(dir, "lib/demo/VERSION"), []byte("v9"), 0o644)
	c2 := &Cache{Dir: cacheDir}
	defer c2.Close()
	_, _, err := c2.Extract(context.Background(), zp)
	if err == nil || !strings.Contains(err.Error(), "another process is using it") {
		t.Fatalf("Extract = %v, want an in-use error", err)
	}
	if !exists(dir) {
		t.Error("the extraction in use was removed")
	}
}

// TestExtractLimitsApplyToCache: lowering a limit refuses an archive that
// was extracted under the old one.
func TestExtractLimitsApplyToCache(t *testing.T) {
	cacheDir := t.TempDir()
	zp := libZip(t, "v1")
	c1 := &Cache{Dir: cacheDir}
	mustExtract(t, c1, zp)
	c1.Close()
	c2 := &Cache{Dir: cacheDir, Limits: Limits{MaxEntryBytes: 1000}}
	defer c2.Close()
	if _, _, err := c2.Extract(context.Background(), zp); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Extract = %v, want ErrTooLarge", err)
	}
}

// TestPrune covers the use counting rule: every Extract is one use, and the
// extraction goes when the last use in the last process ends.
func TestPrune(t *testing.T) {
	cacheDir := t.TempDir()
	v1, v2 := libZip(t, "v1"), libZip(t, "v2")
	c := &Cache{Dir: cacheDir}
	defer c.Close()

	_, d1 := mustExtract(t, c, v1)
	_, d1b := mustExtract(t, c, v1) // a rescan of the unchanged archive
	if d1b != d1 {
		t.Fatal("digest changed")
	}
	if err := c.Prune(d1); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(cacheDir, d1)) {
		t.Fatal("pruned while a use remained")
	}
	// The archive changes: the new one serves, the old one is pruned.
	_, d2 := mustExtract(t, c, v2)
	if err := c.Prune(d1); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(cacheDir, d1)) {
		t.Error("replaced extraction not pruned")
	}
	if !exists(filepath.Join(cacheDir, d2, treeName, "lib/demo/SKILL.md")) {
		t.Error("current extraction damaged")
	}
	// Pruning what is not there is not an error; a malformed digest is.
	if err := c.Prune(d1); err != nil {
		t.Errorf("Prune of a pruned digest: %v", err)
	}
	if err := c.Prune("../../etc"); err == nil {
		t.Error("Prune accepted a path")
	}
	// After a prune, the same archive extracts again.
	dir, _ := mustExtract(t, c, v1)
	if readTree(t, dir)["lib/demo/VERSION"] != "v1" {
		t.Error("re-extraction after prune failed")
	}
}

// TestPruneInUseElsewhere: one process never removes another's extraction.
func TestPruneInUseElsewhere(t *testing.T) {
	if !canLock {
		t.Skip("no flock on this system")
	}
	cacheDir := t.TempDir()
	zp := libZip(t, "v1")
	a := &Cache{Dir: cacheDir}
	b := &Cache{Dir: cacheDir}
	_, d := mustExtract(t, a, zp)
	mustExtract(t, b, zp)
	if err := a.Prune(d); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(cacheDir, d, treeName, "lib/demo/SKILL.md")) {
		t.Fatal("pruned an extraction another process uses")
	}
	// Once b is gone (Close, or exit), the next prune removes it.
	b.Close()
	if err := a.Prune(d); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(cacheDir, d)) {
		t.Error("not pruned once unused")
	}
	a.Close()
}

// TestSweep removes work abandoned by a dead process, and nothing else.
func TestSweep(t *testing.T) {
	if !canLock {
		t.Skip("no flock on this system")
	}
	cacheDir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	mk := func(name string, age time.Time) string {
		p := filepath.Join(cacheDir, name)
		os.MkdirAll(filepath.Join(p, "tree"), 0o755)
		os.Chtimes(p, age, age)
		return p
	}
	abandoned := mk(tmpPrefix+"abandoned", old)
	trash := mk(trashPrefix+"abandoned", old)
	// Left by a process killed ten seconds ago, restarted at once.
	killed := mk(tmpPrefix+"killed", time.Now().Add(-10*time.Second))
	fresh := mk(tmpPrefix+"fresh", time.Now())
	held := mk(tmpPrefix+"held", old)
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := tryLockExclusive(f); !ok || err != nil {
		t.Fatal("cannot lock", err)
	}
	os.MkdirAll(filepath.Join(cacheDir, downloadsDir), 0o700)
	dl := filepath.Join(cacheDir, downloadsDir, tmpPrefix+"1.zip")
	os.WriteFile(dl, []byte("partial"), 0o600)
	os.Chtimes(dl, old, old)

	c := &Cache{Dir: cacheDir}
	defer c.Close()
	mustExtract(t, c, libZip(t, "v1"))
	for p, want := range map[string]bool{abandoned: false, trash: false, killed: false, dl: false, fresh: true, held: true} {
		if exists(p) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), !want, want)
		}
	}
}

// TestExtractUnstableArchive: an archive edited while it was read is not
// stored under the digest of what was hashed.
func TestExtractUnstableArchive(t *testing.T) {
	cacheDir := t.TempDir()
	c := &Cache{Dir: cacheDir}
	defer c.Close()
	if err := c.init(); err != nil {
		t.Fatal(err)
	}
	data := goodZip(t, "lib/demo/SKILL.md", skillMD)
	digest, _ := hashFile(context.Background(), bytes.NewReader(data), int64(len(data)))
	changed := errors.New("the archive changed while it was being read")
	_, err := c.use(context.Background(), bytes.NewReader(data), int64(len(data)), digest, "lib.zip", func() error { return changed })
	if !errors.Is(err, changed) {
		t.Fatalf("use = %v", err)
	}
	assertEmptyCache(t, cacheDir)
}

// TestExtractCancelled: a cancelled context stops and leaves nothing.
func TestExtractCancelled(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Extract(ctx, libZip(t, "v1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Extract = %v", err)
	}
	assertEmptyCache(t, c.Dir)
}

// TestCopyEntryBudget drives the inflated-byte counter directly: with
// declared sizes that archive/zip enforces, an archive cannot reach it
// through Extract, so this is the defence in depth on its own.
func TestCopyEntryBudget(t *testing.T) {
	content := bytes.Repeat([]byte("x"), 10000)
	for _, tc := range []struct {
		name     string
		declared uint64
		budget   int64
		maxEntry int64
		err      error
		detail   string
	}{
		{"per-entry", 1 << 30, 1 << 30, 4096, ErrTooLarge, "per-entry limit"},
		{"total", 1 << 30, 4096, 1 << 30, ErrTooLarge, "total limit"},
		{"declared", 100, 1 << 30, 1 << 30, ErrCorrupt, "declared size"},
		{"short", 20000, 1 << 30, 1 << 30, ErrCorrupt, "inflates to 10000 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			e := &entry{name: "e.txt", usize: tc.declared}
			var budget atomic.Int64
			budget.Store(tc.budget)
			_, err := copyEntry(&out, bytes.NewReader(content), e, &budget, tc.maxEntry, make([]byte, 1000))
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.detail) || !strings.Contains(err.Error(), `"e.txt"`) {
				t.Fatalf("copyEntry = %v, want %v mentioning %q", err, tc.err, tc.detail)
			}
			if limit := min(tc.budget, tc.maxEntry); limit < int64(len(content)) && int64(out.Len()) > limit+1000 {
				t.Errorf("wrote %d bytes past a limit of %d (plus one read)", out.Len(), limit)
			}
		})
	}
}

// TestExtractSeesSameSizeEdit: an edit that keeps the archive's size and
// restores its modification time is still a new archive (the remembered
// digest is keyed by the change time too).
func TestExtractSeesSameSizeEdit(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	defer c.Close()
	v1 := newRaw(rawStored("lib/demo/SKILL.md", []byte(skillMD)), rawStored("lib/demo/VERSION", []byte("v1"))).bytes()
	v2 := newRaw(rawStored("lib/demo/SKILL.md", []byte(skillMD)), rawStored("lib/demo/VERSION", []byte("v2"))).bytes()
	zp := writeZip(t, v1)
	info, err := os.Stat(zp)
	if err != nil {
		t.Fatal(err)
	}
	_, d1 := mustExtract(t, c, zp)
	if _, again := mustExtract(t, c, zp); again != d1 {
		t.Fatal("digest of an unchanged archive changed")
	}
	if err := os.WriteFile(zp, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(zp, info.ModTime(), info.ModTime())
	dir, d2 := mustExtract(t, c, zp)
	if d2 == d1 || d2 != digestOf(v2) {
		t.Fatalf("digest after a same-size edit = %s, want %s", d2, digestOf(v2))
	}
	if got := readTree(t, dir)["lib/demo/VERSION"]; got != "v2" {
		t.Errorf("VERSION = %q", got)
	}
}

// TestExtractRemembersDigest: an archive last changed well before it was
// hashed is not hashed again while its identity holds; a fresh one always
// is.
func TestExtractRemembersDigest(t *testing.T) {
	if !canRemember() {
		t.Skip("no file identity with change times on this system")
	}
	c := &Cache{Dir: t.TempDir()}
	defer c.Close()
	zp := libZip(t, "v1")
	_, d := mustExtract(t, c, zp)
	c.mu.Lock()
	_, remembered := c.digests[zp]
	c.mu.Unlock()
	if remembered {
		t.Fatal("remembered the digest of a file changed a moment ago")
	}
	// Pretend the digest was remembered for an older change: a hit returns
	// it without reading the file.
	info, _ := os.Stat(zp)
	id, _, _ := fileID(info)
	c.mu.Lock()
	c.digests[zp] = fileDigest{id: id, digest: strings.Repeat("e", 64)}
	c.mu.Unlock()
	f, _ := os.Open(zp)
	defer f.Close()
	if got, _ := c.digestOf(context.Background(), zp, f, info); got != strings.Repeat("e", 64) {
		t.Errorf("digestOf = %s, want the remembered one (real %s)", got, d)
	}
}

func canRemember() bool {
	info, err := os.Stat(".")
	if err != nil {
		return false
	}
	_, _, ok := fileID(info)
	return ok
}
