package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runHub runs `skills-mcp hub args…` in process with the given environment.
func runHub(t *testing.T, environ map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
	code = run(context.Background(), append([]string{"hub"}, args...), streams{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, env: lookup})
	return code, out.String(), errb.String()
}

func testZip(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("SKILL.md")
	w.Write([]byte("---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "demo.zip")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHubDataDirectory(t *testing.T) {
	zipFile := testZip(t)
	home, xdg, env, flagDir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for name, tc := range map[string]struct {
		environ map[string]string
		args    []string
		want    string
	}{
		"home":          {map[string]string{"HOME": home}, nil, filepath.Join(home, ".local", "share", "skills-mcp", "hub")},
		"xdg":           {map[string]string{"HOME": home, "XDG_DATA_HOME": xdg}, nil, filepath.Join(xdg, "skills-mcp", "hub")},
		"env":           {map[string]string{"HOME": home, "SKILLS_HUB_DATA": env}, nil, env},
		"flag over env": {map[string]string{"HOME": home, "SKILLS_HUB_DATA": env}, []string{"--data", flagDir}, flagDir},
	} {
		t.Run(name, func(t *testing.T) {
			args := append(append([]string{"import"}, tc.args...), zipFile, "--quiet")
			if code, _, stderr := runHub(t, tc.environ, args...); code != 0 {
				t.Fatalf("import exited %d: %s", code, stderr)
			}
			if _, err := os.Stat(filepath.Join(tc.want, "hub.db")); err != nil {
				t.Errorf("no database where expected: %v", err)
			}
		})
	}
	if code, _, stderr := runHub(t, map[string]string{}, "list"); code != 2 || !strings.Contains(stderr, "--data") {
		t.Errorf("no HOME, no --data: exit %d, %q; want 2 asking for --data", code, stderr)
	}
	if code, _, stderr := runHub(t, map[string]string{"SKILLS_HUB_DATA": env, "SKILLS_HUB_REQUIRE_APPROVAL": "maybe"}, "list"); code != 2 || !strings.Contains(stderr, "SKILLS_HUB_REQUIRE_APPROVAL") {
		t.Errorf("bad SKILLS_HUB_REQUIRE_APPROVAL: exit %d, %q", code, stderr)
	}
}

func TestHubUsageErrors(t *testing.T) {
	environ := map[string]string{"SKILLS_HUB_DATA": t.TempDir()}
	for _, args := range [][]string{
		{"frobnicate"},
		{"install"},
		{"install", "--zip", "a.zip", "--repo", "r"},
		{"install", "--zip", "a.zip", "--ref", "main"},
		{"install", "--repo", "r", "--ref", "main", "--commit", "abc"},
		{"install", "--item", "x", "--path", "p"},
		{"install", "--bogus"},
		{"inspect"},
		{"inspect", "a", "b"},
		{"notes", "a"},
		{"catalog", "frob"},
		{"catalog", "refresh"},
		{"catalog", "search", "--limit", "-1"},
		{"backup"},
		{"restore"},
		{"approve", "x", "--revoke", "--by", "me"},
	} {
		code, _, stderr := runHub(t, environ, args...)
		if code != 2 || !strings.HasPrefix(stderr, "Error: ") || !strings.Contains(stderr, "Try: ") {
			t.Errorf("hub %v: exit %d, stderr %q; want 2 with an error and a hint", args, code, stderr)
		}
	}
	if code, stdout, _ := runHub(t, environ); code != 0 || !strings.Contains(stdout, "catalog search") {
		t.Errorf("bare hub: exit %d, %q; want the command list", code, stdout)
	}
	if code, _, stderr := runHub(t, environ, "serve"); code != 1 || !strings.Contains(stderr, "not available yet") {
		t.Errorf("hub serve: exit %d, %q", code, stderr)
	}
}

func TestHubApproveBy(t *testing.T) {
	environ := map[string]string{"SKILLS_HUB_DATA": t.TempDir(), "USER": "carol"}
	if code, _, stderr := runHub(t, environ, "import", testZip(t), "--quiet"); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := runHub(t, environ, "approve", "demo", "--json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var v struct {
		Approved bool
		Labels   struct {
			ApprovedBy string `json:"approved_by"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || !v.Approved || v.Labels.ApprovedBy != "carol" {
		t.Errorf("approve = %s (%v); want approved by $USER", stdout, err)
	}
	if code, stdout, _ := runHub(t, environ, "approve", "demo", "--revoke"); code != 0 || !strings.Contains(stdout, "no longer approved") {
		t.Errorf("revoke: %d %s", code, stdout)
	}
	delete(environ, "USER")
	if code, _, stderr := runHub(t, environ, "approve", "demo"); code != 2 || !strings.Contains(stderr, "--by") {
		t.Errorf("approve without USER or --by: %d %s", code, stderr)
	}
}
