package pack

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const fixtureVault = "../../testdata/vault"

func build(t *testing.T, dir string, opts Options) (string, Result) {
	t.Helper()
	p, err := Plan(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out := filepath.Join(t.TempDir(), "vault.zip")
	res, err := p.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func names(t *testing.T, file string) []string {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var out []string
	for _, f := range zr.File {
		out = append(out, f.Name)
		if f.Mode().Perm() != 0o644 || !f.Modified.Equal(modTime) {
			t.Errorf("%s: mode %v, time %v", f.Name, f.Mode(), f.Modified)
		}
	}
	return out
}

func TestPackIsReproducible(t *testing.T) {
	a, ra := build(t, fixtureVault, Options{})
	b, rb := build(t, fixtureVault, Options{})
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) || ra != rb {
		t.Fatal("packing the same vault twice gave different bytes")
	}
	sum := sha256.Sum256(da)
	if ra.SHA256 != hex.EncodeToString(sum[:]) || ra.Size != int64(len(da)) {
		t.Errorf("result %+v does not describe the file", ra)
	}
	side, err := os.ReadFile(a + ".sha256")
	if err != nil || string(side) != ra.SHA256+"  vault.zip\n" {
		t.Errorf("sidecar = %q, %v", side, err)
	}
	p, err := Plan(context.Background(), fixtureVault, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if dry, err := p.Digest(); err != nil || dry != ra {
		t.Errorf("dry-run digest %+v, %v; written %+v", dry, err, ra)
	}
	entries, _ := os.ReadDir(filepath.Dir(a))
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestPackContent(t *testing.T) {
	out, _ := build(t, fixtureVault, Options{})
	got := names(t, out)
	for _, want := range []string{
		ManifestName,
		"00-CORE/Agents/skills/cro/SKILL.md",
		"00-CORE/Agents/skills/playbook-runner/SKILL.md",
		"00-CORE/Playbooks/CRO improvement loop.md",
		"00-CORE/Playbooks/cro-loop-sequence.png",
		"00-CORE/Playbooks/drafts/Misplaced.md",
		"20-COMPANY/03-PROCESSES/value-chains.md",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not packed", want)
		}
	}
	for _, got := range got {
		for _, never := range []string{"Draft idea", "Private process", "_archive", "AGENTS.md", "Notes.md", "link.md", "secret"} {
			if strings.Contains(got, never) {
				t.Errorf("%s packed", got)
			}
		}
	}
	if got[0] != ManifestName || !slices.IsSorted(got[1:]) {
		t.Errorf("entries not manifest first, then sorted: %v", got)
	}

	all, _ := build(t, fixtureVault, Options{AllStatuses: true, Wrapper: "bob-2026.11"})
	got = names(t, all)
	if !slices.Contains(got, "bob-2026.11/00-CORE/Playbooks/Draft idea.md") {
		t.Errorf("--all-statuses left the draft out: %v", got)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, "bob-2026.11/") {
			t.Errorf("%s is outside the wrapper", n)
		}
	}
}

func TestPackRefuses(t *testing.T) {
	if _, err := Plan(context.Background(), "../../testdata/library", Options{}); !errors.Is(err, ErrNotVault) {
		t.Errorf("a plain skills library: %v", err)
	}
	for _, w := range []string{"../x", "a/b", `a\b`, "/abs"} {
		if _, err := Plan(context.Background(), fixtureVault, Options{Wrapper: w}); err == nil {
			t.Errorf("wrapper %q accepted", w)
		}
	}
	if _, err := Plan(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("a missing folder was packed")
	}
}
