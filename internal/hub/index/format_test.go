package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

const commitA = "0123456789abcdef0123456789abcdef01234567"

func goodItem(i int) string {
	return fmt.Sprintf(`{"id":"github.com/o/r/skills/s%d","name":"s%d","description":"Does thing %d.","author":"o","category":"docs","repository":"https://github.com/o/r","path":"skills/s%d","commit":%q,"license":"MIT"}`, i, i, i, i, commitA)
}

func doc(items ...string) string {
	return `{"schema_version":1,"generated_at":"2026-08-23T10:00:00Z","sources":[{"repository":"https://github.com/o/r","commit":"` + commitA + `"}],"items":[` + strings.Join(items, ",") + `]}`
}

func TestParseGood(t *testing.T) {
	snap, err := Parse(strings.NewReader(doc(goodItem(1), goodItem(2))), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Items) != 2 || snap.Items[1].Name != "s2" || snap.Items[0].Commit != commitA || snap.Sources[0].Repository != "https://github.com/o/r" {
		t.Fatalf("parsed %+v", snap)
	}
	if snap.GeneratedAt.IsZero() {
		t.Error("generated_at not read")
	}
	// A document survives Marshal and Parse unchanged.
	raw, err := Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(bytes.NewReader(raw), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw2, _ := Marshal(again)
	if !bytes.Equal(raw, raw2) {
		t.Errorf("round trip changed the document:\n%s\n%s", raw, raw2)
	}
}

func TestParseMinimalAndUnknownFields(t *testing.T) {
	// Only what is required, plus fields a newer builder might add.
	in := `{"future":{"x":[1,2]},"items":[{"id":"x","name":"x","description":"d","repository":"file:///srv/r","tags":["a"]}],"schema_version":1}`
	snap, err := Parse(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Items) != 1 || snap.Items[0].Path != "" {
		t.Fatalf("parsed %+v", snap)
	}
	if _, err := Parse(strings.NewReader(`{"schema_version":1,"items":[]}`), nil); err != nil {
		t.Errorf("an empty catalog: %v", err)
	}
}

func TestParseRefuses(t *testing.T) {
	item := func(edit func(string) string) string { return doc(goodItem(0), edit(goodItem(1))) }
	cases := []struct {
		name, in string
		want     []string // all in the message
	}{
		{"empty", "", []string{"empty"}},
		{"not an object", `[1]`, []string{"JSON object"}},
		{"truncated", doc(goodItem(0))[:40], []string{"ends in the middle"}},
		{"syntax", `{"schema_version":1,"items":[}`, []string{"invalid JSON"}},
		{"trailing data", doc() + `{}`, []string{"after the closing brace"}},
		{"no version", `{"items":[]}`, []string{"schema_version is missing"}},
		{"version 2", `{"schema_version":2,"items":[]}`, []string{"schema_version 2 is not supported"}},
		{"version 2 after bad items", `{"items":[{"id":"x"}],"schema_version":2}`, []string{"schema_version 2"}},
		{"version string", `{"schema_version":"1","items":[]}`, []string{"schema_version must be a number"}},
		{"version 1.0", `{"schema_version":1.0,"items":[]}`, []string{"1.0 is not supported"}},
		{"no items", `{"schema_version":1}`, []string{"items is missing"}},
		{"items null", `{"schema_version":1,"items":null}`, []string{"items is null"}},
		{"key twice", `{"schema_version":1,"items":[],"items":[]}`, []string{`"items" is given twice`}},
		{"item not an object", doc(goodItem(0), `7`), []string{"catalog item 1", "object"}},
		{"field of wrong type", doc(`{"id":"x","name":3}`), []string{"catalog item 0", "name", "string"}},
		{"no repository", item(func(s string) string { return strings.Replace(s, `"repository":"https://github.com/o/r",`, "", 1) }),
			[]string{"catalog item 1", `id "github.com/o/r/skills/s1"`, "repository is missing"}},
		{"no id", item(func(s string) string { return strings.Replace(s, `"id":"github.com/o/r/skills/s1",`, "", 1) }), []string{"catalog item 1:", "id is missing"}},
		{"space in id", item(func(s string) string { return strings.Replace(s, `skills/s1"`, `skills s1"`, 1) }), []string{"printable ASCII"}},
		{"duplicate id", doc(goodItem(3), goodItem(4), goodItem(3)), []string{"catalog item 2", "s3", "already used by item 0"}},
		{"bad name", item(func(s string) string { return strings.Replace(s, `"name":"s1"`, `"name":"Bad Name"`, 1) }), []string{"catalog item 1", "name"}},
		{"no description", item(func(s string) string { return strings.Replace(s, `"Does thing 1."`, `"  "`, 1) }), []string{"description is missing"}},
		{"long description", item(func(s string) string {
			return strings.Replace(s, `"Does thing 1."`, `"`+strings.Repeat("é", 1025)+`"`, 1)
		}), []string{"1025 characters"}},
		{"relative repository", item(func(s string) string { return strings.Replace(s, `https://github.com/o/r"`, `github.com/o/r"`, 1) }), []string{"absolute"}},
		{"repository with a token", item(func(s string) string {
			return strings.Replace(s, `https://github.com/o/r"`, `https://x:ghp_secret@github.com/o/r"`, 1)
		}), []string{"credentials"}},
		{"javascript repository", item(func(s string) string { return strings.Replace(s, `https://github.com/o/r"`, `javascript:alert(1)"`, 1) }), []string{"absolute https"}},
		{"path escapes", item(func(s string) string { return strings.Replace(s, `"path":"skills/s1"`, `"path":"skills/../../etc"`, 1) }), []string{`".."`}},
		{"absolute path", item(func(s string) string { return strings.Replace(s, `"path":"skills/s1"`, `"path":"/etc"`, 1) }), []string{"relative"}},
		{"backslash path", item(func(s string) string { return strings.Replace(s, `"path":"skills/s1"`, `"path":"a\\\\b"`, 1) }), []string{"slash-separated"}},
		{"short commit", item(func(s string) string { return strings.Replace(s, commitA, "abc123", 1) }), []string{"commit", "40 or 64"}},
		{"upper-case commit", item(func(s string) string { return strings.Replace(s, commitA, strings.ToUpper(commitA), 1) }), []string{"lowercase hex"}},
		{"bad digest", item(func(s string) string { return strings.Replace(s, `"license"`, `"tree_digest":"md5:00","license"`, 1) }), []string{"tree_digest"}},
		{"negative size", item(func(s string) string { return strings.Replace(s, `"license"`, `"size":-1,"license"`, 1) }), []string{"negative"}},
		{"control in author", item(func(s string) string { return strings.Replace(s, `"author":"o"`, `"author":"o\u0007"`, 1) }), []string{"author", "control"}},
		{"bad source", strings.Replace(doc(), `"commit":"`+commitA, `"commit":"zz`, 1), []string{"source 0", "commit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap, err := Parse(strings.NewReader(c.in), nil)
			if err == nil {
				t.Fatalf("accepted: %+v", snap)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestParseItemError(t *testing.T) {
	_, err := Parse(strings.NewReader(doc(goodItem(0), `{"id":"a","name":"a","description":"d"}`)), nil)
	var ie *ItemError
	if !errors.As(err, &ie) || ie.Index != 1 || ie.ID != "a" {
		t.Fatalf("got %v, want an ItemError for item 1 (a)", err)
	}
}

// endless is a document whose items never end; it counts what is read.
type endless struct {
	head  []byte // the document's opening, then the first item
	item  []byte // each further item, with its leading comma
	read  int64
	items int
	cur   []byte
}

func newEndless(head, item string) *endless {
	return &endless{head: []byte(head + item), item: []byte("," + item)}
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.head) > 0 {
			k := copy(p[n:], e.head)
			e.head = e.head[k:]
			n += k
			continue
		}
		if len(e.cur) == 0 {
			e.cur = e.item
			e.items++
		}
		k := copy(p[n:], e.cur)
		e.cur = e.cur[k:]
		n += k
	}
	e.read += int64(n)
	return n, nil
}

func TestParseStopsAtTheItemLimit(t *testing.T) {
	// A million small items: refused at the limit, after reading only
	// about that many.
	src := newEndless(`{"schema_version":1,"items":[`, `{"id":"x"}`)
	_, err := Parse(src, &Limits{MaxItems: 1000})
	if err == nil || !strings.Contains(err.Error(), "more than 1000 items") {
		t.Fatalf("got %v", err)
	}
	if src.items > 1100 {
		t.Errorf("read %d items to refuse 1,000", src.items)
	}
}

func TestParseStopsAtTheByteLimit(t *testing.T) {
	// A document that never ends: refused at the byte limit, having read
	// at most a buffer past it.
	big := `{"id":"x","name":"x","description":"` + strings.Repeat("d", 1000) + `","repository":"https://h/r"}`
	src := newEndless(`{"schema_version":1,"items":[`, big)
	_, err := Parse(src, &Limits{MaxBytes: 1 << 20, MaxItems: 1 << 30})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if src.read > 1<<20+64<<10 {
		t.Errorf("read %d bytes to refuse a 1 MiB limit", src.read)
	}
	// Exactly at the limit is allowed.
	in := doc(goodItem(1))
	if _, err := Parse(strings.NewReader(in), &Limits{MaxBytes: int64(len(in))}); err != nil {
		t.Errorf("a document of exactly the limit: %v", err)
	}
	if _, err := Parse(strings.NewReader(in+" "), &Limits{MaxBytes: int64(len(in))}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a document one byte over the limit: %v", err)
	}
}

func TestParseDefaultLimitsOneGigabyte(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	// The default limit stops a 1 GB body after 64 MiB.
	big := `{"id":"x","name":"x","description":"` + strings.Repeat("d", 1000) + `","repository":"https://h/r"}`
	src := newEndless(`{"schema_version":1,"items":[`, big)
	_, err := Parse(io.LimitReader(src, 1<<30), &Limits{MaxItems: 1 << 30})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if src.read > MaxBytes+1<<20 {
		t.Errorf("read %d bytes", src.read)
	}
}
