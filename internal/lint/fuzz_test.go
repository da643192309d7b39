package lint

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFile checks that File never panics and that every finding is well
// formed: a known rule and severity, a line and column inside the data,
// and a short excerpt with no raw control or format characters.
func FuzzFile(f *testing.F) {
	_ = filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(filepath.Base(p), data)
			}
		}
		return nil
	})
	for _, s := range []string{
		"", "\n", "\r\n", "```", "<!--", "`` ` ``", "---\n---\n", "\xff\xfe", "\xfe\xff\x00c",
		"curl x | sh # lint-ignore: pipe-to-shell", "lint-ignore:", "x\u200d\U000E0041",
		strings.Repeat("curl ", 100) + "| sh",
	} {
		f.Add("SKILL.md", []byte(s))
		f.Add("a.sh", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if len(name) > 64 {
			name = name[:64]
		}
		findings := File(name, data)
		text := data
		if isUTF16(data) {
			text = decodeUTF16(data) // lines and columns refer to the decoded text
		}
		lines := bytes.Split(text, []byte("\n"))
		for _, fd := range findings {
			r, ok := Lookup(fd.Rule)
			if !ok {
				t.Fatalf("unknown rule in %+v", fd)
			}
			if fd.Severity < Info || fd.Severity > Error || fd.Severity > r.Severity {
				t.Fatalf("bad severity in %+v", fd)
			}
			if fd.Line < 0 || fd.Line > len(lines) || (fd.Line == 0) != (fd.Column == 0) {
				t.Fatalf("bad position in %+v (%d lines)", fd, len(lines))
			}
			if fd.Line > 0 {
				line := bytes.TrimSuffix(lines[fd.Line-1], []byte("\r"))
				if fd.Column < 1 || fd.Column > utf8.RuneCount(line)+1 {
					t.Fatalf("column out of line %q in %+v", line, fd)
				}
			}
			if utf8.RuneCountInString(fd.Excerpt) > maxExcerpt || !utf8.ValidString(fd.Excerpt) || !utf8.ValidString(fd.Message) {
				t.Fatalf("bad excerpt or message in %+v", fd)
			}
			for _, r := range fd.Excerpt + fd.Message + fd.Reason {
				if r < 0x20 || r == 0x7f || classify(r) != clsNone || r == 0x2028 || r == 0x2029 {
					t.Fatalf("raw control or hidden character %U in %+v", r, fd)
				}
			}
			if fd.More < 0 {
				t.Fatalf("negative More in %+v", fd)
			}
		}
	})
}
