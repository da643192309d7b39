package hubcmd

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// runHub runs `skills-hub args…` in process with the given environment.
func runHub(t *testing.T, environ map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
	_, err = execute(context.Background(), args, Streams{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Env: lookup})
	return out.String(), errb.String(), err
}

// usageHint is the hint of err if it is a usage error (exit status 2).
func usageHint(err error) (hint string, ok bool) {
	ue, ok := errors.AsType[*cmdline.UsageError](err)
	if !ok {
		return "", false
	}
	return ue.Hint, true
}

func isUsage(err error) bool { _, ok := usageHint(err); return ok }

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
			if _, stderr, err := runHub(t, tc.environ, args...); err != nil {
				t.Fatalf("import: %v: %s", err, stderr)
			}
			if _, err := os.Stat(filepath.Join(tc.want, "hub.db")); err != nil {
				t.Errorf("no database where expected: %v", err)
			}
		})
	}
	if _, _, err := runHub(t, map[string]string{}, "list"); !isUsage(err) || !strings.Contains(err.Error(), "--data") {
		t.Errorf("no HOME, no --data: %v; want a usage error asking for --data", err)
	}
	if _, _, err := runHub(t, map[string]string{"SKILLS_HUB_DATA": env, "SKILLS_HUB_REQUIRE_APPROVAL": "maybe"}, "list"); !isUsage(err) || !strings.Contains(err.Error(), "SKILLS_HUB_REQUIRE_APPROVAL") {
		t.Errorf("bad SKILLS_HUB_REQUIRE_APPROVAL: %v; want a usage error naming it", err)
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
		// Every usage error ends with what to try: the command's help.
		var out, errb bytes.Buffer
		lookup := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
		code := Main(context.Background(), args, Streams{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Env: lookup})
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if code != cmdline.ExitUsage || !strings.HasPrefix(lines[0], "Error: ") || !strings.HasPrefix(lines[len(lines)-1], "Try: skills-hub") || !strings.HasSuffix(lines[len(lines)-1], " --help") {
			t.Errorf("hub %v: exit %d, stderr %q; want exit 2, the error, then what to try", args, code, errb.String())
		}
	}
	if stdout, _, err := runHub(t, environ); err != nil || !strings.Contains(stdout, "catalog search") {
		t.Errorf("bare hub: %v, %q; want the command list", err, stdout)
	}
	if stdout, _, err := runHub(t, environ, "install", "-h"); err != nil || !strings.Contains(stdout, "--zip") {
		t.Errorf("hub install -h: %v, %q; want no error and the flags on stdout", err, stdout)
	}
	if _, _, err := runHub(t, environ, "serve", "--http", "not an address"); !isUsage(err) {
		t.Errorf("hub serve --http 'not an address': %v; want a usage error", err)
	}
	if _, _, err := runHub(t, environ, "token", "create", "--scope", "root"); !isUsage(err) {
		t.Errorf("hub token create --scope root: %v; want a usage error", err)
	}
}

func TestHubApproveBy(t *testing.T) {
	environ := map[string]string{"SKILLS_HUB_DATA": t.TempDir(), "USER": "carol"}
	if _, stderr, err := runHub(t, environ, "import", testZip(t), "--quiet"); err != nil {
		t.Fatal(err, stderr)
	}
	stdout, stderr, err := runHub(t, environ, "approve", "demo", "--json")
	if err != nil {
		t.Fatal(err, stderr)
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
	if stdout, _, err := runHub(t, environ, "approve", "demo", "--revoke"); err != nil || !strings.Contains(stdout, "no longer approved") {
		t.Errorf("revoke: %v %s", err, stdout)
	}
	delete(environ, "USER")
	if _, _, err := runHub(t, environ, "approve", "demo"); !isUsage(err) || !strings.Contains(err.Error(), "--by") {
		t.Errorf("approve without USER or --by: %v", err)
	}
}

// TestHubServeHTTPFlags: hub serve's HTTP flags have SKILLS_HUB_* twins;
// a bad value is a usage error naming the variable or the flag, before
// anything is opened, and a flag beats its variable.
func TestHubServeHTTPFlags(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		environ map[string]string
		args    []string
		want    string
	}{
		{map[string]string{"SKILLS_HUB_RATE_LIMIT_PROJECT": "fast"}, nil, "SKILLS_HUB_RATE_LIMIT_PROJECT"},
		{map[string]string{"SKILLS_HUB_MAX_STREAMS_PER_ADDRESS": "-1"}, nil, "SKILLS_HUB_MAX_STREAMS_PER_ADDRESS"},
		{map[string]string{"SKILLS_HUB_STREAM_LIFETIME": "soon"}, nil, "SKILLS_HUB_STREAM_LIFETIME"},
		{nil, []string{"--rate-limit-token", "-3"}, "rate-limit-token"},
		{nil, []string{"--max-requests", "0"}, "--max-requests must be positive"},
		// The flag beats a bad variable: the next check (the address) fails.
		{map[string]string{"SKILLS_HUB_RATE_LIMIT_ADDRESS": "x"}, []string{"--rate-limit-address", "5", "--http", "not an address"}, "--http"},
	} {
		args := append([]string{"--data", data, "serve"}, tc.args...)
		_, _, err := runHub(t, tc.environ, args...)
		if !isUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want a usage error naming %q", tc.environ, tc.args, err, tc.want)
		}
	}
}

// TestCatalogBuildFlagsEnv: catalog build's flags beat their variables, so
// a bad variable fails the run only when no flag overrides it, and a
// boolean variable that is not one is a usage error naming it, not a
// silent false. Each run stops at the next check (no --out), before
// anything is read.
func TestCatalogBuildFlagsEnv(t *testing.T) {
	for _, tc := range []struct {
		environ map[string]string
		args    []string
		want    string
	}{
		{map[string]string{"SKILLS_CATALOG_PARALLEL": "many"}, []string{"--parallel", "3"}, "give --out FILE"},
		{map[string]string{"SKILLS_CATALOG_PARALLEL": "many"}, nil, `SKILLS_CATALOG_PARALLEL="many": want an integer`},
		{map[string]string{"SKILLS_CATALOG_KEEP_GOING": "yes"}, []string{"--keep-going=false"}, "give --out FILE"},
		{map[string]string{"SKILLS_CATALOG_KEEP_GOING": "yes"}, nil, `SKILLS_CATALOG_KEEP_GOING="yes": want true or false`},
		{map[string]string{"SKILLS_CATALOG_KEEP_GOING": "TRUE"}, nil, "give --out FILE"},
		{map[string]string{"SKILLS_CATALOG_KEEP_GOING": "0"}, nil, "give --out FILE"},
	} {
		args := append([]string{"catalog", "build", "--repositories", "https://github.com/acme/skills"}, tc.args...)
		_, _, err := runHub(t, tc.environ, args...)
		if !isUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v; want a usage error saying %q", tc.environ, tc.args, err, tc.want)
		}
	}
}
