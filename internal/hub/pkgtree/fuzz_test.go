package pkgtree

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzFromZip feeds arbitrary bytes to FromZip: it must never panic, and
// what it accepts must be a valid tree whose files match their digests.
func FuzzFromZip(f *testing.F) {
	f.Add(buildZip(f, entry{name: "SKILL.md", data: goodSkill}, entry{name: "a/b.txt", data: "hello"}))
	f.Add(buildZip(f, entry{name: "SKILL.md", data: goodSkill}, entry{name: "../x", data: "x"}))
	f.Add(buildZip(f, entry{name: "SKILL.md", data: goodSkill}, entry{name: "l", data: "/etc", mode: 0o120777}))
	f.Add(buildZip(f, entry{name: "p/SKILL.md", data: goodSkill}, entry{name: "p/A", data: "1"}, entry{name: "p/a", data: "2"}))
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []string{"", "p"} {
			tr, err := FromZip(bytes.NewReader(data), int64(len(data)), &ZipOptions{Path: p, Limits: Limits{MaxFiles: 64, MaxFileBytes: 1 << 20, MaxPackageBytes: 4 << 20}})
			if err != nil {
				if errors.Is(err, ErrArchive) || errors.Is(err, ErrNoSkill) || errors.Is(err, ErrPath) || errors.Is(err, ErrDuplicate) ||
					errors.Is(err, ErrTooLarge) || errors.Is(err, ErrLink) || errors.Is(err, ErrSpecial) || errors.Is(err, ErrNotFound) {
					continue
				}
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			if _, err := New(append([]File(nil), tr.Files...), Limits{}); err != nil {
				t.Fatalf("accepted a tree that New refuses: %v", err)
			}
			_ = Inspect(tr)
		}
	})
}
