// This test holds the layering of skills-mcp as a statement of policy: which
// internal packages each package may import, and which third-party modules
// only one package may import. Lower layers never import higher ones; a
// new edge fails the build until these tables say it is intended.
package deps_test

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/skills-mcp/skills-mcp/"

// allowed lists, for each package, the internal packages it may import.
// Test files are exempt, so tests may start a real server.
var allowed = map[string][]string{
	// Level 0: formats, wire types and leaf machinery.
	"internal/skill":      nil,
	"internal/skillsext":  nil,
	"internal/search":     {"internal/binrec"},
	"internal/config":     nil,
	"internal/httpserve":  {"internal/config", "internal/skillsext"}, // the config file's rate limits; the wire's rule for ids
	"internal/regfile":    nil,                                       // opening files that must be regular, never blocking
	"internal/bench":      {"internal/atomicfile", "internal/httpserve"},
	"internal/atomicfile": nil,
	"internal/binrec":     nil, // the cache's binary records
	"internal/golden":     nil, // test support: golden files
	"internal/attacktest": nil, // test support: the attack run's harness
	"internal/buildinfo":  nil, // the binary's version, revision and Go version
	"internal/suggest":    nil, // "did you mean": names close to a mistyped one
	// The option tables, usage errors, exit statuses and cobra wiring the
	// command lines of skills-mcp and skills-hub share.
	"internal/cmdline":   {"internal/suggest"},
	"internal/mcpclient": nil,
	"internal/mcpschema": nil, // the MCP JSON schemas, vendored
	// The research profile's wire vocabulary, shared by its server
	// (adversarial) and the client that reads it (check).
	"internal/adversarial/oracle": nil,
	"internal/hub/store":          nil, // the hub's state: imports no other hub package
	"internal/sandbox":            nil, // running one command locked down: bwrap, Docker, fake
	"internal/sandbox/bwrap":      {"internal/sandbox", "internal/sandbox/cgroup", "internal/sandbox/seccomp"},
	"internal/sandbox/cgroup":     {"internal/sandbox"},                            // the runs' cgroups, for bwrap and gVisor
	"internal/sandbox/seccomp":    nil,                                             // the syscall filter's table: the only importer of go-seccomp-bpf (exclusive, below)
	"internal/sandbox/gvisor":     {"internal/sandbox", "internal/sandbox/cgroup"}, // runsc, through its command line
	"internal/sandbox/docker":     {"internal/sandbox"},                            // the only importer of the moby client (exclusive, below)
	"internal/sandbox/fake":       {"internal/sandbox"},                            // tests of callers only
	// Level 1.
	"internal/lint":    {"internal/skill"},
	"internal/vault":   {"internal/skill"},
	"internal/metrics": {"internal/buildinfo", "internal/httpserve"}, // implements its Observer; the build_info gauge
	// Level 2: the catalog.
	"internal/catalog": {"internal/atomicfile", "internal/binrec", "internal/lint", "internal/regfile", "internal/search", "internal/skill", "internal/skillsext", "internal/vault"},
	// The hub's installable catalog (the UI's "Catalog"): parsing, search, refresh.
	"internal/hub/index": {"internal/regfile", "internal/search", "internal/skill"},
	// A library: how it is configured and opened (folder, zip, URL, fs.FS).
	"internal/library": {"internal/catalog", "internal/config", "internal/regfile", "internal/vault"},
	// The lifecycle of a live catalog (first scan, watches, reloads).
	"internal/engine": {"internal/atomicfile", "internal/catalog", "internal/regfile"},
	// The lint command's work: reading folders and zips (through the
	// library's archive reader), linting, reports.
	"internal/lint/lintcmd": {"internal/library", "internal/lint", "internal/regfile", "internal/skill"},
	// Level 3: the protocol surface, and the clients, which know only the wire.
	"internal/server": {"internal/catalog", "internal/skillsext", "internal/vault"},
	"internal/pack":   {"internal/atomicfile", "internal/catalog", "internal/vault"},
	// The Agent Skills well-known index of a catalog, for installers that
	// do not speak MCP; httpserve mounts it behind its guards, so it needs
	// neither httpserve nor the server.
	"internal/wellknown":   {"internal/catalog"},
	"internal/pull":        {"internal/mcpclient", "internal/skill", "internal/skillsext"},
	"internal/adversarial": {"internal/adversarial/oracle", "internal/skill", "internal/skillsext"},
	// check is a client: it never imports a server (adversarial included).
	"internal/check": {"internal/adversarial/oracle", "internal/mcpclient", "internal/mcpschema", "internal/skill", "internal/skillsext"},
	// The public library: the engine for Go programs, with its HTTP
	// handler and a catalog's well-known index.
	"skills": {"internal/catalog", "internal/engine", "internal/httpserve", "internal/library", "internal/server", "internal/wellknown"},
	// The hub (issue 18): package trees and their readers.
	"internal/hub/pkgtree": {"internal/library", "internal/lint", "internal/skill"},
	// The hub's rules about skill packages (version names, installs,
	// approval, bindings by reference, new tokens, the catalog), over a
	// store it is given: the package readers, the catalog and the store.
	"internal/hub": {"internal/hub/index", "internal/hub/pkgtree", "internal/hub/store", "internal/regfile"},
	// The hub's immutable versions, materialised and opened once per
	// process, handed out with reference counts.
	"internal/hub/versions": {"internal/hub", "internal/hub/store", "internal/regfile"},
	// The projects' catalogs as served: loading, the change feed, idling out.
	"internal/hub/projects": {"internal/hub/store", "internal/hub/versions", "skills"},
	// The per-project MCP endpoints (issue 19): HTTP, authentication and
	// the MCP servers and tools of the projects' catalogs, and their
	// well-known indexes (through skills).
	"internal/hub/endpoint": {"internal/hub/jobs", "internal/hub/projects", "internal/hub/store", "internal/hub/versions", "internal/sandbox", "skills"},
	// The hub's job service: profiles, preparations and runs in sandboxes.
	"internal/hub/jobs": {"internal/hub/store", "internal/sandbox"},
	// The audit log's writer: entries retried while the database is away.
	"internal/hub/auditlog": {"internal/hub/store"},
	// The catalog builder, a publisher's tool: the hub's catalog format and
	// package reader, the server's discovery rule.
	"internal/catalogbuild": {"internal/atomicfile", "internal/catalog", "internal/hub/index", "internal/hub/pkgtree", "internal/regfile", "internal/skill", "internal/skillsext"},
	// The web interface: its foundation, Markdown, and serve's skill browser.
	"internal/web":             {"internal/httpserve"},
	"internal/web/markdown":    nil,
	"internal/web/browse":      {"internal/catalog", "internal/httpserve", "internal/skillsext", "internal/web", "internal/web/markdown"},
	"internal/web/browsertest": nil, // test support: headless Chromium
	// The hub's administration in the browser: a web.Site calling the admin API.
	"internal/web/hubadmin": {"internal/hub", "internal/hub/store", "internal/web"},
	// The admin REST API, on the hub's rules and the store.
	"internal/hub/api": {"internal/hub", "internal/hub/index", "internal/hub/jobs", "internal/hub/pkgtree", "internal/hub/store", "internal/sandbox"},
	// The hub's HTTP server: the API, /healthz, /metrics, the project endpoints.
	"internal/hub/hubserve": {"internal/buildinfo", "internal/httpserve", "internal/hub", "internal/hub/api", "internal/hub/clawhub", "internal/hub/store"},
	// The ClawHub-compatible registry over the hub's packages, for the
	// clawhub client; hubserve mounts it.
	"internal/hub/clawhub": {"internal/hub", "internal/hub/pkgtree", "internal/hub/store"},
	// What the hub commands do and print once the CLI has parsed their flags.
	// It is also the skills-hub command line (Main), so it reaches the
	// catalog builder ("skills-hub catalog build") and the build's identity;
	// it opens the store every other hub package is handed (a backup to
	// restore is opened as a regular file).
	"internal/hub/hubcmd": {"internal/atomicfile", "internal/buildinfo", "internal/catalogbuild", "internal/cmdline", "internal/httpserve", "internal/hub", "internal/hub/api", "internal/hub/auditlog", "internal/hub/clawhub", "internal/hub/endpoint", "internal/hub/hubserve", "internal/hub/index", "internal/hub/jobs", "internal/hub/pkgtree", "internal/hub/store", "internal/sandbox", "internal/sandbox/bwrap", "internal/sandbox/docker", "internal/sandbox/gvisor", "internal/regfile", "internal/web/hubadmin"},
	// Top: the command line wires everything; nothing imports it.
	"internal/cli":     {"*"},
	"cmd/skills-mcp":   {"internal/cli"},
	"cmd/skills-hub":   {"internal/hub/hubcmd"}, // the hub's binary: its command line is hubcmd's
	"cmd/skills-bench": {"internal/bench", "internal/bench/hubbench", "internal/bench/multiserve"},
	// The server of "skills-bench catalogs": the one part of skills-bench
	// that knows how a server is built.
	"internal/bench/multiserve": {"skills"},
	"internal/bench/hubbench":   {"internal/hub", "internal/hub/store"}, // skills-bench hub: fills a hub, runs hub serve
	"cmd/skills-searcheval":     {"internal/search", "internal/search/eval"},
	"internal/search/eval":      {"internal/search"},
	"internal/pull/pulltest":    {"internal/skillsext"},
	"examples":                  nil,
	"examples/embed":            {"skills"},
	// Test support: content fixtures for several packages' tests.
	"internal/skill/skilltest": nil,
	// Test support for the hub: a real PostgreSQL, and the store backends' suite.
	"internal/hub/store/pgtest":    nil,
	"internal/hub/store/storetest": {"internal/hub/store"},
	// Test support for installs from GitHub: a fake of its commits API and
	// archive endpoint on loopback, for the API's and the console's tests.
	"internal/hub/pkgtree/githubtest": {"internal/hub/pkgtree"},
	// Test support for the sandboxes: the isolation suite, a real dockerd.
	"internal/sandbox/sandboxtest": {"internal/golden", "internal/sandbox"}, // the escape table is a golden file
	"internal/sandbox/dockertest":  nil,
}

// exclusive lists the third-party modules that only the named packages
// may import (test files exempt): a heavy or sensitive dependency stays
// behind one package's API, so the rest of the code, and the binary's other
// paths, never reach it by accident. A key ending in "/" is a prefix of
// module paths.
var exclusive = map[string][]string{
	// The Docker client: only the Docker sandbox backend.
	"github.com/moby/moby/": {"internal/sandbox/docker"},
	// The seccomp compiler: only the syscall filter's table.
	"github.com/elastic/go-seccomp-bpf": {"internal/sandbox/seccomp"},
	// The database drivers and the migration runner: only the hub's
	// store (and the test PostgreSQL it is tested on).
	"github.com/jackc/pgx/v5":     {"internal/hub/store", "internal/hub/store/pgtest"},
	"github.com/pressly/goose/v3": {"internal/hub/store"},
	"modernc.org/sqlite":          {"internal/hub/store"},
	// File-system events: only the catalog's watcher.
	"github.com/fsnotify/fsnotify": {"internal/catalog"},
	// Git: only the hub's package reader.
	"github.com/go-git/go-git/v5": {"internal/hub/pkgtree"},
	// The REST framework: only the admin API.
	"github.com/danielgtaylor/huma/v2": {"internal/hub/api"},
	// OAuth access tokens: only the project endpoints verify them.
	"github.com/coreos/go-oidc/v3":  {"internal/hub/endpoint"},
	"github.com/go-jose/go-jose/v4": nil, // through go-oidc only
	// Markdown: only the web interface's renderer.
	"github.com/yuin/goldmark": {"internal/web/markdown"},
	// The headless browser: only the web tests' support package.
	"github.com/chromedp/": {"internal/web/browsertest"},
	// Prometheus: only the metrics and the hub's server.
	"github.com/prometheus/client_golang": {"internal/hub/hubserve", "internal/metrics"},
}

// exclusiveTo returns the line of exclusive that path falls under, if any.
func exclusiveTo(path string) (mod string, pkgs []string, ok bool) {
	for mod, pkgs := range exclusive {
		if path == mod || strings.HasPrefix(path, strings.TrimSuffix(mod, "/")+"/") {
			return mod, pkgs, true
		}
	}
	return "", nil, false
}

// isGenerator reports whether f is excluded from every build by a
// //go:build ignore line, as go generate's programs are.
func isGenerator(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) {
				expr, err := constraint.Parse(c.Text)
				return err == nil && expr.String() == "ignore"
			}
		}
	}
	return false
}

func TestImports(t *testing.T) {
	seen := map[string]bool{} // packages
	used := map[string]bool{} // lines of exclusive
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		if pkg == "." {
			return nil
		}
		seen[pkg] = true
		rules, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in the layering table of deps_test.go", pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		// A generator (//go:build ignore, run by go generate) is built
		// into nothing: it may import its own package. Exclusivity holds
		// for it all the same.
		generator := isGenerator(f)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if mod, pkgs, ok := exclusiveTo(path); ok {
				used[mod] = true
				switch {
				case len(pkgs) == 0:
					t.Errorf("%s imports %s, which no package may import directly", p, path)
				case !slices.Contains(pkgs, pkg):
					t.Errorf("%s imports %s, which only %s may import", p, path, strings.Join(pkgs, " and "))
				}
			}
			dep, ok := strings.CutPrefix(path, module)
			if !ok || generator || slices.Contains(rules, "*") {
				continue
			}
			if !slices.Contains(rules, dep) {
				t.Errorf("%s imports %s, which the layering does not allow", p, dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("deps_test.go lists %s, which no longer exists", pkg)
		}
	}
	for mod, pkgs := range exclusive {
		if len(pkgs) > 0 && !used[mod] {
			t.Errorf("deps_test.go says only %v may import %s, and none does: drop the line", pkgs, mod)
		}
	}
}

// hubOnly are the modules and packages only the hub needs: its SQL drivers
// and migrations, its API framework, git, the Docker client (and the
// OpenTelemetry it brings), OIDC, and the hub's own packages.
var hubOnly = []string{
	"modernc.org/sqlite",
	"modernc.org/libc",
	"github.com/jackc/pgx",
	"github.com/pressly/goose",
	"github.com/danielgtaylor/huma",
	"github.com/go-git/",
	"github.com/ProtonMail/go-crypto",
	"github.com/moby/moby",
	"go.opentelemetry.io/",
	"github.com/coreos/go-oidc",
	"github.com/go-jose/go-jose",
	module + "internal/hub",
	module + "internal/sandbox",
	module + "internal/catalogbuild",
	module + "internal/web/hubadmin",
}

// TestLeanServer holds the serving binary to what it links, on the build's
// package graph (go list -deps), not only on our imports: an agent host
// starts skills-mcp for every conversation, so nothing the hub needs may
// weigh on its start.
func TestLeanServer(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the binary's packages")
	}
	out, err := exec.Command("go", "list", "-deps", "./cmd/skills-mcp").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/skills-mcp: %v", err)
	}
	for pkg := range strings.FieldsSeq(string(out)) {
		for _, bad := range hubOnly {
			if pkg == strings.TrimSuffix(bad, "/") || strings.HasPrefix(pkg, bad) && (strings.HasSuffix(bad, "/") || strings.HasPrefix(pkg[len(bad):], "/") || pkg == bad) {
				t.Errorf("skills-mcp links %s, which only the hub needs (%s)", pkg, bad)
			}
		}
	}
}

// TestGoLine keeps go.mod's go line the lowest the dependencies allow, so
// that embedders of the skills package are not forced onto a newer Go than
// they need: it must equal the highest go line among the modules the
// module's packages use.
func TestGoLine(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the modules")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.GoVersion}}{{end}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ours, highest, from := "", "", ""
	for line := range strings.Lines(string(out)) {
		path, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		if path == strings.TrimSuffix(module, "/") {
			ours = v
			continue
		}
		if v != "" && versionLess(highest, v) {
			highest, from = v, path
		}
	}
	if ours != highest {
		t.Errorf("go.mod says go %s, but the dependencies allow go %s (the highest, of %s): set the go line to it", ours, highest, from)
	}
}

// versionLess compares Go versions such as 1.25 and 1.26.0.
func versionLess(a, b string) bool {
	parse := func(v string) []int {
		var n []int
		for p := range strings.SplitSeq(v, ".") {
			i, _ := strconv.Atoi(p)
			n = append(n, i)
		}
		for len(n) < 3 {
			n = append(n, 0)
		}
		return n
	}
	return slices.Compare(parse(a), parse(b)) < 0
}
