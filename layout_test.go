package deps_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// goPackage is what TestContributingLayout reads of go list's answer.
type goPackage struct {
	ImportPath string
	Name       string
	Doc        string   // the package doc comment's first sentence
	GoFiles    []string // non-test files of the build
}

// TestContributingLayout holds CONTRIBUTING.md's layout to the module: every
// package has a line there saying what it holds, the layout names no package
// that is gone, and every package with a non-test file has a package doc
// comment ("// Package x ..."; a command's may start as Go's convention for
// commands allows).
func TestContributingLayout(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no go command to list the module's packages")
		}
		t.Skip("SKIPPED: no go command to list the module's packages")
	}
	pkgs := listPackages(t)
	lines := layoutLines(t)

	for _, p := range pkgs {
		dir := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, strings.TrimSuffix(module, "/")), "/")
		if dir == "" {
			dir = "."
		}
		if !lines[dir] {
			t.Errorf("package %s has no line in CONTRIBUTING.md's layout: add `%s  what it holds` to the block under \"## Layout\"", dir, dir)
		}
		delete(lines, dir)
		if len(p.GoFiles) == 0 {
			continue // tests only: no file to hold a package doc
		}
		switch {
		case p.Doc == "":
			t.Errorf("package %s has no package doc comment: write one above `package %s` in one of its files", dir, p.Name)
		case p.Name != "main" && !strings.HasPrefix(p.Doc, "Package "+p.Name+" "):
			t.Errorf("package %s's doc comment starts %q: it should start \"Package %s \"", dir, p.Doc, p.Name)
		}
	}
	for dir := range lines {
		if strings.HasPrefix(dir, "cmd/") || strings.HasPrefix(dir, "internal/") || strings.HasPrefix(dir, "examples") || dir == "skills" {
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				t.Errorf("CONTRIBUTING.md's layout names %s, which no longer exists", dir)
			}
		}
	}
}

// listPackages returns the module's packages as go list sees them.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading go list's answer: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	return pkgs
}

// layoutLines returns the paths that begin the lines of the fenced block
// under "## Layout" in CONTRIBUTING.md, without a trailing slash. Lines
// that begin with a space continue the one before.
func layoutLines(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open("CONTRIBUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		lines   = map[string]bool{}
		section bool
		fenced  bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Layout"
		case section && strings.HasPrefix(line, "```"):
			if fenced {
				return lines
			}
			fenced = true
		case section && fenced && line != "" && line[0] != ' ':
			path, _, _ := strings.Cut(line, " ")
			lines[strings.TrimSuffix(path, "/")] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatal(`CONTRIBUTING.md has no fenced block under "## Layout"`)
	return nil
}

// designLimit is DESIGN.md's size limit: a design document read whole, its
// decisions and their figures in docs/decisions/.
const designLimit = 40 << 10

// TestDesignDocs holds DESIGN.md to its size, and docs/decisions/README.md
// to a line for every decision file.
func TestDesignDocs(t *testing.T) {
	fi, err := os.Stat("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > designLimit {
		t.Errorf("DESIGN.md is %d bytes, over its %d: move a decision and its figures to docs/decisions/", fi.Size(), designLimit)
	}
	index, err := os.ReadFile("docs/decisions/README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir("docs/decisions")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := f.Name(); name != "README.md" && strings.HasSuffix(name, ".md") && !bytes.Contains(index, []byte("("+name+")")) {
			t.Errorf("docs/decisions/%s has no line in docs/decisions/README.md: add `- [%s](%s): its title`", name, name, name)
		}
	}
}
