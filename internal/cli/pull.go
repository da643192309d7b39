package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
	"github.com/skills-mcp/skills-mcp/internal/pull"
)

// pullCommand copies skills from a SEP-2640 server to a folder, verified.
type pullCommand struct {
	streams
}

// pullConfig is everything pull needs, after flags.
type pullConfig struct {
	refs          []string
	url           string
	command       []string
	to            string
	all, list     bool
	keepPath      bool
	withDeps      bool
	sync, force   bool
	dryRun        bool
	json          bool
	allowDynamic  bool
	allowOversize bool
	noScripts     bool
	header        http.Header
	tokenEnv      string
	timeout       time.Duration
	deadline      time.Duration
}

const pullUsage = `Usage: skills-mcp pull [SKILL…] (--url URL | --command CMD ARGS…) [flags]

Copies skills from any server that implements the MCP Skills extension
(SEP-2640) into a folder, verified: every file is checked against the size
and sha256 digest the server listed before it is written, and SKILL.md's
frontmatter against the listed one. Nothing is written unless every selected
skill verifies; a failure leaves the destination as it was.

A SKILL is a skill path (acme/billing/refunds), a skill:// URI, a frontmatter
name (refunds) or ns/name (acme/refunds). --command takes the rest of the
command line as the server to run over stdio, so it comes last.

Exit status: 0 ok, 1 a verification or transfer failure, 2 a usage error.

Flags:
`

func (c *pullCommand) flags(cfg *pullConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&cfg.url, "url", "", "pull from the Streamable HTTP server at `URL`")
	fs.StringVar(&cfg.to, "to", pull.DefaultDest, "destination `DIR`; each skill goes to DIR/<name>/")
	fs.BoolVar(&cfg.all, "all", false, "pull every listed skill")
	fs.BoolVar(&cfg.list, "list", false, "list the server's skills and exit; reads nothing but skills/list")
	fs.BoolVar(&cfg.keepPath, "keep-path", false, "write each skill to DIR/<skill path>/ instead of DIR/<name>/")
	fs.BoolVar(&cfg.withDeps, "with-deps", false, "also pull the skills they need at run time (required dependencies, transitively)")
	fs.BoolVar(&cfg.sync, "sync", false, "update existing skill folders: keep matching files, fetch changed ones, delete unlisted ones")
	fs.BoolVar(&cfg.force, "force", false, "replace existing skill folders with a fresh copy")
	fs.BoolVar(&cfg.dryRun, "dry-run", false, "read and verify everything, write nothing")
	fs.BoolVar(&cfg.json, "json", false, "print a JSON report on stdout instead of lines")
	fs.BoolVar(&cfg.allowDynamic, "allow-dynamic", false, `pull skills whose manifest is "dynamic" (no digests: only the frontmatter is verified)`)
	fs.BoolVar(&cfg.allowOversize, "allow-oversize", false, "pull skills over the SEP-2640 limits of 512 files or 16 MiB")
	fs.BoolVar(&cfg.noScripts, "no-scripts", false, "write no executable (scripts by extension or shebang line, compiled programs), as serve --no-scripts withholds them")
	fs.Func("header", "send `'Name: value'` with every HTTP request to the server (repeatable)", func(v string) error {
		name, value, err := parseHeader(v)
		if err != nil {
			return err
		}
		if cfg.header == nil {
			cfg.header = http.Header{}
		}
		cfg.header.Add(name, value)
		return nil
	})
	fs.StringVar(&cfg.tokenEnv, "token-env", "", "send the bearer token held in environment variable `VAR` (Authorization: Bearer …)")
	fs.DurationVar(&cfg.timeout, "timeout", pull.DefaultRequestTimeout, "longest wait for one answer from the server")
	fs.DurationVar(&cfg.deadline, "deadline", defaultDeadline, "longest the whole pull may take, connecting, listing and reading included; past it pull stops and writes nothing (or set SKILLS_DEADLINE)")
	fs.Usage = func() {
		fmt.Fprint(c.stderr, pullUsage)
		fs.PrintDefaults()
		fmt.Fprint(c.stderr, "  -command CMD ARGS…\n    \trun CMD ARGS… as the server, over stdio; takes the rest of the command line\n")
	}
	return fs
}

// headerName is an HTTP token.
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// transportHeaders are set by the MCP transport itself.
var transportHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Content-Length": true, "Host": true, "Connection": true,
	"Transfer-Encoding": true, "Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Mcp-Method": true,
	"Mcp-Name": true, "Last-Event-Id": true,
}

func parseHeader(v string) (string, string, error) {
	name, value, ok := strings.Cut(v, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || !headerName.MatchString(name):
		return "", "", fmt.Errorf("%q is not 'Name: value'", v)
	case strings.ContainsAny(value, "\r\n\x00"):
		return "", "", fmt.Errorf("header %s: the value contains a line break or NUL", name)
	case transportHeaders[http.CanonicalHeaderKey(name)]:
		return "", "", fmt.Errorf("header %s is set by the MCP transport and cannot be overridden", name)
	}
	return name, value, nil
}

// parseArgs reads the command line. Everything after --command is the
// server command line. Skills may come before, between or after flags.
func (c *pullCommand) parseArgs(args []string) (*pullConfig, error) {
	cfg := &pullConfig{}
	var hasCommand bool
	for i, a := range args {
		if a == "--command" || a == "-command" {
			cfg.command, hasCommand = args[i+1:], true
			args = args[:i]
			break
		}
		if v, ok := strings.CutPrefix(a, "--command="); ok {
			cfg.command, hasCommand = append([]string{v}, args[i+1:]...), true
			args = args[:i]
			break
		}
	}
	fs := c.flags(cfg)
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{err: err, hint: "skills-mcp pull -h"}
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			cfg.refs = append(cfg.refs, left...)
			break
		}
		cfg.refs = append(cfg.refs, left[0])
		rest = left[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	const hint = "skills-mcp pull -h"
	switch {
	case hasCommand && len(cfg.command) == 0:
		return nil, usagef(hint, "--command needs the server command line after it")
	case hasCommand && cfg.url != "":
		return nil, usagef(hint, "give --url or --command, not both")
	case !hasCommand && cfg.url == "":
		return nil, usagef(hint, "say where the server is: --url URL or --command CMD ARGS…")
	case hasCommand && (cfg.header != nil || cfg.tokenEnv != ""):
		return nil, usagef(hint, "--header and --token-env apply to --url only")
	case cfg.sync && cfg.force:
		return nil, usagef(hint, "--sync and --force exclude each other: --sync updates in place, --force replaces")
	case cfg.timeout <= 0:
		return nil, usagef(hint, "--timeout must be positive")
	}
	if err := c.deadlineFromEnv(&cfg.deadline, set["deadline"], hint); err != nil {
		return nil, err
	}
	if cfg.list {
		for _, name := range []string{"all", "to", "keep-path", "with-deps", "sync", "force", "dry-run", "allow-dynamic", "allow-oversize"} {
			if set[name] {
				return nil, usagef(hint, "--list only lists; it takes no --%s", name)
			}
		}
		if len(cfg.refs) > 0 {
			return nil, usagef(hint, "--list lists every skill; it takes no skill names")
		}
	} else {
		switch {
		case cfg.all && len(cfg.refs) > 0:
			return nil, usagef(hint, "give skill names or --all, not both")
		case !cfg.all && len(cfg.refs) == 0:
			return nil, usagef(hint, "name the skills to pull, or give --all (or --list to see them)")
		}
	}
	if cfg.url != "" {
		if err := checkURL(cfg.url); err != nil {
			return nil, usagef(hint, "--url: %v", err)
		}
	}
	if cfg.tokenEnv != "" {
		tok, ok := c.env(cfg.tokenEnv)
		if !ok || strings.TrimSpace(tok) == "" {
			return nil, usagef("export the token first, e.g. "+cfg.tokenEnv+"=…", "--token-env: environment variable %s is not set", cfg.tokenEnv)
		}
		if cfg.header.Get("Authorization") != "" {
			return nil, usagef(hint, "--token-env and --header 'Authorization: …' both set Authorization; give one")
		}
		if strings.ContainsAny(tok, "\r\n\x00") {
			return nil, usagef("", "--token-env: the token in %s contains a line break or NUL", cfg.tokenEnv)
		}
		if cfg.header == nil {
			cfg.header = http.Header{}
		}
		cfg.header.Set("Authorization", "Bearer "+strings.TrimSpace(tok))
	}
	return cfg, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}

// Run implements command.
func (c *pullCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := withDeadline(ctx, cfg.deadline)
	defer cancel()
	err = c.run(ctx, cfg)
	if pastDeadline(ctx) && err != nil {
		return deadlineError("pull", cfg.deadline, err, "nothing was written")
	}
	return err
}

// run connects, lists and pulls, within ctx.
func (c *pullCommand) run(ctx context.Context, cfg *pullConfig) error {
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ep := pull.Endpoint{URL: cfg.url, Header: cfg.header, Command: cfg.command}
	if cfg.url != "" && cfg.header.Get("Authorization") != "" {
		if u, _ := url.Parse(cfg.url); u.Scheme == "http" && !httpserve.IsLoopback(u.Host) {
			log.Warn("sending credentials over plain http to a non-loopback host", "host", u.Host)
		}
	}
	// A spawned server's own log is noise while it works; keep its last
	// lines to show when something fails.
	tail := &tailBuffer{max: 4 << 10}
	if len(cfg.command) > 0 {
		ep.Stderr = tail
	}
	cl, err := pull.Dial(ctx, ep, &pull.Options{RequestTimeout: cfg.timeout, Logger: log})
	if err != nil {
		return c.withServerLog(err, tail)
	}
	defer cl.Close()

	entries, err := cl.List(ctx)
	if err != nil {
		return c.withServerLog(err, tail)
	}
	if cfg.list {
		return c.printList(cl, entries, cfg.json)
	}

	selected := entries
	if !cfg.all {
		if selected, err = c.selectRefs(ctx, cl, entries, cfg.refs); err != nil {
			return err
		}
	}
	var deps []pull.Dep
	if cfg.withDeps {
		var derr error
		selected, deps, derr = pull.Closure(entries, selected)
		for _, d := range deps {
			fmt.Fprintf(c.stderr, "deps  %s → %s (%s)\n", d.From, d.Name, d.Path)
		}
		if derr != nil {
			return derr
		}
	}

	opts := &pull.PullOptions{
		Dest:          cfg.to,
		KeepPath:      cfg.keepPath,
		Sync:          cfg.sync,
		Force:         cfg.force,
		DryRun:        cfg.dryRun,
		AllowDynamic:  cfg.allowDynamic,
		AllowOversize: cfg.allowOversize,
		NoScripts:     cfg.noScripts,
	}
	var bar *progressBar
	if !cfg.json && isTerminal(c.stderr) {
		bar = &progressBar{w: c.stderr}
		opts.OnProgress = bar.update
	}
	rep, err := cl.Pull(ctx, selected, opts)
	bar.clear()
	if rep != nil {
		rep.Deps = deps
	}
	if cfg.json {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil && err == nil {
			err = jerr
		}
	} else if err == nil {
		c.printReport(rep)
	}
	if err != nil {
		var ce *pull.ConflictError
		if errors.As(err, &ce) {
			return &usageError{err: err}
		}
		return c.withServerLog(err, tail)
	}
	return nil
}

// selectRefs resolves the skills named on the command line. A SKILL.md URI
// the listing leaves out is asked for with skills/get, since a listing may
// be partial.
func (c *pullCommand) selectRefs(ctx context.Context, cl *pull.Client, entries []*pull.Entry, refs []string) ([]*pull.Entry, error) {
	var out []*pull.Entry
	seen := map[string]bool{}
	for _, ref := range refs {
		sel, err := pull.Select(entries, []string{ref})
		var se *pull.SelectError
		if errors.As(err, &se) && !se.Ambiguous && strings.Contains(ref, "://") && strings.HasSuffix(ref, "/SKILL.md") {
			e, gerr := cl.Get(ctx, ref)
			var je *jsonrpc.Error
			if errors.As(gerr, &je) && je.Code == jsonrpc.CodeInvalidParams {
				return nil, &usageError{err: fmt.Errorf("%v, and %v", err, gerr)}
			}
			if gerr != nil {
				return nil, gerr
			}
			sel, err = []*pull.Entry{e}, nil
		}
		if err != nil {
			if errors.As(err, &se) {
				return nil, &usageError{err: err, hint: "run pull with --list instead of skill names to see every listed skill"}
			}
			return nil, err
		}
		for _, e := range sel {
			if !seen[e.URI] {
				seen[e.URI] = true
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func (c *pullCommand) withServerLog(err error, tail *tailBuffer) error {
	if s := strings.TrimSpace(tail.String()); s != "" {
		fmt.Fprintf(c.stderr, "server stderr (last lines):\n%s\n", indent(s))
	}
	return err
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// listing is the --list --json output.
type listing struct {
	Server pull.Server   `json:"server"`
	Skills []listedSkill `json:"skills"`
}

type listedSkill struct {
	URI         string   `json:"uri"`
	Path        string   `json:"path,omitempty"`
	Name        string   `json:"name,omitempty"`
	Description string   `json:"description,omitempty"`
	Files       int      `json:"files"`
	Bytes       int64    `json:"bytes"`
	Dynamic     bool     `json:"dynamic,omitempty"`
	Required    []string `json:"required,omitempty"`
	Error       string   `json:"error,omitempty"`
}

func (c *pullCommand) printList(cl *pull.Client, entries []*pull.Entry, asJSON bool) error {
	out := listing{Server: cl.Server(), Skills: make([]listedSkill, len(entries))}
	for i, e := range entries {
		s := listedSkill{URI: e.URI, Path: e.Path, Name: e.Name, Description: e.Description,
			Files: len(e.Files), Bytes: e.Bytes(), Dynamic: e.Dynamic, Required: e.Required}
		if e.Err != nil {
			s.Error = e.Err.Error()
		}
		out.Skills[i] = s
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	width := 0
	for _, s := range out.Skills {
		width = max(width, len(s.Path))
	}
	for _, s := range out.Skills {
		switch {
		case s.Error != "":
			fmt.Fprintf(c.stdout, "%-*s  invalid: %s\n", width, s.URI, s.Error)
		case s.Dynamic:
			fmt.Fprintf(c.stdout, "%-*s  dynamic          %s\n", width, s.Path, oneLine(s.Description, 80))
		default:
			fmt.Fprintf(c.stdout, "%-*s  %3d %-5s %9s  %s\n", width, s.Path, s.Files, plural(s.Files, "file"), humanBytes(s.Bytes), oneLine(s.Description, 80))
		}
	}
	fmt.Fprintf(c.stderr, "%d %s listed by %s (protocol %s)\n", len(entries), plural(len(entries), "skill"), out.Server.Name, out.Server.Protocol)
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (c *pullCommand) printReport(rep *pull.Report) {
	counts := map[pull.Action]int{}
	for _, s := range rep.Skills {
		counts[s.Action]++
		dir := rep.Dest + "/" + s.Dir
		action := string(s.Action)
		if rep.DryRun {
			action = map[pull.Action]string{pull.Created: "would create", pull.Updated: "would update", pull.Skipped: "would skip"}[s.Action]
			if action == "" {
				action = string(s.Action)
			}
		}
		switch s.Action {
		case pull.Skipped:
			fmt.Fprintf(c.stdout, "%-12s %s → %s  (the folder exists; --sync or --force to update it)\n", action, s.Path, dir)
		case pull.Included:
			fmt.Fprintf(c.stdout, "%-12s %s → %s  (written with the skill that encloses it)\n", action, s.Path, dir)
		default:
			extra := ""
			if s.Dynamic {
				extra = "; dynamic: only the frontmatter was verified"
			}
			if n := len(s.Scripts); n > 0 {
				extra += fmt.Sprintf("; %d %s", n, plural(n, "executable"))
				if s.Withheld {
					extra += " not written (--no-scripts)"
				}
			}
			fmt.Fprintf(c.stdout, "%-12s %s → %s  (%d fetched, %d updated, %d kept, %d deleted; %s%s)\n",
				action, s.Path, dir, s.Fetched, s.Updated, s.Kept, s.Deleted, humanBytes(s.Bytes), extra)
		}
	}
	var parts []string
	for _, a := range []pull.Action{pull.Created, pull.Updated, pull.Unchanged, pull.Skipped, pull.Included} {
		if n := counts[a]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, a))
		}
	}
	summary := fmt.Sprintf("pull: %d %s from %s (%s): %s; %d %s, %s read in %s",
		len(rep.Skills), plural(len(rep.Skills), "skill"), rep.Server.Name, rep.Server.Protocol, strings.Join(parts, ", "),
		rep.Files, plural(rep.Files, "file"), humanBytes(rep.Bytes), time.Duration(rep.Millis)*time.Millisecond)
	if rep.DryRun {
		summary += " (dry run: nothing written)"
	}
	fmt.Fprintln(c.stdout, summary)
}

// plural returns word with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressBar draws one line on a terminal, at most ten times a second.
type progressBar struct {
	w     io.Writer
	mu    sync.Mutex
	last  time.Time
	drawn bool
}

func (b *progressBar) update(p pull.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.last) < 100*time.Millisecond && p.SkillsDone < p.Skills {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := 0
	if p.Skills > 0 {
		filled = width * p.SkillsDone / p.Skills
	}
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d skills, %d files, %s ", strings.Repeat("#", filled), strings.Repeat(" ", width-filled),
		p.SkillsDone, p.Skills, p.FilesDone, humanBytes(p.Bytes))
	b.drawn = true
}

func (b *progressBar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
