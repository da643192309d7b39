package cli

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/config"
)

// tables are the option tables of every command, by command name.
func tables() map[string]*cmdline.Table {
	st := streams{env: func(string) (string, bool) { return "", false }}
	return map[string]*cmdline.Table{
		"serve": (&serveCommand{streams: st}).table(),
		"pull":  (&pullCommand{streams: st}).table(),
		"lint":  (&lintCommand{streams: st}).table(),
		"check": (&checkCommand{streams: st}).table(),
		"pack":  (&packCommand{streams: st}).table(),
	}
}

// envName is a variable the serving binary may read.
var envName = regexp.MustCompile(`^(SKILLS_[A-Z0-9_]+|GH_TOKEN|GITHUB_TOKEN|GOMEMLIMIT|GOGC)$`)

// readVariables are the variable names quoted in the non-test sources of
// the packages that read the environment for skills-mcp (the CLI reads it
// and hands lookups to the engine and the library fetcher).
func readVariables(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	for _, dir := range []string{".", "../engine", "../library"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && envName.MatchString(s) {
						found[s] = f
					}
				}
				return true
			})
		}
	}
	return found
}

// TestOptionTable holds the tables against what the code reads and what
// the help says: every variable the code names is in a command's table,
// every variable of a table is in its command's help, and the config
// file's settings are the tables' config keys.
func TestOptionTable(t *testing.T) {
	tabs := tables()
	inTable := map[string]bool{}
	for _, o := range tabs {
		for _, n := range o.Names() {
			inTable[n] = true
		}
	}
	for name, file := range readVariables(t) {
		if !inTable[name] {
			t.Errorf("%s reads %s, which no command's table (and so no help) lists", file, name)
		}
	}
	for cmd, o := range tabs {
		var out bytes.Buffer
		code := run(context.Background(), []string{cmd, "--help"}, streams{stdin: strings.NewReader(""), stdout: &out, stderr: &out, env: func(string) (string, bool) { return "", false }})
		if code != cmdline.ExitOK {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		for _, n := range o.Names() {
			if !strings.Contains(out.String(), n) {
				t.Errorf("%s --help does not name %s, which %s reads", cmd, n, cmd)
			}
		}
		for _, r := range o.Options() {
			if r.Env != "" && !strings.HasPrefix(r.Env, "SKILLS_") {
				t.Errorf("%s: --%s's variable %s lacks the SKILLS_ prefix", cmd, r.Name, r.Env)
			}
		}
	}
	keys := map[string]bool{}
	for _, r := range tabs["serve"].Options() {
		if r.ConfigKey != "" {
			keys[r.ConfigKey] = true
		}
	}
	typ := reflect.TypeFor[config.Config]()
	var fileKeys []string
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if key == "libraries" {
			continue
		}
		fileKeys = append(fileKeys, key)
		if !keys[key] {
			t.Errorf("the config file's %q has no row in serve's table", key)
		}
	}
	for k := range keys {
		if !slices.Contains(fileKeys, k) {
			t.Errorf("serve's table names config key %q, which the config file does not have", k)
		}
	}
}

// TestEnvErrors: a bad variable is a usage error that names the variable,
// its flag and the type it wants; the flag, when given, beats it.
func TestEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		code int
		want string
	}{
		{map[string]string{"SKILLS_DEPTH": "abc"}, []string{"--stats"}, cmdline.ExitUsage, `SKILLS_DEPTH="abc": want an integer (the variable of --depth)`},
		{map[string]string{"SKILLS_STRICT": "yes"}, []string{"--stats"}, cmdline.ExitUsage, `SKILLS_STRICT="yes": want true or false (the variable of --strict)`},
		{map[string]string{"SKILLS_TTL": "soon"}, []string{"--stats"}, cmdline.ExitUsage, `SKILLS_TTL="soon": want a duration`},
		{map[string]string{"SKILLS_LOG_FORMAT": "xml"}, []string{"--stats"}, cmdline.ExitUsage, `SKILLS_LOG_FORMAT="xml": want text or json`},
		{map[string]string{"SKILLS_DEPTH": "abc"}, []string{"--depth", "2", "--root", "../../testdata/library", "--stats"}, cmdline.ExitOK, ""},
	} {
		var out, errb bytes.Buffer
		env := func(k string) (string, bool) {
			if k == "SKILLS_CACHE_DIR" {
				return t.TempDir(), true
			}
			v, ok := tc.env[k]
			return v, ok
		}
		code := run(context.Background(), tc.args, streams{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, env: env})
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want %d and %q", tc.env, tc.args, code, errb.String(), tc.code, tc.want)
		}
		if code == cmdline.ExitUsage && !strings.HasSuffix(errb.String(), "Try: skills-mcp --help\n") {
			t.Errorf("%v: stderr %q does not end with the help to try", tc.env, errb.String())
		}
	}
}
