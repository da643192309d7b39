package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
)

// Exit statuses of Main.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// usageError is bad input on the command line: exit 2, with a hint.
type usageError struct {
	err  error
	hint string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(hint, format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), hint: hint}
}

// errHelp is returned by a command that printed its help on request.
var errHelp = errors.New("help requested")

const mainUsage = `skills-bench measures Agent Skills servers (MCP, SEP-2640) from the outside.

Usage:
  skills-bench gen  --out DIR --skills N [flags]      write a deterministic synthetic library
  skills-bench run  --lib DIR [flags] -- COMMAND ...  benchmark a server over stdio ({lib} = DIR)
  skills-bench http --url URL [flags]                 load-test skills/get and resources/read over HTTP
  skills-bench catalogs [flags]                       1,000 catalogs in one process behind one HTTP handler
  skills-bench hub  --server BIN [flags]              skills-hub serve with 1,000 projects × 10 bindings
  skills-bench help                                   print this help

Run "skills-bench COMMAND -h" for a command's flags.
`

// Main runs the skills-bench command line args (without the program name)
// and returns the exit status: results go to stdout, progress and errors to
// stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return ExitUsage
	}
	var err error
	switch name, rest := args[0], args[1:]; name {
	case "gen":
		err = runGen(rest, stdout, stderr)
	case "run":
		err = runRun(ctx, rest, stdout, stderr)
	case "http":
		err = runHTTP(ctx, rest, stdout, stderr)
	case "catalogs":
		err = runCatalogs(ctx, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, mainUsage)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "Error: unknown command %q\nTry: skills-bench help\n", name)
		return ExitUsage
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "Error: %v\n", ue.err)
		if ue.hint != "" {
			fmt.Fprintf(stderr, "Try: %s\n", ue.hint)
		}
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return ExitFailure
	}
}

// parseFlags parses args with fs, turning -h into errHelp and other
// failures into a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &usageError{err: err, hint: "skills-bench " + fs.Name() + " -h"}
	}
	return nil
}

func runGen(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the library to `DIR` (created; must be empty unless --force)")
	var o GenOptions
	fs.IntVar(&o.Skills, "skills", 0, "number of `skills` to write (nested ones included)")
	fs.Uint64Var(&o.Seed, "seed", DefaultSeed, "`seed` of the library: the same flags give the same bytes")
	fs.Float64Var(&o.Nested, "nested", 0, "`fraction` of skills placed inside another skill's folder")
	fs.Float64Var(&o.Binaries, "binaries", 0.02, "`fraction` of skills that bundle a small binary asset")
	fs.BoolVar(&o.Force, "force", false, "replace DIR if it holds a library written by skills-bench gen")
	asJSON := fs.Bool("json", false, "print the statistics as JSON")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: skills-bench gen --out DIR --skills N [flags]\n\n"+
			"Writes a deterministic synthetic library: <category>/<name>/SKILL.md over eight\n"+
			"categories, 1–3 reference files, scripts/run.py for every second skill, a few\n"+
			"binary assets; about 3.5 files per skill.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("skills-bench gen -h", "unexpected argument %q", fs.Arg(0))
	}
	if *out == "" || o.Skills == 0 {
		return usagef("skills-bench gen --out /tmp/lib400 --skills 400", "gen needs --out and --skills")
	}
	start := time.Now()
	st, err := Generate(*out, o)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %d skills (%d nested), %d files, %.1f MiB, %.2f files per skill, in %v\ncontent digest %s\n",
		*out, st.Skills, st.Nested, st.Files, float64(st.Bytes)/(1<<20), float64(st.Files)/float64(st.Skills),
		time.Since(start).Round(time.Millisecond), st.Digest)
	return err
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lib := fs.String("lib", "", "the library `DIR`; replaces {lib} in the server commands")
	vs := fs.String("vs", "", "a second server `COMMAND` (one string, shell-style quoting) run alternately with the first")
	o := RunOptions{Progress: stderr}
	fs.IntVar(&o.Runs, "runs", DefaultRuns, "runs per server")
	fs.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "limit for one run, spawn to exit")
	fs.IntVar(&o.Samples, "samples", DefaultSamples, "skills fetched with skills/get and resources/read, and search queries sent, per run")
	fs.Uint64Var(&o.Seed, "seed", DefaultSeed, "`seed` for the sampled skills and queries")
	fs.StringVar(&o.ProtocolVersion, "protocol-version", "", "MCP `revision` to ask for (default: "+rawProtocolVersion+" with the raw client; with --client sdk, the SDK's latest, with its fallback)")
	fs.StringVar(&o.Client, "client", ClientRaw, "the `client` to measure with: "+ClientRaw+" speaks JSON-RPC over the pipes itself and decodes each answer once (revisions up to "+rawProtocolVersion+"); "+
		ClientSDK+" is a go-sdk client session, which on a 2-core machine costs more CPU than the server during a listing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	asMarkdown := fs.Bool("markdown", false, "print the tables as Markdown")
	out := fs.String("out", "", "also write the JSON report, with every run's values, to `FILE`")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: skills-bench run --lib DIR [flags] -- COMMAND [ARGS...]\n\n"+
			"Spawns COMMAND over stdio (every {lib} replaced by DIR) once per run and measures\n"+
			"initialize, skills/list (first page and complete), peak RSS, tools/list, a\n"+
			"*_search_skills tool call, a warm listing, resources/list, skills/get and\n"+
			"resources/read. Prints medians and min/max; with --vs, also the ratios B/A.\n\n"+
			"Example:\n  skills-bench run --lib /tmp/lib5k -- ./skills-mcp --root {lib}\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *lib == "" || fs.NArg() == 0 {
		return usagef("skills-bench run --lib /tmp/lib400 -- ./skills-mcp --root {lib}", "run needs --lib and a server command after --")
	}
	if o.Client != ClientRaw && o.Client != ClientSDK {
		return usagef("skills-bench run --client "+ClientRaw+" ...", "--client is %s or %s, not %q", ClientRaw, ClientSDK, o.Client)
	}
	abs, err := filepath.Abs(*lib)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return usagef("skills-bench gen --out "+*lib+" --skills 400", "--lib %s is not a directory", *lib)
	}
	servers := []Server{{Label: "A", Argv: expandLib(fs.Args(), abs)}}
	if *vs != "" {
		words, err := SplitCommand(*vs)
		if err != nil || len(words) == 0 {
			return usagef("skills-bench run -h", "--vs: cannot split %q into a command: %v", *vs, err)
		}
		servers = append(servers, Server{Label: "B", Argv: expandLib(words, abs)})
	}
	for _, s := range servers {
		if !strings.Contains(strings.Join(s.Argv, "\x00"), abs) {
			fmt.Fprintf(stderr, "note: the command of server %s has no {lib}; it serves whatever it is configured to serve\n", s.Label)
		}
	}
	rep, err := Run(ctx, servers, &o)
	if rep != nil {
		rep.Lib = abs
	}
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeJSONFile(*out, rep); err != nil {
			return err
		}
	}
	switch {
	case *asJSON:
		return writeJSON(stdout, rep)
	case *asMarkdown:
		return rep.WriteMarkdown(stdout)
	}
	return rep.WriteText(stdout)
}

func expandLib(argv []string, lib string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, "{lib}", lib)
	}
	return out
}

func runHTTP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o HTTPOptions
	fs.StringVar(&o.URL, "url", "", "the Streamable HTTP endpoint `URL`, e.g. http://127.0.0.1:3939/mcp")
	fs.IntVar(&o.Concurrency, "concurrency", DefaultConcurrency, "concurrent clients")
	fs.DurationVar(&o.Duration, "duration", DefaultDuration, "how long each method is measured")
	fs.IntVar(&o.MaxRequests, "max-requests", DefaultMaxRequests, "most requests per method")
	fs.DurationVar(&o.RequestTimeout, "timeout", DefaultRequestTimeout, "limit for one request")
	fs.StringVar(&o.Token, "token", "", "bearer `token` to send")
	fs.BoolVar(&o.AllowRemote, "allow-remote", false, "allow a URL whose host is not a loopback address")
	fs.Uint64Var(&o.Seed, "seed", DefaultSeed, "`seed` for the requested URIs")
	fs.StringVar(&o.ProtocolVersion, "protocol-version", "", "MCP `revision` to ask for (default: the SDK's latest)")
	fs.StringVar(&o.Client, "client", ClientRaw, "load `client`: "+ClientRaw+" replays the SDK client's request over plain net/http and checks each answer cheaply; "+
		ClientSDK+" sends every request through a go-sdk session (the client then costs about as much CPU as the server)")
	fs.Func("methods", "comma-separated `methods` to load (default skills/get,resources/read)", func(v string) error {
		o.Methods = strings.Split(v, ",")
		return nil
	})
	asJSON := fs.Bool("json", false, "print the report as JSON")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: skills-bench http --url URL [flags]\n\n"+
			"Lists the server's skills once, then measures requests/s and p50/p99 latency of\n"+
			"skills/get and of resources/read under concurrent load, one after the other.\n"+
			"Start the server with --http first, and with --rate-limit-address 0 and\n"+
			"--max-requests-per-address 0: the load comes from one address, far above the\n"+
			"default limit and share. Only loopback hosts unless --allow-remote.\n"+
			"Client and server share the machine's cores: compare figures taken with the same\n"+
			"--client, and read them as a lower bound on the server's throughput.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.URL == "" || fs.NArg() > 0 {
		return usagef("skills-bench http --url http://127.0.0.1:3939/mcp", "http needs --url and no other arguments")
	}
	rep, err := LoadHTTP(ctx, o)
	if rep != nil {
		var werr error
		if *asJSON {
			werr = writeJSON(stdout, rep)
		} else {
			werr = rep.WriteText(stdout)
		}
		if *out != "" {
			werr = errors.Join(werr, writeJSONFile(*out, rep))
		}
		err = errors.Join(err, werr)
	}
	if errors.Is(err, ErrRemote) {
		return &usageError{err: err, hint: "skills-bench http --url http://127.0.0.1:3939/mcp"}
	}
	return err
}

func runCatalogs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("catalogs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := CatalogsOptions{Progress: stderr}
	fs.IntVar(&o.Catalogs, "catalogs", DefaultCatalogs, "`catalogs` in the server process")
	fs.IntVar(&o.Libraries, "libraries", DefaultLibraries, "distinct `libraries`; the catalogs are spread over them round-robin")
	fs.IntVar(&o.Skills, "skills", DefaultLibSkills, "`skills` per library")
	fs.StringVar(&o.Dir, "dir", "", "generate the libraries in `DIR` (default: a temporary folder, removed afterwards)")
	fs.BoolVar(&o.NoFastPath, "no-fast-path", false, "have the server send every request through the go-sdk (for an A/B of the front end)")
	fs.IntVar(&o.Concurrency, "concurrency", DefaultConcurrency, "concurrent clients")
	fs.DurationVar(&o.Duration, "duration", DefaultDuration, "how long skills/get is measured")
	fs.IntVar(&o.MaxRequests, "max-requests", DefaultMaxRequests, "most skills/get requests")
	fs.DurationVar(&o.RequestTimeout, "timeout", DefaultRequestTimeout, "limit for one request")
	fs.Uint64Var(&o.Seed, "seed", DefaultSeed, "`seed` of the libraries and of the requested catalogs and URIs")
	fs.StringVar(&o.ProtocolVersion, "protocol-version", "", "MCP `revision` to ask for (default: the SDK's latest)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: skills-bench catalogs [flags]\n\n"+
			"Generates --libraries libraries of --skills skills, starts one server process\n"+
			"(skills-bench "+CatalogsCommand+") that opens --catalogs catalogs over them and serves\n"+
			"them behind one skills.Handler on loopback, catalog i at /c/i. Reports the time to\n"+
			"open them and to open one more over a loaded library, lists every catalog once\n"+
			"through a go-sdk client, reads the server's RSS, then measures skills/get, each\n"+
			"request on a random catalog, with the raw client (see http). The server has no\n"+
			"rate limit. Client and server share the machine's cores.\n\n"+
			"Example:\n  skills-bench catalogs --duration 20s\n  skills-bench catalogs --duration 20s --no-fast-path\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("skills-bench catalogs -h", "unexpected argument %q", fs.Arg(0))
	}
	if _, err := o.withDefaults(); err != nil {
		return &usageError{err: err, hint: "skills-bench catalogs -h"}
	}
	rep, err := Catalogs(ctx, o)
	if rep != nil {
		var werr error
		if *asJSON {
			werr = writeJSON(stdout, rep)
		} else {
			werr = rep.WriteText(stdout)
		}
		if *out != "" {
			werr = errors.Join(werr, writeJSONFile(*out, rep))
		}
		err = errors.Join(err, werr)
	}
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONFile writes v as indented JSON to path, through a temporary file
// renamed into place.
func writeJSONFile(path string, v any) error {
	return atomicfile.Write(path, 0o644, false, func(w io.Writer) error { return writeJSON(w, v) })
}

// SplitCommand splits a command line the way a POSIX shell splits words,
// without expanding anything: blanks separate words, single quotes keep
// everything, double quotes keep everything but backslash escapes of
// \ " $ and `, and a backslash outside quotes escapes the next character.
func SplitCommand(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			if quote == '"' && !strings.ContainsRune("\\\"$`", r) {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or trailing backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
