package main_test

// End-to-end tests of the hub: they build the real skills-hub binary once
// and drive it as an operator, an admin client and an MCP client would.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skills-hub-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "skills-hub")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building skills-hub: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	stopDocker()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testEnv is the environment of a process under test: its caches live in
// the test's temporary folder, never in the user's.
func testEnv(t *testing.T) []string {
	return append(os.Environ(), "SKILLS_CACHE_DIR="+t.TempDir())
}

// run runs the binary with args and returns its exit status and output.
func run(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testEnv(t), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}
