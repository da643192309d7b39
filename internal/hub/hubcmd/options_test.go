package hubcmd

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
)

// hubVariable is a variable the hub's packages may read.
var hubVariable = regexp.MustCompile(`^(SKILLS_[A-Z0-9_]+|DOCKER_HOST|GITHUB_TOKEN|GH_TOKEN)$`)

// hubSources are the non-test Go files of the packages skills-hub is built
// from and that may read its environment: the hub's and the catalog
// builder's, less the packages only tests import (…test).
func hubSources(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, root := range []string{"..", "../../catalogbuild"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "testdata" || strings.HasSuffix(d.Name(), "test")):
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestOptionTable holds skills-hub's tables against what its code reads
// and what its help says: every variable named in the hub's packages is
// in a command's table, nothing reads the process environment behind the
// session's back, every variable of a table is in its command's help, and
// every flag's twin has the hub's prefix.
func TestOptionTable(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	s := newSession(Streams{Env: noEnv})
	inTable := map[string]bool{}
	for _, n := range s.global.Names() {
		inTable[n] = true
	}
	tables := map[string]*cmdline.Table{}
	for _, c := range commands {
		tab := cmdline.NewTable(c.path)
		c.define(tab)
		tables[c.path] = tab
		for _, n := range tab.Names() {
			inTable[n] = true
		}
	}

	for _, f := range hubSources(t) {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if v, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && hubVariable.MatchString(v) && !inTable[v] {
					t.Errorf("%s names %s, which no command's table has", f, v)
				}
			case *ast.SelectorExpr:
				if pkg, ok := n.X.(*ast.Ident); ok && pkg.Name == "os" && (n.Sel.Name == "Getenv" || n.Sel.Name == "LookupEnv" || n.Sel.Name == "Environ") {
					t.Errorf("%s reads the environment with os.%s: read it through the session's Env, and the table", f, n.Sel.Name)
				}
			}
			return true
		})
	}

	for path, tab := range tables {
		var out, errb bytes.Buffer
		args := append(strings.Fields(path), "--help")
		if code := Main(context.Background(), args, Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Env: noEnv}); code != cmdline.ExitOK {
			t.Fatalf("%s --help: exit %d: %s", path, code, errb.String())
		}
		for _, n := range tab.Names() {
			if !strings.Contains(out.String(), n) {
				t.Errorf("skills-hub %s --help does not name %s, which it reads", path, n)
			}
		}
		for _, o := range tab.Options() {
			switch {
			case o.Env == "", strings.HasPrefix(o.Env, "SKILLS_HUB_"), o.Env == "DOCKER_HOST":
			case path == "catalog build" && strings.HasPrefix(o.Env, "SKILLS_CATALOG_"):
				// The publisher's tool, which opens no hub, kept its own
				// prefix.
			default:
				t.Errorf("skills-hub %s: --%s's variable %s lacks the SKILLS_HUB_ prefix", path, o.Name, o.Env)
			}
		}
	}
}
