package library

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestCloseEndsGracePeriods: a library replaced by a reload stays open for
// its grace period, and closing the set closes it at once instead of
// leaving its timer to fire after the set (and its cache) are gone.
func TestCloseEndsGracePeriods(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "greet"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: greet\ndescription: Greets.\n---\nHello.\n"
	if err := os.WriteFile(filepath.Join(dir, "greet", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		s := NewSet(SetOptions{Cache: &Cache{Dir: t.TempDir()}})
		o, err := Open(context.Background(), nil, Spec{Value: dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.release([]*Opened{o}, time.Hour)
		time.Sleep(time.Minute) // within the grace period: still readable
		if _, err := fs.ReadFile(o.Lib.FS, "greet/SKILL.md"); err != nil {
			t.Fatalf("in its grace period: %v", err)
		}
		s.Close()
		if _, err := fs.ReadFile(o.Lib.FS, "greet/SKILL.md"); err == nil {
			t.Error("still readable after the set closed")
		}
		if len(s.pending) != 0 {
			t.Errorf("%d releases pending after Close", len(s.pending))
		}
		// A release after Close happens at once.
		o2, err := Open(context.Background(), nil, Spec{Value: dir}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.release([]*Opened{o2}, time.Hour)
		if _, err := fs.ReadFile(o2.Lib.FS, "greet/SKILL.md"); err == nil {
			t.Error("a release after Close waited for its grace period")
		}
		// A reload that ends after Close keeps nothing it opened.
		cfg := filepath.Join(t.TempDir(), "skills.json")
		if err := os.WriteFile(cfg, []byte(`{"libraries": [{"namespace": "a", "root": "`+dir+`"}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		s.opts.ConfigPath = cfg
		if err := s.ReloadConfig(context.Background()); err == nil || !strings.Contains(err.Error(), "closed during the reload") {
			t.Errorf("ReloadConfig after Close: %v", err)
		}
		if len(s.file) != 0 {
			t.Errorf("a reload after Close kept %d libraries", len(s.file))
		}
	})
}
