package httpserve_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

func TestLoadTokens(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	if err := os.WriteFile(file, []byte("# team\n alpha \n\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := httpserve.LoadTokens(file, " gamma ")
	if err != nil || !slices.Equal(got, []string{"alpha", "beta", "gamma"}) {
		t.Errorf("LoadTokens = %q, %v", got, err)
	}
	if got, err := httpserve.LoadTokens("", "  "); err != nil || len(got) != 0 {
		t.Errorf("no file, blank extra = %q, %v; want none", got, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("# nothing\n"), 0o600)
	if _, err := httpserve.LoadTokens(empty, ""); !errors.As(err, new(*httpserve.EmptyTokenFileError)) {
		t.Errorf("empty file: %v; want EmptyTokenFileError", err)
	}
	if _, err := httpserve.LoadTokens(filepath.Join(dir, "missing"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
