package library

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// symlinkZipHex is an archive made by Info-ZIP's "zip -y" holding ok.txt
// and evil-link, a symbolic link to /etc/passwd (mode 0120777). Kept as hex,
// like archive/zip's hostile fixtures, so the bytes stay inert.
const symlinkZipHex = "504b03040a0000000000fcac7d5d7a7a6fed0300000003000000060000006f6b2e74787468690a504b03040a0000000000fcac7d5d0ab91f290b0000000b000000090000006576696c2d6c696e6b2f6574632f706173737764504b01021e030a0000000000fcac7d5d7a7a6fed0300000003000000060000000000000001000000a481000000006f6b2e747874504b01021e030a0000000000fcac7d5d0ab91f290b0000000b000000090000000000000000000000ffa1270000006576696c2d6c696e6b504b050600000000020002006b000000590000000000"

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// skillMD is a minimal skill, so that good archives look like libraries.
const skillMD = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n"

// badCase is one hostile archive: what it is, and how it must be refused.
type badCase struct {
	name   string
	data   []byte
	err    error  // sentinel the error must match
	entry  string // entry the error must name ("" for the whole archive)
	detail string // text the message must contain
	limits Limits // zero: test defaults
}

// testLimits are small enough that size tests stay cheap.
var testLimits = Limits{MaxEntries: 64, MaxTotalBytes: 4 << 20, MaxEntryBytes: 2 << 20, MaxDownloadBytes: 1 << 20, MaxRatio: 200}

func badCases() []badCase {
	one := func(e *rawEntry) []byte { return newRaw(e).bytes() }
	withExt := func(mode uint32) []byte {
		e := rawStored("x", []byte("x"))
		e.external = mode << 16
		return one(e)
	}
	big := bytes.Repeat([]byte("a"), 3<<20) // compresses far past 200:1
	good := goodZip(&testing.T{}, "lib/demo/SKILL.md", skillMD, "lib/demo/notes.txt", strings.Repeat("notes ", 100))
	storedGood := newRaw(rawStored("lib/demo/SKILL.md", []byte(skillMD))).bytes()

	cases := []badCase{
		// Names.
		{name: "traversal", data: one(rawStored("../evil", []byte("x"))), err: ErrInsecurePath, entry: "../evil", detail: "traversal"},
		{name: "traversal-inner", data: one(rawStored("a/../../evil", []byte("x"))), err: ErrInsecurePath, entry: "a/../../evil", detail: "traversal"},
		{name: "absolute", data: one(rawStored("/etc/cron.d/x", []byte("x"))), err: ErrInsecurePath, entry: "/etc/cron.d/x", detail: "absolute"},
		{name: "drive-letter", data: one(rawStored("C:/Windows/x", []byte("x"))), err: ErrInsecurePath, entry: "C:/Windows/x", detail: "drive letter"},
		{name: "drive-letter-relative", data: one(rawStored("c:x", []byte("x"))), err: ErrInsecurePath, entry: "c:x", detail: "drive letter"},
		{name: "backslash", data: one(rawStored(`a\..\..\evil`, []byte("x"))), err: ErrInsecurePath, entry: `a\..\..\evil`, detail: "backslash"},
		{name: "nul", data: one(rawStored("a.txt\x00.md", []byte("x"))), err: ErrInsecurePath, entry: "a.txt\x00.md", detail: "NUL"},
		{name: "control-char", data: one(rawStored("a\nb", []byte("x"))), err: ErrInsecurePath, entry: "a\nb", detail: "control character"},
		{name: "bidi-override", data: one(rawStored("evil\u202etxt.sh", []byte("x"))), err: ErrInsecurePath, entry: "evil\u202etxt.sh", detail: "control character"},
		{name: "not-utf8", data: one(rawStored("caf\xe9", []byte("x"))), err: ErrInsecurePath, entry: "caf\xe9", detail: "UTF-8"},
		{name: "empty-name", data: one(rawStored("", []byte("x"))), err: ErrInsecurePath, entry: "", detail: "empty name"},
		{name: "dot-segment", data: one(rawStored("a/./b", []byte("x"))), err: ErrInsecurePath, entry: "a/./b", detail: `"." segment`},
		{name: "empty-segment", data: one(rawStored("a//b", []byte("x"))), err: ErrInsecurePath, entry: "a//b", detail: "empty path segment"},
		{name: "too-deep", data: one(rawStored(strings.Repeat("d/", 64)+"f", []byte("x"))), err: ErrInsecurePath, entry: strings.Repeat("d/", 64) + "f", detail: "64 path segments"},
		{name: "long-segment", data: one(rawStored(strings.Repeat("n", 256), []byte("x"))), err: ErrInsecurePath, entry: strings.Repeat("n", 256), detail: "255"},

		// Kinds of entry.
		{name: "symlink", data: withExt(0o120777), err: ErrLink, entry: "x", detail: "symbolic link"},
		{name: "symlink-info-zip", data: mustHex(symlinkZipHex), err: ErrLink, entry: "evil-link", detail: "symbolic link"},
		{name: "fifo", data: withExt(0o010644), err: ErrSpecialFile, entry: "x"},
		{name: "char-device", data: withExt(0o020644), err: ErrSpecialFile, entry: "x"},
		{name: "block-device", data: withExt(0o060644), err: ErrSpecialFile, entry: "x"},
		{name: "socket", data: withExt(0o140644), err: ErrSpecialFile, entry: "x"},
		{name: "reparse-point", data: func() []byte {
			e := rawStored("x", []byte("x"))
			e.creator, e.external = 0, 0x400
			return one(e)
		}(), err: ErrLink, entry: "x", detail: "reparse"},
		{name: "dir-mode-on-file-name", data: withExt(0o040755), err: ErrCorrupt, entry: "x", detail: "directory mode"},
		{name: "dir-with-content", data: one(rawStored("d/", []byte("x"))), err: ErrCorrupt, entry: "d/", detail: "directory entry with"},

		// Encryption and methods.
		{name: "encrypted", data: func() []byte {
			e := rawStored("secret.txt", []byte("xxxxxxxxxxxxxxx"))
			e.flags |= flagEncrypted
			return one(e)
		}(), err: ErrEncrypted, entry: "secret.txt"},
		{name: "encrypted-writer", data: zipWith(&testing.T{}, func(zw *zip.Writer) {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: "secret.txt", Method: zip.Store, Flags: flagEncrypted})
			w.Write([]byte("not really encrypted"))
		}), err: ErrEncrypted, entry: "secret.txt"},
		{name: "method-99-aes", data: func() []byte {
			e := rawStored("aes.txt", []byte("x"))
			e.method = 99
			return one(e)
		}(), err: ErrMethod, entry: "aes.txt", detail: "method 99"},
		{name: "method-deflate64", data: zipWith(&testing.T{}, func(zw *zip.Writer) {
			w, _ := zw.CreateRaw(&zip.FileHeader{Name: "d64.txt", Method: 9, CompressedSize64: 1, UncompressedSize64: 1})
			w.Write([]byte("x"))
		}), err: ErrMethod, entry: "d64.txt", detail: "method 9"},

		// Duplicates.
		{name: "duplicate", data: goodZip(&testing.T{}, "a/SKILL.md", "one", "a/SKILL.md", "two"), err: ErrDuplicate, entry: "a/SKILL.md", detail: "twice"},
		{name: "duplicate-case", data: goodZip(&testing.T{}, "a/SKILL.md", "one", "a/skill.md", "two"), err: ErrDuplicate, entry: "a/skill.md", detail: "letter case"},
		{name: "duplicate-case-dir", data: goodZip(&testing.T{}, "Demo/SKILL.md", "one", "demo/extra.md", "two"), err: ErrDuplicate, entry: "demo/extra.md", detail: "letter case"},
		{name: "duplicate-case-unicode", data: goodZip(&testing.T{}, "\u212a.md", "kelvin sign", "k.md", "k"), err: ErrDuplicate, entry: "k.md", detail: "letter case"},
		{name: "file-and-dir", data: goodZip(&testing.T{}, "a/b", "file", "a/b/", ""), err: ErrDuplicate, entry: "a/b/", detail: "both a file and a directory"},
		{name: "file-then-child", data: goodZip(&testing.T{}, "a/b", "file", "a/b/c", "child"), err: ErrDuplicate, entry: "a/b/c", detail: "both a file and a directory"},
		{name: "child-then-file", data: goodZip(&testing.T{}, "a/b/c", "child", "a/b", "file"), err: ErrDuplicate, entry: "a/b", detail: "both a file and a directory"},

		// Counts and sizes.
		{name: "too-many-entries", data: func() []byte {
			var pairs []string
			for i := range 65 {
				pairs = append(pairs, "f"+strings.Repeat("x", i), "")
			}
			return goodZip(&testing.T{}, pairs...)
		}(), err: ErrTooManyEntries, detail: "65 entries"},
		{name: "declared-entry-size", data: func() []byte {
			e := rawDeflated("big.txt", []byte("small"))
			e.usize, e.localU = 3<<20, 3<<20
			return one(e)
		}(), err: ErrTooLarge, entry: "big.txt", detail: "per-entry limit"},
		{name: "declared-total", data: newRaw(rawDeflated("a.txt", make([]byte, 1<<20)), rawDeflated("b.txt", make([]byte, 1<<20)),
			rawDeflated("c.txt", make([]byte, 1<<20)), rawDeflated("d.txt", make([]byte, 1<<20)), rawDeflated("e.txt", make([]byte, 1<<20))).bytes(),
			err: ErrTooLarge, entry: "e.txt", detail: "total", limits: Limits{MaxEntries: 64, MaxTotalBytes: 4 << 20, MaxEntryBytes: 2 << 20, MaxRatio: 1e6}},
		{name: "declared-ratio", data: one(rawDeflated("zeros.txt", big[:2<<20])), err: ErrRatio, entry: "zeros.txt", detail: "200:1"},
		{name: "zip64-entry-bomb", data: func() []byte {
			e := rawDeflated("bomb.txt", []byte("tiny"))
			e.zip64 = true
			e.usize, e.localU = 1<<40, 1<<40
			a := newRaw(e)
			a.zip64End = true
			return a.bytes()
		}(), err: ErrTooLarge, entry: "bomb.txt", detail: "per-entry limit"},
		{name: "zip64-count-bomb", data: func() []byte {
			a := newRaw(rawStored("a", nil))
			a.zip64End, a.count64 = true, 1<<40
			return a.bytes()
		}(), err: ErrTooManyEntries, detail: "1099511627776 entries"},
		{name: "overlapping-entries-bomb", data: func() []byte {
			// The "non-recursive zip bomb": the first entry's stored data
			// quotes the second entry whole, so inflating both inflates the
			// second's data twice.
			inner := rawDeflated("inner.txt", bytes.Repeat([]byte("b"), 64<<10))
			outer := rawStored("outer.txt", append(inner.localHeader(), inner.data...))
			inner.skipLocal, inner.offset = true, localLen+int64(len("outer.txt"))
			return newRaw(outer, inner).bytes()
		}(), err: ErrCorrupt, entry: "inner.txt", detail: "overlap"},

		// Lying and broken structure.
		{name: "lying-cd-name", data: func() []byte {
			e := rawStored("safe.txt", []byte("x"))
			e.localName = "../evil"
			return one(e)
		}(), err: ErrCorrupt, entry: "safe.txt", detail: "local header names it"},
		{name: "lying-cd-size", data: func() []byte {
			e := rawDeflated("a.txt", []byte(strings.Repeat("data ", 1000)))
			e.usize = 5
			return one(e)
		}(), err: ErrCorrupt, entry: "a.txt", detail: "lying central directory"},
		{name: "lying-sizes-everywhere", data: func() []byte {
			// Local header and central directory agree on 5 bytes; the
			// stream inflates to 5000. Only counting inflated bytes sees it.
			e := rawDeflated("a.txt", []byte(strings.Repeat("data ", 1000)))
			e.usize, e.localU = 5, 5
			return one(e)
		}(), err: ErrCorrupt, entry: "a.txt", detail: "past its declared size"},
		{name: "lying-sizes-larger", data: func() []byte {
			e := rawDeflated("a.txt", []byte("short"))
			e.usize, e.localU = 500, 500
			return one(e)
		}(), err: ErrCorrupt, entry: "a.txt", detail: "data ends early"},
		{name: "lying-cd-count", data: func() []byte {
			a := newRaw(rawStored("a", []byte("a")), rawStored("b", []byte("b")))
			a.count = 1
			return a.bytes()
		}(), err: ErrCorrupt, detail: "more than the 1 entries"},
		{name: "lying-cd-count-high", data: func() []byte {
			a := newRaw(rawStored("a", []byte("a")))
			a.count = 3
			return a.bytes()
		}(), err: ErrCorrupt, detail: "cannot hold 3 entries"},
		{name: "local-offset-outside", data: func() []byte {
			e := rawStored("a", []byte("a"))
			e.skipLocal, e.offset = true, 1<<20
			return one(e)
		}(), err: ErrCorrupt, entry: "a", detail: "outside"},
		{name: "stored-sizes-differ", data: func() []byte {
			e := rawStored("a", []byte("abc"))
			e.usize, e.localU = 2, 2
			return one(e)
		}(), err: ErrCorrupt, entry: "a", detail: "stored entry"},
		{name: "multi-disk", data: func() []byte {
			a := newRaw(rawStored("a", []byte("a")))
			a.disk = 1
			return a.bytes()
		}(), err: ErrCorrupt, detail: "several disks"},
		{name: "multi-disk-entry", data: func() []byte {
			e := rawStored("a", []byte("a"))
			e.diskStart = 2
			return one(e)
		}(), err: ErrCorrupt, entry: "a", detail: "several disks"},
		{name: "prefixed-data", data: func() []byte {
			a := newRaw(rawStored("a", []byte("a")))
			a.prefix = []byte("#!/bin/sh\nexec evil\n")
			return a.bytes()
		}(), err: ErrCorrupt, detail: "prefixed"},
		{name: "trailing-garbage", data: func() []byte {
			a := newRaw(rawStored("a", []byte("a")))
			a.trailer = []byte("junk")
			return a.bytes()
		}(), err: ErrNotZip},
		{name: "not-a-zip", data: []byte(strings.Repeat("hello, world\n", 10)), err: ErrNotZip},
		{name: "too-small", data: []byte("PK"), err: ErrNotZip, detail: "too small"},
		{name: "empty-file", data: nil, err: ErrNotZip},

		// Corruptions of good archives (archive/zip's messWith habit).
		{name: "flipped-crc", data: messWith(storedGood, func(b []byte) []byte {
			// Flip the CRC in the local header and the central directory
			// alike, so that only the content disagrees.
			flipCRCs(b)
			return b
		}), err: ErrChecksum, entry: "lib/demo/SKILL.md"},
		{name: "zeroed-crc", data: messWith(storedGood, func(b []byte) []byte {
			// archive/zip skips the check when the CRC is zero; we do not.
			zeroCRCs(b)
			return b
		}), err: ErrChecksum, entry: "lib/demo/SKILL.md"},
		{name: "flipped-data-byte", data: messWith(storedGood, func(b []byte) []byte {
			b[localLen+len("lib/demo/SKILL.md")+3] ^= 0x20
			return b
		}), err: ErrChecksum, entry: "lib/demo/SKILL.md"},
		{name: "flipped-deflate-crc", data: messWith(good, func(b []byte) []byte {
			// The writer uses data descriptors: flip the CRC in the
			// central directory only; archive/zip compares the descriptor.
			cd := bytes.Index(b, []byte("PK\x01\x02"))
			b[cd+16] ^= 0xff
			return b
		}), err: ErrChecksum, entry: "lib/demo/SKILL.md"},
		{name: "corrupt-deflate", data: messWith(good, func(b []byte) []byte {
			start := localLen + len("lib/demo/SKILL.md")
			for i := start; i < start+8; i++ {
				b[i] = 0xff
			}
			return b
		}), err: ErrCorrupt, entry: "lib/demo/SKILL.md"},
		{name: "truncated", data: messWith(good, func(b []byte) []byte { return b[:len(b)/2] }), err: ErrNotZip},
		{name: "truncated-end-record", data: messWith(good, func(b []byte) []byte { return b[:len(b)-3] }), err: ErrNotZip},
		{name: "truncated-central-directory", data: messWith(good, func(b []byte) []byte {
			// Cut the middle of the central directory out, keeping the end
			// record: its offsets now lie.
			cd := bytes.Index(b, []byte("PK\x01\x02"))
			end := bytes.LastIndex(b, []byte("PK\x05\x06"))
			return append(b[:cd+10], b[end:]...)
		}), err: ErrCorrupt},
		{name: "bad-local-signature", data: messWith(storedGood, func(b []byte) []byte {
			b[0] = 'X'
			return b
		}), err: ErrCorrupt, entry: "lib/demo/SKILL.md", detail: "no local header"},
		{name: "bad-central-signature", data: messWith(storedGood, func(b []byte) []byte {
			b[bytes.Index(b, []byte("PK\x01\x02"))+3] = 9
			return b
		}), err: ErrCorrupt, detail: "central directory header signature"},
		{name: "zip64-end-disagrees", data: func() []byte {
			a := newRaw(rawStored("a", []byte("a")))
			a.zip64End = true
			b := a.bytes()
			// Unsaturate the 32-bit count and make it disagree.
			end := bytes.LastIndex(b, []byte("PK\x05\x06"))
			binary.LittleEndian.PutUint16(b[end+8:], 2)
			binary.LittleEndian.PutUint16(b[end+10:], 2)
			return b
		}(), err: ErrCorrupt, detail: "zip64 end record disagrees"},
		{name: "zip64-saturated-without-record", data: func() []byte {
			b := newRaw(rawStored("a", []byte("a"))).bytes()
			end := bytes.LastIndex(b, []byte("PK\x05\x06"))
			binary.LittleEndian.PutUint32(b[end+16:], 0xffffffff)
			return b
		}(), err: ErrCorrupt, detail: "saturated"},
	}
	return cases
}

// flipCRCs inverts every CRC field in local headers and central directory
// headers of an archive without data descriptors.
func flipCRCs(b []byte) {
	for _, sig := range []struct {
		magic string
		at    int
	}{{"PK\x03\x04", 14}, {"PK\x01\x02", 16}} {
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte(sig.magic))
			if j < 0 {
				break
			}
			crc := b[i+j+sig.at : i+j+sig.at+4]
			for k := range crc {
				crc[k] ^= 0xff
			}
			i += j + 4
		}
	}
}

func zeroCRCs(b []byte) {
	for _, sig := range []struct {
		magic string
		at    int
	}{{"PK\x03\x04", 14}, {"PK\x01\x02", 16}} {
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte(sig.magic))
			if j < 0 {
				break
			}
			clear(b[i+j+sig.at : i+j+sig.at+4])
			i += j + 4
		}
	}
}

// TestExtractRefuses checks every defence against a hand-built archive:
// the error matches the sentinel, names the entry and the reason, and the
// cache holds nothing afterwards.
func TestExtractRefuses(t *testing.T) {
	for _, tc := range badCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lim := testLimits
			if tc.limits != (Limits{}) {
				lim = tc.limits
			}
			c := &Cache{Dir: filepath.Join(t.TempDir(), "cache"), Limits: lim}
			defer c.Close()
			dir, _, err := c.Extract(context.Background(), writeZip(t, tc.data))
			if err == nil {
				t.Fatalf("Extract succeeded (%s), want %v", dir, tc.err)
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("Extract error = %v, want %v", err, tc.err)
			}
			msg := err.Error()
			if tc.entry != "" && !strings.Contains(msg, `entry `+quote(tc.entry)) {
				t.Errorf("error %q does not name entry %q", msg, tc.entry)
			}
			if tc.entry == "" {
				var ae *ArchiveError
				if errors.As(err, &ae) && ae.Entry != "" && tc.err != ErrDuplicate {
					t.Logf("note: archive-wide case names entry %q", ae.Entry)
				}
			}
			if !strings.Contains(msg, tc.detail) {
				t.Errorf("error %q does not say %q", msg, tc.detail)
			}
			if !strings.Contains(msg, "lib.zip") {
				t.Errorf("error %q does not name the archive", msg)
			}
			assertEmptyCache(t, c.Dir)
		})
	}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// assertEmptyCache fails unless dir holds nothing but the empty downloads
// directory: no extraction, no temporary directory, no record.
func assertEmptyCache(t testing.TB, dir string) {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir && p != filepath.Join(dir, downloadsDir) {
			found = append(found, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if len(found) > 0 {
		t.Errorf("cache not empty after a refusal: %v", found)
	}
}

// TestExtractGood extracts archives that must pass: from archive/zip's
// writer (data descriptors, deflate), hand-built stored entries, and a
// hand-built zip64 archive.
func TestExtractGood(t *testing.T) {
	files := map[string]string{
		"lib/demo/SKILL.md":          skillMD,
		"lib/demo/scripts/run.sh":    "#!/bin/sh\necho hi\n",
		"lib/demo/references/x.txt":  strings.Repeat("reference ", 2000),
		"lib/other/SKILL.md":         strings.Replace(skillMD, "demo", "other", 1),
		"lib/other/empty.txt":        "",
		"lib/other/ünïcödé/ß.md":     "unicode names are fine",
		"lib/other/assets/image.png": "\x89PNG\r\n\x1a\nnot an archive",
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var pairs []string
	for _, n := range names {
		pairs = append(pairs, n, files[n])
	}
	var raw, raw64 []*rawEntry
	for _, n := range names {
		raw = append(raw, rawStored(n, []byte(files[n])))
		e := rawDeflated(n, []byte(files[n]))
		e.zip64 = true
		raw64 = append(raw64, e)
	}
	a64 := newRaw(raw64...)
	a64.zip64End = true
	withDirs := zipWith(t, func(zw *zip.Writer) {
		for _, d := range []string{"lib/", "lib/demo/"} {
			h := &zip.FileHeader{Name: d}
			h.SetMode(fs.ModeDir | 0o777)
			zw.CreateHeader(h)
		}
		for _, n := range names {
			h := &zip.FileHeader{Name: n, Method: zip.Deflate}
			h.SetMode(0o4777) // setuid and world-writable: never honoured
			w, _ := zw.CreateHeader(h)
			w.Write([]byte(files[n]))
		}
	})

	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"writer", goodZip(t, pairs...)},
		{"writer-with-dirs-and-modes", withDirs},
		{"raw-stored", newRaw(raw...).bytes()},
		{"raw-zip64", a64.bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cache{Dir: filepath.Join(t.TempDir(), "cache"), Limits: testLimits}
			defer c.Close()
			zp := writeZip(t, tc.data)
			dir, digest, err := c.Extract(context.Background(), zp)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(c.Dir, digest, treeName); dir != want {
				t.Errorf("dir = %s, want %s", dir, want)
			}
			got := readTree(t, dir)
			if !mapsEqual(got, files) {
				t.Errorf("tree = %v, want %v", got, files)
			}
			assertModes(t, dir)
			if _, err := os.Stat(filepath.Join(c.Dir, digest, recordName)); err != nil {
				t.Errorf("no integrity record: %v", err)
			}
			// A second use reuses the extraction.
			dir2, digest2, err := c.Extract(context.Background(), zp)
			if err != nil || dir2 != dir || digest2 != digest {
				t.Errorf("second Extract = %s, %s, %v", dir2, digest2, err)
			}
		})
	}
}

// TestExtractNestedArchives: an archive inside the library archive, by
// name or by content, is extracted as the bytes it is, never unpacked; the
// catalog withholds the skill that bundles it (the catalog's and cli's
// tests), not the whole library.
func TestExtractNestedArchives(t *testing.T) {
	inner := goodZip(t, "x/SKILL.md", skillMD)
	files := map[string]string{
		"lib/demo/SKILL.md":       skillMD,
		"lib/demo/payload.ZIP":    "not even a zip",
		"lib/demo/vendor.tar.gz":  "x",
		"lib/demo/data.bin":       string(inner),
		"lib/demo/blank.dat":      string(newRaw().bytes()),
		"lib/demo/blob":           "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03rest",
		"lib/demo/t.dat":          strings.Repeat("\x00", 257) + "ustar\x0000" + strings.Repeat("\x00", 250),
		"lib/demo/x.dat":          "\xfd7zXZ\x00\x00\x04",
		"lib/demo/y.dat":          "7z\xbc\xaf\x27\x1c\x00\x04",
		"lib/other/SKILL.md":      strings.Replace(skillMD, "demo", "other", 1),
		"lib/other/template.docx": string(goodZip(t, "[Content_Types].xml", "<Types/>", "word/document.xml", "<w/>")),
	}
	names := slices.Sorted(maps.Keys(files))
	var pairs []string
	for _, n := range names {
		pairs = append(pairs, n, files[n])
	}
	c := &Cache{Dir: filepath.Join(t.TempDir(), "cache"), Limits: testLimits}
	defer c.Close()
	dir, _, err := c.Extract(context.Background(), writeZip(t, goodZip(t, pairs...)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dir); !mapsEqual(got, files) {
		t.Errorf("tree = %v, want %v", got, files)
	}
	assertModes(t, dir)
}

// TestExtractEmpty: an archive with no entries is a library with no skills.
func TestExtractEmpty(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	defer c.Close()
	dir, _, err := c.Extract(context.Background(), writeZip(t, newRaw().bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("ReadDir = %v, %v", ents, err)
	}
}

func readTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// assertModes checks that files are 0644 and directories 0755, exactly.
func assertModes(t testing.TB, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return err
		}
		info, _ := os.Lstat(p)
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = fs.ModeDir | 0o755
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
		return nil
	})
}

// TestExtractConcurrent extracts one archive from many Caches at once, as
// processes sharing a cache directory would: all get the same tree, and
// nothing temporary is left.
func TestExtractConcurrent(t *testing.T) {
	dir := t.TempDir()
	zp := writeZip(t, goodZip(t, "lib/demo/SKILL.md", skillMD, "lib/demo/a.txt", strings.Repeat("a", 100000)))
	const n = 8
	var wg sync.WaitGroup
	dirs := make([]string, n)
	errs := make([]error, n)
	caches := make([]*Cache, n)
	for i := range n {
		caches[i] = &Cache{Dir: dir}
		wg.Go(func() { dirs[i], _, errs[i] = caches[i].Extract(context.Background(), zp) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Errorf("dir %d = %s, want %s", i, dirs[i], dirs[0])
		}
		caches[i].Close()
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) || strings.HasPrefix(e.Name(), trashPrefix) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if got := readTree(t, dirs[0])["lib/demo/SKILL.md"]; got != skillMD {
		t.Errorf("SKILL.md = %q", got)
	}
}
