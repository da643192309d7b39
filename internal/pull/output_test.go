package pull

import (
	"bytes"
	"strings"
	"testing"
)

func TestTailKeepsTheEnd(t *testing.T) {
	tail := &Tail{Max: 8}
	tail.Write([]byte("0123456789"))
	tail.Write([]byte("ab"))
	if got := tail.String(); got != "456789ab" {
		t.Errorf("tail = %q, want the last 8 bytes", got)
	}
}

// TestProgressBarOffTerminal: no bar is drawn on a pipe or a buffer, and a
// nil bar may be used.
func TestProgressBarOffTerminal(t *testing.T) {
	var b bytes.Buffer
	bar := NewProgressBar(&b)
	if bar != nil {
		t.Fatal("a bar for a buffer")
	}
	bar.Update(Progress{Skills: 1})
	bar.Clear()
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

func TestWriteListText(t *testing.T) {
	var out, errOut bytes.Buffer
	entries := []*Entry{
		{URI: "skill://a/SKILL.md", Path: "a", Description: "First  skill\nof two", Files: []File{{}, {}}},
		{URI: "skill://b/SKILL.md", Path: "b", Dynamic: true, Description: "dyn"},
	}
	if err := WriteList(&out, &errOut, Server{Name: "srv", Protocol: "2026-07-28"}, entries, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "a    2 files") || !strings.Contains(out.String(), "First skill of two") ||
		!strings.Contains(out.String(), "b  dynamic") {
		t.Errorf("listing:\n%s", out.String())
	}
	if errOut.String() != "2 skills listed by srv (protocol 2026-07-28)\n" {
		t.Errorf("count line %q", errOut.String())
	}
}
