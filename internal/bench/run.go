package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// Defaults for RunOptions fields left zero.
const (
	DefaultRuns    = 5
	DefaultTimeout = 60 * time.Second
	DefaultSamples = 20
	DefaultSeed    = 1
)

// abandonAfter is how long a run waits, after its timeout killed the
// server, for the client to notice; past it the run is reported as failed
// and the client's goroutine is left to finish on its own.
const abandonAfter = 5 * time.Second

// Server is one server under test.
type Server struct {
	// Label names the server in reports ("A", "B").
	Label string
	// Argv is the command line, with {lib} already replaced.
	Argv []string
}

// RunOptions configures Run. A nil *RunOptions means defaults.
type RunOptions struct {
	// Runs is the number of runs per server. If zero, DefaultRuns.
	Runs int
	// Timeout bounds one run, from spawn to exit. If zero, DefaultTimeout.
	Timeout time.Duration
	// Samples is how many skills are fetched with skills/get and read with
	// resources/read per run, and how many search queries are sent. If
	// zero, DefaultSamples.
	Samples int
	// Seed picks the sampled skills and queries; every run of every server
	// uses the same picks. If zero, DefaultSeed.
	Seed uint64
	// ProtocolVersion is the MCP revision the client asks for. If empty,
	// 2025-11-25 with ClientRaw, and the SDK's latest with ClientSDK, which
	// falls back as the SDK does.
	ProtocolVersion string
	// Client is the client of every run: ClientRaw speaks JSON-RPC over
	// the server's pipes itself and decodes each answer once; ClientSDK is
	// a go-sdk client session. If empty, ClientRaw.
	Client string
	// Progress receives one line per finished run. If nil, nothing.
	Progress io.Writer
}

func (o *RunOptions) withDefaults() RunOptions {
	var v RunOptions
	if o != nil {
		v = *o
	}
	if v.Runs <= 0 {
		v.Runs = DefaultRuns
	}
	if v.Timeout <= 0 {
		v.Timeout = DefaultTimeout
	}
	if v.Samples <= 0 {
		v.Samples = DefaultSamples
	}
	if v.Seed == 0 {
		v.Seed = DefaultSeed
	}
	if v.Client == "" {
		v.Client = ClientRaw
	}
	if v.Progress == nil {
		v.Progress = io.Discard
	}
	return v
}

// Metric describes one measured quantity.
type Metric struct {
	Key  string // JSON key
	Name string // row label
	Unit string // "ms", "MiB" or "" for counts
}

// Metrics are the quantities one run measures, in report order. The first
// three are measured from the moment the server process is spawned; the
// others time single calls (or the median call of a batch).
var Metrics = []Metric{
	{"initialize_ms", "spawn → initialize done", "ms"},
	{"first_page_ms", "spawn → first skills/list page", "ms"},
	{"full_list_ms", "spawn → complete skills/list", "ms"},
	{"pages", "skills/list pages", ""},
	{"skills", "skills listed", ""},
	{"cpu_to_list_ms", "server CPU, spawn → complete skills/list", "ms"},
	{"peak_rss_mib", "peak RSS after listing (VmHWM)", "MiB"},
	{"rss_mib", "RSS after listing (VmRSS)", "MiB"},
	{"tools_list_ms", "tools/list", "ms"},
	{"search_ms", "search tool call (median)", "ms"},
	{"search_p95_ms", "search tool call (p95)", "ms"},
	{"warm_list_ms", "warm complete skills/list", "ms"},
	{"warm_list_cpu_ms", "server CPU during the warm listing", "ms"},
	{"warm_list_client_cpu_ms", "client CPU during the warm listing", "ms"},
	{"resources_list_ms", "resources/list (first page)", "ms"},
	{"get_ms", "skills/get (median)", "ms"},
	{"read_ms", "resources/read SKILL.md (median)", "ms"},
	{"end_rss_mib", "RSS at the end of the run (VmRSS)", "MiB"},
}

// Sample is the outcome of one run of one server.
type Sample struct {
	Server string `json:"server"`
	Run    int    `json:"run"`
	// Values maps Metric keys to measurements; a metric the run could not
	// measure (no search tool, no /proc) is absent.
	Values map[string]float64 `json:"values"`
	// Digest identifies the complete listing (URIs and manifests).
	Digest string `json:"digest"`
	// SearchTool is the search tool that was called, if any.
	SearchTool string   `json:"searchTool,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// RunError reports the run that failed and why.
type RunError struct {
	Server Server
	Run    int // 1-based
	Runs   int
	Err    error
}

// Error names the run, the server and its command, then the cause.
func (e *RunError) Error() string {
	return fmt.Sprintf("run %d of %d, server %s (%s): %v", e.Run, e.Runs, e.Server.Label, strings.Join(e.Server.Argv, " "), e.Err)
}

// Unwrap returns the cause.
func (e *RunError) Unwrap() error { return e.Err }

// ErrTimeout is wrapped by the error of a run that did not finish within
// RunOptions.Timeout.
var ErrTimeout = errors.New("bench: run timed out")

// Run benchmarks the servers: opts.Runs runs of each, alternating between
// them (A, B, A, B, …) so that drift in the machine's state affects all
// alike. It stops at the first failed run and returns the samples so far
// with a *RunError. A run never outlives opts.Timeout by more than a few
// seconds: on timeout the server's process group is killed.
func Run(ctx context.Context, servers []Server, opts *RunOptions) (*Report, error) {
	o := opts.withDefaults()
	if o.Client != ClientRaw && o.Client != ClientSDK {
		return nil, fmt.Errorf("bench: unknown client %q (want %s or %s)", o.Client, ClientRaw, ClientSDK)
	}
	rep := &Report{Runs: o.Runs, Client: o.Client}
	for _, s := range servers {
		if len(s.Argv) == 0 {
			return nil, fmt.Errorf("bench: server %s has an empty command", s.Label)
		}
		rep.Servers = append(rep.Servers, ServerReport{Label: s.Label, Command: s.Argv})
	}
	for run := 1; run <= o.Runs; run++ {
		for i, s := range servers {
			sample, err := runOnce(ctx, s, o, run)
			if err != nil {
				return rep, &RunError{Server: s, Run: run, Runs: o.Runs, Err: err}
			}
			sr := &rep.Servers[i]
			if len(sr.Samples) > 0 && sr.Samples[0].Digest != sample.Digest {
				sample.Warnings = append(sample.Warnings, fmt.Sprintf(
					"the library differs from run 1 (listing digest %s, was %s): did it change during the benchmark?",
					sample.Digest, sr.Samples[0].Digest))
			}
			sr.Samples = append(sr.Samples, *sample)
			fmt.Fprintf(o.Progress, "run %d/%d %s: %s\n", run, o.Runs, s.Label, progressLine(sample))
			for _, w := range sample.Warnings {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("run %d %s: %s", run, s.Label, w))
			}
		}
	}
	for i := range rep.Servers {
		rep.Servers[i].summarize()
	}
	return rep, nil
}

func progressLine(s *Sample) string {
	return fmt.Sprintf("%.0f skills, initialize %s, complete list %s, peak RSS %s",
		s.Values["skills"], formatValue(s.Values, "initialize_ms", "ms"),
		formatValue(s.Values, "full_list_ms", "ms"), formatValue(s.Values, "peak_rss_mib", "MiB"))
}

// runOnce spawns the server, measures, and makes sure the process is gone.
func runOnce(ctx context.Context, srv Server, o RunOptions, run int) (*Sample, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, fmt.Errorf("%w after %v", ErrTimeout, o.Timeout))
	defer cancel()
	proc := newServerProcess(srv.Argv)
	stopWatchdog := context.AfterFunc(ctx, proc.kill)
	defer stopWatchdog()

	type outcome struct {
		s   *Sample
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		s, err := measure(ctx, proc, o)
		done <- outcome{s, err}
	}()
	var res outcome
	select {
	case res = <-done:
	case <-ctx.Done():
		select {
		case res = <-done:
		case <-time.After(abandonAfter):
			proc.kill()
			return nil, fmt.Errorf("%w; the client did not stop within %v of killing the server", context.Cause(ctx), abandonAfter)
		}
	}
	proc.reapStragglers()
	if res.err != nil {
		err := res.err
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", context.Cause(ctx), res.err)
		} else if st := proc.exitState(); st != "" && !proc.killed.Load() {
			err = fmt.Errorf("%w (server %s)", err, st)
		}
		if tail := proc.stderr.String(); tail != "" {
			err = fmt.Errorf("%w\nserver stderr (last lines):\n%s", err, indent(tail))
		}
		return nil, err
	}
	res.s.Server, res.s.Run = srv.Label, run
	return res.s, nil
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// measure is one run: every step uses ctx, which carries the run's
// deadline, so a server that stops answering fails the step it is in.
func measure(ctx context.Context, proc *serverProcess, o RunOptions) (_ *Sample, err error) {
	s := &Sample{Values: map[string]float64{}}
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

	start := time.Now()
	sess, err := connect(ctx, proc, o)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	s.Values["initialize_ms"] = ms(time.Since(start))
	defer func() {
		// close shuts stdin and waits for the exit, bounded by
		// terminateGrace before SIGTERM and SIGKILL.
		if cerr := sess.close(); cerr != nil && err == nil && ctx.Err() == nil && !isExitAfterClose(cerr) {
			s.Warnings = append(s.Warnings, "closing the session: "+cerr.Error())
		}
	}()

	cold, err := listAll(ctx, sess.listPage, func() { s.Values["first_page_ms"] = ms(time.Since(start)) })
	if err != nil {
		return nil, err
	}
	s.Values["full_list_ms"] = ms(time.Since(start))
	s.Values["pages"] = float64(cold.Pages)
	s.Values["skills"] = float64(len(cold.Entries))
	pgid := int(proc.pid.Load())
	cpuBefore, cpuErr := groupCPU(pgid)
	if cpuErr == nil {
		s.Values["cpu_to_list_ms"] = ms(cpuBefore)
	}
	if mem, err := groupMemory(pgid); err == nil {
		s.Values["peak_rss_mib"] = float64(mem.Peak) / (1 << 20)
		s.Values["rss_mib"] = float64(mem.Current) / (1 << 20)
	} else {
		s.Warnings = append(s.Warnings, "memory not measured: "+err.Error())
	}
	views, err := parseEntries(cold.Entries)
	if err != nil {
		return nil, err
	}
	s.Digest = libraryDigest(views)
	if dup := duplicates(views); len(dup) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("skills/list listed %d skills more than once (first %s)", len(dup), dup[0]))
	}

	t := time.Now()
	tools, err := sess.listTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	s.Values["tools_list_ms"] = ms(time.Since(t))

	r := rand.New(rand.NewPCG(o.Seed, 0))
	picks := samplePicks(r, len(views), o.Samples)
	if tool := searchTool(tools); tool != "" && len(views) > 0 {
		s.SearchTool = tool
		var lat []float64
		for _, i := range picks {
			q := searchQuery(views[i].URI)
			t := time.Now()
			isError, text, err := sess.callTool(ctx, tool, map[string]any{"query": q})
			if err != nil {
				return nil, fmt.Errorf("tools/call %s %q: %w", tool, q, err)
			}
			lat = append(lat, ms(time.Since(t)))
			if isError {
				if text == "" {
					text = "(no text)"
				}
				return nil, fmt.Errorf("tools/call %s %q returned an error result: %s", tool, q, abbreviate(text, 200))
			}
		}
		s.Values["search_ms"] = Median(lat)
		s.Values["search_p95_ms"] = Percentile(lat, 95)
	}

	cpuBefore, cpuErr = groupCPU(pgid)
	clientBefore := selfCPU()
	t = time.Now()
	warm, err := listAll(ctx, sess.listPage, nil)
	if err != nil {
		return nil, fmt.Errorf("warm listing: %w", err)
	}
	s.Values["warm_list_ms"] = ms(time.Since(t))
	s.Values["warm_list_client_cpu_ms"] = ms(selfCPU() - clientBefore)
	if cpuAfter, err := groupCPU(pgid); err == nil && cpuErr == nil {
		s.Values["warm_list_cpu_ms"] = ms(cpuAfter - cpuBefore)
	}
	warmViews, err := parseEntries(warm.Entries)
	if err != nil {
		return nil, fmt.Errorf("warm listing: %w", err)
	}
	if diff := compareListings(views, warmViews); diff != "" {
		s.Warnings = append(s.Warnings, "the library changed between the first and the warm listing: "+diff)
	}

	if sess.hasResources() {
		t = time.Now()
		if err := sess.listResources(ctx); err != nil {
			return nil, fmt.Errorf("resources/list: %w", err)
		}
		s.Values["resources_list_ms"] = ms(time.Since(t))
	}

	var gets, reads []float64
	for _, i := range picks {
		uri := views[i].URI
		t := time.Now()
		skill, err := sess.getSkill(ctx, uri)
		if err != nil {
			return nil, fmt.Errorf("skills/get %s: %w", uri, err)
		}
		gets = append(gets, ms(time.Since(t)))
		if len(skill) == 0 || string(skill) == "null" {
			return nil, fmt.Errorf("skills/get %s: the result has no skill", uri)
		}
		t = time.Now()
		n, err := sess.readResource(ctx, uri)
		if err != nil {
			return nil, fmt.Errorf("resources/read %s: %w", uri, err)
		}
		reads = append(reads, ms(time.Since(t)))
		if n == 0 {
			return nil, fmt.Errorf("resources/read %s: no contents", uri)
		}
	}
	if len(picks) > 0 {
		s.Values["get_ms"] = Median(gets)
		s.Values["read_ms"] = Median(reads)
	}
	// By now a server with a search tool has had to finish what it builds
	// after its first listing (the calls waited for it): this is what it
	// keeps resident, where "after listing" may catch it mid-build.
	if mem, err := groupMemory(pgid); err == nil {
		s.Values["end_rss_mib"] = float64(mem.Current) / (1 << 20)
	}
	return s, nil
}

// isExitAfterClose reports whether a Close error only says how the server
// exited once its stdin was closed (a signal or a non-zero status), which
// is not a benchmark problem.
func isExitAfterClose(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "signal:") || strings.Contains(msg, "exit status")
}

// samplePicks returns up to n distinct indexes below total, drawn with r.
func samplePicks(r *rand.Rand, total, n int) []int {
	if total == 0 {
		return nil
	}
	return r.Perm(total)[:min(n, total)]
}

func searchTool(tools []string) string {
	for _, t := range tools {
		if strings.HasSuffix(t, searchToolSuffix) {
			return t
		}
	}
	return ""
}

// searchQuery turns a skill URI into a query a user might type: the words
// of the skill's name ("skill://data/review-pdf/SKILL.md" → "review pdf").
func searchQuery(uri string) string {
	p := strings.TrimSuffix(uri, "/SKILL.md")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	words := strings.FieldsFunc(p, func(r rune) bool { return r == '-' || r == '_' })
	return strings.Join(words[:min(len(words), 2)], " ")
}
