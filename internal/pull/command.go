package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Usage is the help text of `skills-mcp pull`, before its flags.
const Usage = `Usage: skills-mcp pull [SKILL…] (--url URL | --command CMD ARGS…) [flags]

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

// Job is one run of the pull command: where the server is, what to take
// from it and how to write it.
type Job struct {
	Endpoint Endpoint
	// List lists the server's skills instead of pulling.
	List bool
	// All pulls every listed skill; otherwise Refs name the skills.
	All  bool
	Refs []string
	// WithDeps adds the skills the selected ones need, transitively.
	WithDeps bool
	// JSON reports as JSON instead of lines.
	JSON bool
	// Timeout is the longest wait for one answer.
	Timeout time.Duration
	// Pull is how the skills are written (its OnProgress is set here).
	Pull PullOptions
}

// Run connects to the job's server, lists, resolves and pulls, and
// reports on stdout; progress, dependencies and, on failure, the last
// lines of a spawned server's stderr go to stderr. A *ConflictError, an
// *UnknownSkillError or a *SelectError is the user's to fix (a usage
// error); any other error is a failure.
func Run(ctx context.Context, job Job, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ep := job.Endpoint
	// A spawned server's own log is noise while it works; keep its last
	// lines to show when something fails.
	tail := &Tail{Max: 4 << 10}
	if len(ep.Command) > 0 {
		ep.Stderr = tail
	}
	withServerLog := func(err error) error {
		if s := strings.TrimSpace(tail.String()); s != "" {
			fmt.Fprintf(stderr, "server stderr (last lines):\n%s\n", "    "+strings.ReplaceAll(s, "\n", "\n    "))
		}
		return err
	}
	cl, err := Dial(ctx, ep, &Options{RequestTimeout: job.Timeout, Logger: log})
	if err != nil {
		return withServerLog(err)
	}
	defer cl.Close()

	entries, err := cl.List(ctx)
	if err != nil {
		return withServerLog(err)
	}
	if job.List {
		return WriteList(stdout, stderr, cl.Server(), entries, job.JSON)
	}

	selected := entries
	if !job.All {
		if selected, err = cl.Resolve(ctx, entries, job.Refs); err != nil {
			return err
		}
	}
	var deps []Dep
	if job.WithDeps {
		var derr error
		selected, deps, derr = Closure(entries, selected)
		for _, d := range deps {
			fmt.Fprintf(stderr, "deps  %s → %s (%s)\n", d.From, d.Name, d.Path)
		}
		if derr != nil {
			return derr
		}
	}

	opts := job.Pull
	var bar *ProgressBar
	if !job.JSON {
		if bar = NewProgressBar(stderr); bar != nil {
			opts.OnProgress = bar.Update
		}
	}
	rep, err := cl.Pull(ctx, selected, &opts)
	bar.Clear()
	if rep != nil {
		rep.Deps = deps
	}
	if job.JSON {
		if jerr := rep.WriteJSON(stdout); jerr != nil && err == nil {
			err = jerr
		}
	} else if err == nil {
		rep.WriteText(stdout)
	}
	if err != nil {
		if _, ok := errors.AsType[*ConflictError](err); ok {
			return err
		}
		return withServerLog(err)
	}
	return nil
}

// headerName is an HTTP token.
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// transportHeaders are set by the MCP transport itself.
var transportHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Content-Length": true, "Host": true, "Connection": true,
	"Transfer-Encoding": true, "Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Mcp-Method": true,
	"Mcp-Name": true, "Last-Event-Id": true,
}

// ParseHeader parses a --header value, 'Name: value', refusing line breaks
// and the headers the MCP transport sets itself.
func ParseHeader(v string) (name, value string, err error) {
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

// CheckURL checks that s is an http:// or https:// URL with a host.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}
