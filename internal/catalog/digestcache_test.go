package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/bench"
	"github.com/skills-mcp/skills-mcp/internal/binrec"
	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/search"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// recordFiles are entries with every field of a record set.
func recordFiles() []*found {
	md := &skillMD{
		frontmatter: []byte(`{"name":"alpha","description":"Does a."}`),
		problems:    []skill.Problem{{Rule: "F14", Field: "extra", Message: "unknown field", Fatal: false}, {Rule: "F3", Message: "bad", Fatal: true}},
		bodyOffset:  42, name: "alpha", description: "Does a.", category: "tools",
		tags: []string{"x", "y"}, setup: []string{"pip install a"}, chains: []string{"ship"}, stage: "build",
		tier: "pro", devStatus: "beta", hasTier: true, hasDev: true, disabled: true,
		deps: skill.Dependencies{Required: []string{"beta"}, Optional: []string{"gamma", "delta"}},
	}
	return []*found{
		{name: "alpha/SKILL.md", size: 100, stat: fileStat{ok: true, dev: 1, ino: 2, size: 100, mtimeNs: -3, ctimeNs: 4}, hashedAt: 5,
			digest: Digest{1, 2, 3}, text: true, linted: true, md: md},
		{name: "alpha/bin/tool", size: 4, stat: fileStat{ok: true, size: 4}, script: &skill.Script{Binary: "Mach-O"}},
		{name: "alpha/scripts/run.py", size: 7, stat: fileStat{ok: true, dev: 1, ino: 9, size: 7, mtimeNs: 1 << 60, ctimeNs: 1 << 61}, hashedAt: 1 << 62,
			digest: Digest{31: 0xff}, text: true, linted: true, script: &skill.Script{Interpreter: "uv run", PEP723: true},
			findings: []lint.Finding{{Rule: "pipe-to-shell", Severity: lint.Error, Path: "scripts/run.py", Line: 3, Column: 14, Message: "curl | sh"}}},
		{name: "alpha/scripts/tool.xyz", size: 1, stat: fileStat{ok: true, size: 1}, script: &skill.Script{Interpreter: "an unusual one"}},
		{name: "beta/blob.zip", size: 0, stat: fileStat{ok: true}, archive: true},
	}
}

// recordDirs are listings with every field of a record set.
func recordDirs() []testListing {
	return []testListing{
		{".", fileStat{ok: true, dev: 1, ino: 2, size: 4096, mtimeNs: 3, ctimeNs: 4}, 5,
			[]string{".git", "alpha", "beta", "notes.txt"}, []byte{kindDir, kindDir, kindDir, kindFile}},
		{"alpha", fileStat{ok: true, dev: 1, ino: 7}, -1, []string{"SKILL.md", "link", "pipe"},
			[]byte{kindFile, kindSymlink, kindOther}},
		{"alpha/empty", fileStat{ok: true}, 0, []string{}, []byte{}},
	}
}

// writeTestRecord writes a record of files and of the listings dirs, in
// their order.
func writeTestRecord(w io.Writer, fp string, files []*found, dirs []testListing) error {
	t := tableOf(dirs...)
	order := make([]int, t.len())
	for i := range order {
		order[i] = i
	}
	return writeRecord(w, fp, files, t, order)
}

// A record reads back every field as written, and a damaged, truncated,
// extended or foreign record is refused rather than half used.
func TestDigestRecordRoundTrip(t *testing.T) {
	files, dirs := recordFiles(), recordDirs()
	var buf bytes.Buffer
	if err := writeTestRecord(&buf, "rules", files, dirs); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	got, err := readRecord(data, "rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.files.all()) != len(files) || got.dirs.len() != len(dirs) {
		t.Fatalf("read back %d files and %d folders, want %d and %d", len(got.files.all()), got.dirs.len(), len(files), len(dirs))
	}
	for _, want := range files {
		if g := got.files.find(want.name); g == nil || !reflect.DeepEqual(*g, *want) {
			t.Errorf("%s:\n got %+v\nwant %+v", want.name, g, want)
		}
	}
	for _, want := range dirs {
		if i, ok := got.dirs.find(want.dir); !ok {
			t.Errorf("folder %s not read back", want.dir)
		} else if g := got.dirs.unpack(i); !reflect.DeepEqual(g, want) {
			t.Errorf("folder %s:\n got %+v\nwant %+v", want.dir, g, want)
		}
	}
	if _, err := readRecord(data, "other rules"); err == nil {
		t.Error("a record of another rule set was used")
	}
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x10
		if _, err := readRecord(bad, "rules"); err == nil {
			t.Errorf("a record with byte %d flipped was used", i)
		}
	}
	for n := range len(data) {
		if _, err := readRecord(data[:n], "rules"); err == nil {
			t.Errorf("a record cut to %d of %d bytes was used", n, len(data))
		}
	}
	if _, err := readRecord(append(slices.Clone(data), 0), "rules"); err == nil {
		t.Error("a record with a byte appended was used")
	}
}

// A record whose checksum holds but whose content does not (a crafted
// file) is refused, never a panic.
func TestDigestRecordCrafted(t *testing.T) {
	var buf bytes.Buffer
	if err := writeTestRecord(&buf, "rules", recordFiles(), recordDirs()); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()[:buf.Len()-4]
	magic := len(digestCacheVersion) + 1
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"huge count", append(append(slices.Clone(body[:magic]), "\x05rules"...), binary.AppendUvarint(nil, 1<<40)...)},
		{"shared prefix past the previous name", append(append(slices.Clone(body[:magic]), "\x05rules\x01"...), 9, 1, 'a')},
		{"string past the end", append(append(slices.Clone(body[:magic]), "\x05rules\x01\x00"...), 0x7f, 'a')},
		{"cut in a digest", append(append(slices.Clone(body[:magic]), "\x05rules\x01\x00\x01a\x00\x00\x00\x00\x00\x00"...), 1, 2, 3)},
	} {
		if got, err := readRecord(binrec.Seal(tc.body), "rules"); err == nil {
			t.Errorf("%s: read %d files", tc.name, len(got.files.all()))
		}
	}
}

// Listings that no scan could have made are refused: they would lead the
// walk out of the folder it lists.
func TestDigestRecordCraftedListings(t *testing.T) {
	l := func(dir string, names ...string) testListing {
		return testListing{dir: dir, id: fileStat{ok: true}, names: names, kinds: make([]byte, len(names))}
	}
	for _, tc := range []struct {
		name string
		dirs []testListing
	}{
		{"parent entry", []testListing{l("a", "..")}},
		{"dot entry", []testListing{l("a", ".")}},
		{"entry with a slash", []testListing{l("a", "b/../../c")}},
		{"empty entry", []testListing{l("a", "")}},
		{"entry with NUL", []testListing{l("a", "b\x00")}},
		{"unsorted entries", []testListing{l("a", "b", "a")}},
		{"repeated entries", []testListing{l("a", "b", "b")}},
		{"unknown kind", []testListing{{dir: "a", names: []string{"b"}, kinds: []byte{9}}}},
		{"folder outside the root", []testListing{l("../a", "b")}},
		{"absolute folder", []testListing{l("/etc", "passwd")}},
		{"unclean folder", []testListing{l("a//b", "c")}},
		{"folder listed twice", []testListing{l("a", "b"), l("a", "c")}},
	} {
		var buf bytes.Buffer
		if err := writeTestRecord(&buf, "rules", nil, tc.dirs); err != nil {
			t.Fatal(err)
		}
		if got, err := readRecord(buf.Bytes(), "rules"); err == nil {
			t.Errorf("%s: read back %d folders", tc.name, got.dirs.len())
		}
	}
}

func FuzzReadRecord(f *testing.F) {
	var buf bytes.Buffer
	if err := writeTestRecord(&buf, "rules", recordFiles(), recordDirs()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes()[:buf.Len()-4])
	f.Add([]byte(digestCacheVersion + "\n\x05rules\x00\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := readRecord(binrec.Seal(body), "rules")
		if err != nil {
			return
		}
		// What reads back writes back to the same entries.
		list := slices.Clone(got.files.all())
		slices.SortFunc(list, func(a, b *found) int { return strings.Compare(a.name, b.name) })
		if got.dirs.len() > 0 && !got.dirs.valid() {
			t.Fatalf("folders read back with an invalid listing: %v", got.dirs.dirs)
		}
		var again bytes.Buffer
		if err := writeRecord(&again, "rules", list, got.dirs, got.dirs.withIdentity()); err != nil {
			t.Fatal(err)
		}
		back, err := readRecord(again.Bytes(), "rules")
		if err != nil || len(back.files.all()) != len(got.files.all()) || back.dirs.len() != got.dirs.len() {
			t.Fatalf("a record read back does not round-trip: %v", err)
		}
	})
}

// Saving an index removes the least recently used past keptIndexes
// (loading one counts as a use) and the temporary files of dead writers.
func TestSavedIndexesBounded(t *testing.T) {
	c := NewDigestCache(t.TempDir())
	ix := search.Build([]search.Doc{{ID: 0, Name: "a"}}, 1)
	base := time.Now().Add(-time.Hour)
	for i := range keptIndexes {
		key := "k" + strconv.Itoa(i)
		if err := c.saveIndex(key, ix); err != nil {
			t.Fatal(err)
		}
		used := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(c.indexPath(key), used, used); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.loadIndex("k0", 1); err != nil { // the oldest, used again
		t.Fatal(err)
	}
	// What writers left: one that died long ago, one still writing.
	dead, live := filepath.Join(c.dir, "search", ".dead.idx.1.tmp"), filepath.Join(c.dir, "search", ".live.idx.2.tmp")
	for _, p := range []string{dead, live} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(dead, base, base); err != nil {
		t.Fatal(err)
	}
	if err := c.saveIndex("new", ix); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for i := range keptIndexes {
		if _, err := os.Stat(c.indexPath("k" + strconv.Itoa(i))); err == nil {
			kept = append(kept, "k"+strconv.Itoa(i))
		}
	}
	want := []string{"k0", "k2", "k3", "k4", "k5", "k6", "k7"}
	if !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v and new", kept, want)
	}
	if _, err := c.loadIndex("new", 1); err != nil {
		t.Errorf("the index just saved: %v", err)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("an hour-old temporary file was kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a fresh temporary file was removed: %v", err)
	}
	if _, err := c.loadIndex("new", 2); err == nil {
		t.Error("an index of 1 document loaded for a catalog of 2")
	}
}

// BenchmarkDigestCacheLoad reads the record of a 5,000-skill library, as a
// warm start does before its walk.
func BenchmarkDigestCacheLoad(b *testing.B) {
	dir, err := bench.SharedLibrary(5000)
	if err != nil {
		b.Fatal(err)
	}
	lib, err := OpenDirectory("", dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lib.Close()
	c := NewDigestCache(b.TempDir())
	if _, err := Scan(context.Background(), []*Library{lib}, 1, &Options{DigestCache: c}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := c.load([]*Library{lib}); len(got[libKey(lib)].files.all()) < 5000 || got[libKey(lib)].dirs.len() < 5000 {
			b.Fatalf("loaded %d files and %d folders", len(got[libKey(lib)].files.all()), got[libKey(lib)].dirs.len())
		}
	}
}
