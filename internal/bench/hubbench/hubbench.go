// Package hubbench is `skills-bench hub`: it measures the real `skills-hub
// serve` with many projects. It fills a hub data directory through the
// hub package (versions imported as ZIPs, projects, bindings, tokens),
// starts the server on it, lists every project once and reads the server's
// RSS, runs skills/get from concurrent clients spread over the projects,
// and times binding changes made through the admin API until a listening
// session (a 2026-07-28 subscriptions/listen stream) hears them.
package hubbench

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

const usage = `Usage: skills-bench hub --server BIN [flags]

Fills a hub data directory (versions, projects, bindings, tokens), starts
BIN --data DIR serve on a free loopback port, and measures: every
project listed once (skills/list) and the server's RSS after it; skills/get
from concurrent clients spread over the projects (p50, p99, throughput);
and the time from a binding change through the admin API to
notifications/resources/list_changed on a listening session.

Flags:
`

// Options configure Run.
type Options struct {
	// Server is the skills-hub binary.
	Server string
	// Dir is the hub's data directory (filled if empty); "" means a
	// temporary one, removed at the end.
	Dir string
	// Projects, Bindings (per project) and Versions (distinct) shape the hub.
	Projects, Bindings, Versions int
	// Requests is the number of skills/get sent by Clients concurrent
	// clients.
	Requests, Clients int
	// Changes is the number of binding changes timed.
	Changes int
	// Log receives progress.
	Log io.Writer
}

// Report is what Run measured.
type Report struct {
	Options
	SetupTime  time.Duration
	ListTime   time.Duration
	RSSMiB     float64
	GetP50     time.Duration
	GetP99     time.Duration
	GetPerSec  float64
	ChangeP50  time.Duration
	ChangeMax  time.Duration
	ChangeRuns int
}

// Main runs `skills-bench hub` with args and returns its exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	var o Options
	fs.StringVar(&o.Server, "server", "", "the skills-hub `BIN`ary to run")
	fs.StringVar(&o.Dir, "data", "", "the hub's data `DIR` (filled when empty, reused otherwise; default: a temporary one)")
	fs.IntVar(&o.Projects, "projects", 1000, "projects")
	fs.IntVar(&o.Bindings, "bindings", 10, "versions bound to each project")
	fs.IntVar(&o.Versions, "versions", 200, "distinct versions")
	fs.IntVar(&o.Requests, "requests", 20000, "skills/get requests")
	fs.IntVar(&o.Clients, "clients", 32, "concurrent clients")
	fs.IntVar(&o.Changes, "changes", 20, "binding changes timed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case o.Server == "":
		fmt.Fprintln(stderr, "Error: --server BIN is required (build it: go build ./cmd/skills-hub)")
		return 2
	case o.Projects < 1 || o.Versions < 1 || o.Bindings < 1 || o.Bindings >= o.Versions || o.Clients < 1 || o.Requests < o.Clients || o.Changes < 1:
		fmt.Fprintln(stderr, "Error: want --projects, --versions, --clients, --changes ≥ 1, --bindings in [1, versions), --requests ≥ --clients")
		return 2
	}
	o.Log = stderr
	r, err := Run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	r.WriteText(stdout)
	return 0
}

// fixture is what the hub holds, as the clients need it.
type fixture struct {
	admin  string
	tokens []string   // by project
	uris   [][]string // SKILL.md URIs bound, by project
	spare  string     // a version bound to no project's first binding set
}

// Run measures o.
func Run(ctx context.Context, o Options) (*Report, error) {
	rep := &Report{Options: o}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "skills-bench-hub")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.Dir = filepath.Join(dir, "data")
	}
	start := time.Now()
	fx, err := setup(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("filling the hub: %w", err)
	}
	rep.SetupTime = time.Since(start)
	fmt.Fprintf(o.Log, "hub filled in %v: %d projects × %d bindings over %d versions\n", rep.SetupTime.Round(time.Millisecond), o.Projects, o.Bindings, o.Versions)

	srv, err := startServer(ctx, o)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * o.Clients}, Timeout: 60 * time.Second}
	post := func(p int, method, params string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/p/%s/mcp", srv.url, projectID(p)),
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+fx.tokens[p])
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"result"`)) {
			return fmt.Errorf("%s on %s: %d %.200s", method, projectID(p), resp.StatusCode, body)
		}
		return nil
	}

	// Every project listed once, by a few clients.
	start = time.Now()
	if err := parallel(ctx, min(8, o.Clients), o.Projects, func(_, i int) error { return post(i, "skills/list", "{}") }); err != nil {
		return nil, err
	}
	rep.ListTime = time.Since(start)
	if rep.RSSMiB, err = rssMiB(srv.cmd.Process.Pid); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "listed %d projects in %v; server RSS %.0f MiB\n", o.Projects, rep.ListTime.Round(time.Millisecond), rep.RSSMiB)

	// skills/get, spread over the projects.
	lat := make([][]time.Duration, o.Clients)
	per := o.Requests / o.Clients
	start = time.Now()
	err = parallel(ctx, o.Clients, o.Clients, func(_, c int) error {
		lat[c] = make([]time.Duration, 0, per)
		for i := range per {
			p := (c*per + i*31) % o.Projects
			t0 := time.Now()
			if err := post(p, "skills/get", `{"uri":"`+fx.uris[p][i%len(fx.uris[p])]+`"}`); err != nil {
				return err
			}
			lat[c] = append(lat[c], time.Since(t0))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	rep.GetP50, rep.GetP99 = all[len(all)/2], all[len(all)*99/100]
	rep.GetPerSec = float64(len(all)) / elapsed.Seconds()
	fmt.Fprintf(o.Log, "skills/get ×%d at %d clients: p50 %v p99 %v\n", len(all), o.Clients, rep.GetP50, rep.GetP99)

	// Binding changes through the API until a listening session hears them.
	changes, err := timeChanges(ctx, srv.url, fx, o.Changes)
	if err != nil {
		return nil, err
	}
	slices.Sort(changes)
	rep.ChangeP50, rep.ChangeMax, rep.ChangeRuns = changes[len(changes)/2], changes[len(changes)-1], len(changes)
	return rep, nil
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "hub serve: %d projects × %d bindings over %d versions\n", r.Projects, r.Bindings, r.Versions)
	fmt.Fprintf(w, "  setup (through the hub package)   %v\n", r.SetupTime.Round(time.Millisecond))
	fmt.Fprintf(w, "  every project listed once         %v\n", r.ListTime.Round(time.Millisecond))
	fmt.Fprintf(w, "  RSS after the listings            %.0f MiB\n", r.RSSMiB)
	fmt.Fprintf(w, "  %-34s p50 %.2f ms, p99 %.2f ms, %.0f req/s\n", fmt.Sprintf("skills/get ×%d at %d clients", r.Requests/r.Clients*r.Clients, r.Clients),
		ms(r.GetP50), ms(r.GetP99), r.GetPerSec)
	fmt.Fprintf(w, "  binding change → listen stream    p50 %.1f ms, max %.1f ms (%d changes)\n", ms(r.ChangeP50), ms(r.ChangeMax), r.ChangeRuns)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func projectID(p int) string { return fmt.Sprintf("p%04d", p) }

// setup fills o.Dir, or reads back what an earlier run put there.
func setup(ctx context.Context, o Options) (*fixture, error) {
	db, err := store.Open(ctx, store.Options{Dir: o.Dir})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	h := hub.New(db, nil)
	fx := &fixture{tokens: make([]string, o.Projects), uris: make([][]string, o.Projects)}
	type version struct{ id, uri string }
	vs := make([]version, o.Versions)
	for i := range vs {
		name := fmt.Sprintf("skill-%03d", i)
		z := skillZip(name, i)
		inst, err := h.InstallZip(ctx, hub.ZipInstall{R: bytes.NewReader(z), Size: int64(len(z)), FileName: name + ".zip"})
		if err != nil {
			return nil, err
		}
		hex := strings.TrimPrefix(inst.Version.TreeDigest, "sha256:")
		vs[i] = version{inst.Version.ID, "skill://" + hex[:hub.ShortDigest] + "/" + name + "/SKILL.md"}
	}
	for p := range o.Projects {
		id := projectID(p)
		if err := db.CreateProject(ctx, id, id); err != nil && !errors.Is(err, store.ErrExists) {
			return nil, err
		}
		for k := range o.Bindings {
			v := vs[(p*7+k*13)%o.Versions]
			if _, err := h.Bind(ctx, id, v.id); err != nil {
				return nil, err
			}
			fx.uris[p] = append(fx.uris[p], v.uri)
		}
		if _, fx.tokens[p], err = h.CreateToken(ctx, hub.TokenRequest{Project: id, Name: "bench"}); err != nil {
			return nil, err
		}
	}
	// A version project 0 does not have, to bind and unbind.
	for _, v := range vs {
		if !slices.Contains(fx.uris[0], v.uri) {
			fx.spare = v.id
			break
		}
	}
	if _, fx.admin, err = h.CreateToken(ctx, hub.TokenRequest{Scope: store.ScopeAdmin, Name: "bench"}); err != nil {
		return nil, err
	}
	return fx, nil
}

// skillZip is a synthetic skill of four files.
func skillZip(name string, i int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{
		{"SKILL.md", fmt.Sprintf("---\nname: %s\ndescription: Use for task number %d and its kin.\n---\n# %s\n\nDo the thing.\n", name, i, name)},
		{"references/guide.md", strings.Repeat("Some guidance for the task.\n", 40)},
		{"scripts/run.py", "#!/usr/bin/env python3\nprint('hi')\n"},
		{"assets/template.txt", "template\n"},
	} {
		w, _ := zw.Create(f.name)
		w.Write([]byte(f.body))
	}
	zw.Close()
	return buf.Bytes()
}

type server struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

// startServer runs `BIN --data DIR serve` on a free port and waits for
// the address it logs.
func startServer(ctx context.Context, o Options) (*server, error) {
	cmd := exec.Command(o.Server, "--data", o.Dir, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SKILLS_CACHE_DIR="+filepath.Join(o.Dir, "skills-cache"),
		// The load comes from one address and a few tokens, far above
		// the hub's limits for one client; variables, not flags, so that
		// a build that has none of them starts too.
		"SKILLS_HUB_RATE_LIMIT_ADDRESS=0", "SKILLS_HUB_RATE_LIMIT_TOKEN=0", "SKILLS_HUB_RATE_LIMIT_PROJECT=0",
		"SKILLS_HUB_MAX_REQUESTS_PER_ADDRESS=0", "SKILLS_HUB_MAX_CONNS_PER_ADDRESS=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", o.Server, err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), " url="); ok {
				select {
				case urls <- strings.Fields(after)[0]:
				default:
				}
			}
		}
	}()
	select {
	case s.url = <-urls:
		return s, nil
	case <-s.done:
		cmd.Wait()
		return nil, fmt.Errorf("%s serve exited before it listened", o.Server)
	case <-time.After(60 * time.Second):
	case <-ctx.Done():
	}
	s.stop()
	return nil, errors.New("hub serve logged no url= line within 60 s")
}

// stop interrupts the server and waits for it (killing it after 30 s).
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd.Wait()
}

// parallel runs fn(worker, i) for i in [0, n) on workers goroutines, and
// returns the first error (or ctx's).
func parallel(ctx context.Context, workers, n int, fn func(w, i int) error) error {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := range workers {
		wg.Go(func() {
			for i := range next {
				if err := fn(w, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-inner.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// timeChanges binds and unbinds a spare version on project 0 through the
// admin API, n times, and returns how long each took to reach a 2026-07-28
// subscriptions/listen stream on that project.
func timeChanges(ctx context.Context, base string, fx *fixture, n int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"skills-bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/p/"+projectID(0)+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{`+meta+`,"notifications":{"resourcesListChanged":true}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+fx.tokens[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("subscriptions/listen: %w", err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, fmt.Errorf("subscriptions/listen: status %d", resp.StatusCode)
	}
	acked := make(chan struct{}, 1)
	heard := make(chan time.Time, n+1)
	read := make(chan struct{})
	defer func() { cancel(); resp.Body.Close(); <-read }()
	go func() {
		defer close(read)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			switch line := sc.Text(); {
			case strings.Contains(line, "subscriptions/acknowledged"):
				select {
				case acked <- struct{}{}:
				default:
				}
			case strings.Contains(line, "notifications/resources/list_changed"):
				select {
				case heard <- time.Now():
				default:
				}
			}
		}
	}()
	wait := func(what string) (time.Time, error) {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(30 * time.Second):
			return time.Time{}, fmt.Errorf("no %s within 30 s", what)
		case at := <-heard:
			return at, nil
		}
	}
	select {
	case <-acked:
	case <-time.After(30 * time.Second):
		return nil, errors.New("subscriptions/listen: no acknowledgement within 30 s")
	}
	out := make([]time.Duration, 0, n)
	for i := range n {
		method := http.MethodPut
		if i%2 == 1 {
			method = http.MethodDelete
		}
		r, _ := http.NewRequestWithContext(ctx, method, base+"/api/projects/"+projectID(0)+"/skills/"+fx.spare, nil)
		r.Header.Set("Authorization", "Bearer "+fx.admin)
		start := time.Now()
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"changed":true`)) {
			return nil, fmt.Errorf("%s binding: %d %.200s", method, resp.StatusCode, body)
		}
		at, err := wait("resources/list_changed")
		if err != nil {
			return nil, err
		}
		out = append(out, at.Sub(start))
	}
	if len(out)%2 == 1 { // leave the project as it was
		r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/api/projects/"+projectID(0)+"/skills/"+fx.spare, nil)
		r.Header.Set("Authorization", "Bearer "+fx.admin)
		if resp, err := http.DefaultClient.Do(r); err == nil {
			resp.Body.Close()
		}
	}
	return out, nil
}

// rssMiB is process pid's resident size.
func rssMiB(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the server's RSS: %w", err)
	}
	for l := range strings.SplitSeq(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			var kb float64
			fmt.Sscan(f[1], &kb)
			return kb / 1024, nil
		}
	}
	return 0, errors.New("no VmRSS in the server's status")
}
