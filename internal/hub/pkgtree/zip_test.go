package pkgtree

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/library"
)

const goodSkill = "---\nname: pdf-tools\ndescription: Fill and merge PDF forms.\n---\n# PDF tools\n"

// entry is one file of a test archive.
type entry struct {
	name string
	data string
	mode uint32 // Unix mode with type bits; 0 means a regular 0644 file
}

// buildZip writes entries with archive/zip's writer.
func buildZip(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.CreatorVersion = 3 << 8
			h.ExternalAttrs = e.mode << 16
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readZip(data []byte, opts *ZipOptions) (*Tree, error) {
	return FromZip(bytes.NewReader(data), int64(len(data)), opts)
}

func TestFromZipReadsPackage(t *testing.T) {
	data := buildZip(t,
		entry{name: "SKILL.md", data: goodSkill},
		entry{name: "scripts/", data: ""},
		entry{name: "scripts/fill.py", data: "print('hi')\n", mode: 0o100755},
		entry{name: "references/forms.md", data: "# Forms\n"},
	)
	var seen []Progress
	tr, err := readZip(data, &ZipOptions{Progress: func(p Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range tr.Files {
		got = append(got, fmt.Sprintf("%s %o %d", f.Path, f.Mode, f.Size))
		if f.Digest != sha256.Sum256(f.Data) {
			t.Errorf("%s: digest is not the sha256 of its data", f.Path)
		}
	}
	want := []string{"SKILL.md 644 75", "references/forms.md 644 8", "scripts/fill.py 755 12"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(seen) != 3 || seen[2].Files != 3 || seen[2].Bytes != seen[2].TotalBytes {
		t.Errorf("progress: %+v", seen)
	}
	m, err := tr.Meta()
	if err != nil || m.Name != "pdf-tools" || string(m.Frontmatter) != `{"name":"pdf-tools","description":"Fill and merge PDF forms."}` {
		t.Errorf("meta %+v, %v", m, err)
	}
}

func TestFromZipPackageDirectory(t *testing.T) {
	data := buildZip(t,
		entry{name: "README.md", data: "repo readme"},
		entry{name: "skills/pdf/SKILL.md", data: goodSkill},
		entry{name: "skills/pdf/a.txt", data: "a"},
		entry{name: "skills/pdfx/b.txt", data: "not in the package"},
	)
	_, err := readZip(data, nil)
	if !errors.Is(err, ErrNoSkill) || !strings.Contains(err.Error(), `"skills/pdf/SKILL.md"`) {
		t.Fatalf("without Path: %v, want ErrNoSkill naming the nested SKILL.md", err)
	}
	tr, err := readZip(data, &ZipOptions{Path: "skills/pdf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Files) != 2 || tr.Files[0].Path != "SKILL.md" || tr.Files[1].Path != "a.txt" {
		t.Errorf("files %v", paths(tr))
	}
	if _, err := readZip(data, &ZipOptions{Path: "skills/none"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := readZip(data, &ZipOptions{Path: "../skills"}); !errors.Is(err, ErrPath) {
		t.Errorf("escaping path: %v", err)
	}
}

func paths(t *Tree) []string {
	var out []string
	for _, f := range t.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestFromZipRefuses(t *testing.T) {
	skillMD := entry{name: "SKILL.md", data: goodSkill}
	big := strings.Repeat("x", 2000)
	tests := []struct {
		name    string
		entries []entry
		opts    *ZipOptions
		want    error
		msg     string
	}{
		{"traversal", []entry{skillMD, {name: "../evil", data: "x"}}, nil, ErrPath, "path traversal"},
		{"absolute", []entry{skillMD, {name: "/etc/passwd", data: "x"}}, nil, ErrPath, "absolute"},
		{"symlink", []entry{skillMD, {name: "link", data: "/etc/passwd", mode: 0o120777}}, nil, ErrLink, "symbolic link"},
		{"fifo", []entry{skillMD, {name: "pipe", mode: 0o010644}}, nil, ErrSpecial, "fifo"},
		{"case duplicate", []entry{skillMD, {name: "a/Read.md", data: "1"}, {name: "a/READ.md", data: "2"}}, nil, ErrDuplicate, "letter case"},
		{"exact duplicate", []entry{skillMD, {name: "x", data: "1"}, {name: "x", data: "2"}}, nil, ErrDuplicate, "twice"},
		{"file and folder", []entry{skillMD, {name: "x", data: "1"}, {name: "x/y", data: "2"}}, nil, ErrDuplicate, "both a file and a"},
		{"git folder", []entry{skillMD, {name: ".git/hooks/post-checkout", data: "#!/bin/sh"}}, nil, ErrPath, ".git"},
		{"no skill", []entry{{name: "README.md", data: "x"}}, nil, ErrNoSkill, "no SKILL.md"},
		{"lower-case skill", []entry{{name: "skill.md", data: goodSkill}}, nil, ErrNoSkill, "exactly SKILL.md"},
		{"bad frontmatter", []entry{{name: "SKILL.md", data: "# no frontmatter\n"}}, nil, ErrNoSkill, "SKILL.md"},
		{"fatal problem", []entry{{name: "SKILL.md", data: "---\nname: Bad_Name\ndescription: d\n---\n"}}, nil, ErrNoSkill, "(F"},
		{"file limit", []entry{skillMD, {name: "big", data: big}}, &ZipOptions{Limits: Limits{MaxFileBytes: 1000}}, ErrTooLarge, "per-entry limit"},
		{"package limit", []entry{skillMD, {name: "a", data: big}, {name: "b", data: big}}, &ZipOptions{Limits: Limits{MaxPackageBytes: 3000}}, ErrTooLarge, "limit"},
		{"file count", []entry{skillMD, {name: "a", data: "1"}, {name: "b", data: "2"}}, &ZipOptions{Limits: Limits{MaxFiles: 2}}, ErrTooLarge, "3 files, the limit is 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := readZip(buildZip(t, tt.entries...), tt.opts)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v (tree %v), want %v mentioning %q", err, tr, tt.want, tt.msg)
			}
		})
	}
}

func TestFromZipRefusesCorrupt(t *testing.T) {
	good := buildZip(t, entry{name: "SKILL.md", data: goodSkill}, entry{name: "data.txt", data: strings.Repeat("hello ", 100)})
	tests := []struct {
		name string
		mess func([]byte) []byte
	}{
		{"not a zip", func([]byte) []byte { return []byte("just some text, not an archive at all") }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-10] }},
		{"empty", func([]byte) []byte { return nil }},
		{"flipped data byte", func(b []byte) []byte {
			c := bytes.Clone(b)
			i := bytes.Index(c, []byte("data.txt")) + len("data.txt") + 5 // inside the deflate stream
			c[i] ^= 0xff
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readZip(tt.mess(good), nil)
			if !errors.Is(err, ErrArchive) {
				t.Fatalf("got %v, want ErrArchive", err)
			}
		})
	}
}

func TestFromZipRefusesBomb(t *testing.T) {
	// 40 MiB of zeros deflate to about 40 KiB: over the ratio limit and,
	// with the default limits, over the per-file limit.
	data := buildZip(t, entry{name: "SKILL.md", data: goodSkill}, entry{name: "zeros", data: strings.Repeat("\x00", 40<<20)})
	_, err := readZip(data, nil)
	if !errors.Is(err, ErrTooLarge) && !errors.Is(err, library.ErrRatio) {
		t.Fatalf("got %v, want a size or ratio refusal", err)
	}
}

func TestSameTreeSameDigest(t *testing.T) {
	a := buildZip(t, entry{name: "SKILL.md", data: goodSkill}, entry{name: "b", data: "b"}, entry{name: "a", data: "a"})
	b := buildZip(t, entry{name: "a", data: "a"}, entry{name: "b", data: "b"}, entry{name: "SKILL.md", data: goodSkill})
	c := buildZip(t, entry{name: "a", data: "a"}, entry{name: "b", data: "b", mode: 0o100755}, entry{name: "SKILL.md", data: goodSkill})
	ta, err := readZip(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := readZip(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := readZip(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ta.Digest() != tb.Digest() {
		t.Errorf("entry order changed the digest")
	}
	if ta.Digest() == tc.Digest() {
		t.Errorf("a mode change did not change the digest")
	}
}
