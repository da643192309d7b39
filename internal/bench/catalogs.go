package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of CatalogsOptions: the 1,000 catalogs over 50
// libraries of 100 skills, 20 catalogs per library.
const (
	DefaultCatalogs  = 1000
	DefaultLibraries = 50
	DefaultLibSkills = 100
	// MaxCatalogs bounds CatalogsOptions.Catalogs.
	MaxCatalogs = 100_000
)

// CatalogsCommand is the skills-bench command that serves the catalogs
// (package multiserve); the driver starts it as "<Server> CatalogsCommand
// --dir DIR --catalogs N".
const CatalogsCommand = "catalogs-server"

// CatalogsOptions configures Catalogs. Zero fields take the defaults.
type CatalogsOptions struct {
	// Catalogs, Libraries and Skills shape the process: Catalogs catalogs,
	// round-robin over Libraries generated libraries of Skills skills.
	Catalogs, Libraries, Skills int
	// Dir is where the libraries are generated; if empty, a temporary
	// folder, removed afterwards.
	Dir string
	// Server starts the server; the driver appends CatalogsCommand and its
	// flags. If empty, this executable.
	Server []string
	// NoFastPath asks the server to send every request through the go-sdk.
	NoFastPath bool
	// Concurrency, Duration, MaxRequests, RequestTimeout, Seed, Client and
	// ProtocolVersion are those of the skills/get load, as in HTTPOptions.
	Concurrency     int
	Duration        time.Duration
	MaxRequests     int
	RequestTimeout  time.Duration
	Seed            uint64
	ProtocolVersion string
	// Progress, if set, receives a line per step.
	Progress io.Writer
}

// CatalogsReport is the outcome of Catalogs.
type CatalogsReport struct {
	Catalogs         int  `json:"catalogs"`
	Libraries        int  `json:"libraries"`
	SkillsPerLibrary int  `json:"skillsPerLibrary"`
	FastPath         bool `json:"fastPath"`
	// OpenSeconds is the server's time to open every catalog;
	// OpenOneMoreMs its mean time to open one more over a loaded library.
	OpenSeconds   float64 `json:"openSeconds"`
	OpenOneMoreMs float64 `json:"openOneMoreMs"`
	// ListSeconds is the time to list every catalog once, one after the
	// other; RSSMiB the server's resident size right after.
	ListSeconds float64 `json:"listSeconds"`
	RSSMiB      float64 `json:"rssMiB"`
	// Get is skills/get under load, each request on a random catalog.
	Get         HTTPResult `json:"get"`
	Concurrency int        `json:"concurrency"`
	// PeakRSSMiB is the server's peak resident size over the whole run.
	PeakRSSMiB float64 `json:"peakRssMiB"`
}

// catalogsReady is the line the server prints once it listens (see
// multiserve.Ready).
type catalogsReady struct {
	URL           string  `json:"url"`
	Catalogs      int     `json:"catalogs"`
	OpenSeconds   float64 `json:"openSeconds"`
	OpenOneMoreMs float64 `json:"openOneMoreMs"`
}

// Catalogs measures one process serving many catalogs behind one HTTP
// handler: it generates the libraries, starts the server, lists every
// catalog once, reads the server's resident size, then loads skills/get
// with each request on a random catalog.
func Catalogs(ctx context.Context, opts CatalogsOptions) (*CatalogsReport, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "skills-bench-catalogs-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	for i := range o.Libraries {
		lib := filepath.Join(dir, fmt.Sprintf("lib-%03d", i))
		if _, err := Generate(lib, GenOptions{Skills: o.Skills, Seed: o.Seed + uint64(i), Force: true}); err != nil {
			return nil, err
		}
	}
	progress("generated %d libraries of %d skills in %s", o.Libraries, o.Skills, dir)

	argv := slices.Concat(o.Server, []string{CatalogsCommand, "--dir", dir, "--catalogs", strconv.Itoa(o.Catalogs)})
	if o.NoFastPath {
		argv = append(argv, "--no-fast-path")
	}
	p := newServerProcess(argv)
	stdin, stdout, err := p.startPipes()
	if err != nil {
		return nil, fmt.Errorf("starting the server: %w", err)
	}
	stopped := false
	defer func() {
		if stopped {
			return
		}
		if err := p.stop(stdin); err != nil {
			progress("server: %v", err)
		}
	}()
	ready, err := readReady(ctx, stdout, 10*time.Minute)
	if errors.Is(err, errExitedEarly) {
		// Its stdout closed: wait for the exit, so that its status and
		// all it wrote to stderr are in.
		stopped = true
		_ = p.stop(stdin)
		return nil, fmt.Errorf("the server exited before it was ready (%s): %s", p.exitState(), p.stderr.String())
	}
	if err != nil {
		return nil, err
	}
	pid := int(p.pid.Load())
	rep := &CatalogsReport{Catalogs: ready.Catalogs, Libraries: o.Libraries, SkillsPerLibrary: o.Skills, FastPath: !o.NoFastPath,
		OpenSeconds: ready.OpenSeconds, OpenOneMoreMs: ready.OpenOneMoreMs, Concurrency: o.Concurrency}
	progress("server %d opened %d catalogs in %.1f s, one more in %.3f ms", pid, ready.Catalogs, ready.OpenSeconds, ready.OpenOneMoreMs)

	urls := make([]string, ready.Catalogs)
	for i := range urls {
		urls[i] = ready.URL + "/c/" + strconv.Itoa(i)
	}
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * o.Concurrency,
		MaxIdleConnsPerHost: 2 * o.Concurrency,
		IdleConnTimeout:     90 * time.Second,
	}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport}
	ho := HTTPOptions{Concurrency: o.Concurrency, Duration: o.Duration, MaxRequests: o.MaxRequests, RequestTimeout: o.RequestTimeout,
		Seed: o.Seed, ProtocolVersion: o.ProtocolVersion, Client: ClientRaw}

	// Every catalog listed once, as a host's first listing would; the
	// SKILL.md URIs of each library are kept from its first catalog.
	start := time.Now()
	uris := make([][]string, min(o.Libraries, len(urls)))
	for i, u := range urls {
		ho.URL = u
		cs, err := connectHTTP(ctx, ho, hc)
		if err != nil {
			return rep, fmt.Errorf("connecting to catalog %d: %w", i, err)
		}
		lctx, cancel := context.WithTimeout(ctx, 10*o.RequestTimeout)
		l, err := listAll(lctx, sdkLister(cs), nil)
		cancel()
		_ = cs.Close()
		if err != nil {
			return rep, fmt.Errorf("listing catalog %d: %w", i, err)
		}
		if i < len(uris) {
			if uris[i], _, err = uriSets(l.Entries); err != nil {
				return rep, err
			}
			if len(uris[i]) == 0 {
				return rep, fmt.Errorf("catalog %d lists no skills", i)
			}
		}
	}
	rep.ListSeconds = time.Since(start).Seconds()
	if m, err := groupMemory(pid); err == nil {
		rep.RSSMiB = float64(m.Current) / (1 << 20)
	}
	progress("listed every catalog in %.1f s; server RSS %.0f MiB", rep.ListSeconds, rep.RSSMiB)

	// The request the SDK client sends for skills/get, recorded once and
	// replayed with another URL and URI each time.
	rec := &recorder{next: transport}
	ho.URL = urls[0]
	cs, err := connectHTTP(ctx, ho, &http.Client{Transport: rec})
	if err != nil {
		return rep, err
	}
	rctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
	err = callSDK(rctx, cs, methodGetSkill, uris[0][0])
	cancel()
	defer cs.Close()
	if err != nil {
		return rep, fmt.Errorf("skills/get through the SDK client: %w", err)
	}
	r, ok := rec.request(methodGetSkill)
	if !ok {
		return rep, errors.New("bench: the SDK client sent no skills/get request over HTTP to record")
	}
	tmpl, err := newRawTemplate(urls[0], r, uris[0][0])
	if err != nil {
		return rep, err
	}
	quoted := make([][][]byte, len(uris))
	for l, us := range uris {
		for _, u := range us {
			q, _ := json.Marshal(u) // a string always marshals
			quoted[l] = append(quoted[l], q)
		}
	}
	workers := make([]func(ctx context.Context, r *rand.Rand) (string, error), o.Concurrency)
	for w := range workers {
		c := &rawCaller{hc: hc, tmpl: tmpl, method: methodGetSkill}
		workers[w] = func(ctx context.Context, r *rand.Rand) (string, error) {
			cat := r.IntN(len(urls))
			lib := cat % len(uris)
			k := r.IntN(len(uris[lib]))
			return uris[lib][k], c.callURL(ctx, urls[cat], uris[lib][k], quoted[lib][k])
		}
	}
	progress("loading skills/get with %d clients for %v", o.Concurrency, o.Duration)
	rep.Get = loadWorkers(ctx, ho, workers)
	rep.Get.Method = methodGetSkill
	if m, err := groupMemory(pid); err == nil {
		rep.PeakRSSMiB = float64(m.Peak) / (1 << 20)
	}
	if rep.Get.Errors > 0 {
		return rep, fmt.Errorf("%w: skills/get: %d of %d failed (first: %s)", ErrRequestsFailed, rep.Get.Errors, rep.Get.Requests, rep.Get.FirstError)
	}
	return rep, ctx.Err()
}

// errExitedEarly is readReady's error when the server's stdout closed
// before its ready line.
var errExitedEarly = errors.New("the server's stdout closed before its ready line")

// readReady reads the server's ready line, or fails once it exits, ctx
// ends or limit passes.
func readReady(ctx context.Context, stdout io.Reader, limit time.Duration) (catalogsReady, error) {
	type result struct {
		r   catalogsReady
		err error
	}
	done := make(chan result, 1)
	go func() { // ends when the line arrives or stdout closes (stop kills the server)
		var res result
		line, err := bufio.NewReader(stdout).ReadBytes('\n')
		switch {
		case err != nil:
			res.err = errExitedEarly
		case json.Unmarshal(line, &res.r) != nil || res.r.URL == "":
			res.err = fmt.Errorf("the server's first line is not its ready line: %s", abbreviate(string(line), 200))
		}
		done <- res
		io.Copy(io.Discard, stdout)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case res := <-done:
		return res.r, res.err
	case <-ctx.Done():
		return catalogsReady{}, ctx.Err()
	case <-t.C:
		return catalogsReady{}, fmt.Errorf("the server was not ready within %v", limit)
	}
}

// loadWorkers runs the workers for o.Duration (or o.MaxRequests requests)
// and summarises their latencies; each call returns the URI it requested.
func loadWorkers(ctx context.Context, o HTTPOptions, workers []func(context.Context, *rand.Rand) (string, error)) HTTPResult {
	var (
		issued   atomic.Int64
		errCount atomic.Int64
		firstErr sync.Once
		res      HTTPResult
		lat      = make([][]float64, len(workers))
		wg       sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(o.Duration)
	for w, call := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(o.Seed, uint64(w)+1))
			for time.Now().Before(deadline) && ctx.Err() == nil && issued.Add(1) <= int64(o.MaxRequests) {
				rctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
				t := time.Now()
				uri, err := call(rctx, r)
				d := time.Since(t)
				cancel()
				if err != nil {
					errCount.Add(1)
					firstErr.Do(func() { res.FirstError = fmt.Sprintf("%s: %v", uri, err) })
					continue
				}
				lat[w] = append(lat[w], float64(d.Nanoseconds())/1e6)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	res.Errors = int(errCount.Load())
	res.Requests = len(all) + res.Errors
	res.Seconds = elapsed.Seconds()
	res.PerSec = float64(len(all)) / elapsed.Seconds()
	if len(all) > 0 {
		res.P50Ms = percentileSorted(all, 50)
		res.P99Ms = percentileSorted(all, 99)
		res.MaxMs = all[len(all)-1]
	}
	return res
}

func (o CatalogsOptions) withDefaults() (CatalogsOptions, error) {
	if o.Catalogs == 0 {
		o.Catalogs = DefaultCatalogs
	}
	if o.Libraries == 0 {
		o.Libraries = DefaultLibraries
	}
	if o.Skills == 0 {
		o.Skills = DefaultLibSkills
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.MaxRequests == 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if len(o.Server) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return o, fmt.Errorf("bench: finding this executable to start the server: %w", err)
		}
		o.Server = []string{exe}
	}
	switch {
	case o.Catalogs < 1 || o.Catalogs > MaxCatalogs:
		return o, fmt.Errorf("bench: --catalogs must be between 1 and %d", MaxCatalogs)
	case o.Libraries < 1 || o.Libraries > o.Catalogs:
		return o, errors.New("bench: --libraries must be between 1 and --catalogs")
	case o.Skills < 1 || o.Skills > MaxGenSkills:
		return o, fmt.Errorf("bench: --skills must be between 1 and %d", MaxGenSkills)
	case o.Concurrency < 1 || o.Concurrency > MaxConcurrency:
		return o, fmt.Errorf("bench: --concurrency must be between 1 and %d", MaxConcurrency)
	case o.Duration < 0 || o.Duration > MaxDuration:
		return o, fmt.Errorf("bench: --duration must be positive and at most %v", MaxDuration)
	case o.MaxRequests < 1 || o.RequestTimeout < 0:
		return o, errors.New("bench: --max-requests and --timeout must be positive")
	}
	return o, nil
}

// WriteText writes the report as a few lines and a table.
func (r *CatalogsReport) WriteText(w io.Writer) error {
	var b strings.Builder
	path := "front end"
	if !r.FastPath {
		path = "go-sdk only"
	}
	fmt.Fprintf(&b, "%d catalogs over %d libraries of %d skills, one process, one handler (%s)\n", r.Catalogs, r.Libraries, r.SkillsPerLibrary, path)
	fmt.Fprintf(&b, "opened in %.2f s; one more over a loaded library: %s\n", r.OpenSeconds, formatNumber(r.OpenOneMoreMs, "ms"))
	fmt.Fprintf(&b, "listed every catalog once in %.1f s; server RSS then %.0f MiB (peak over the run %.0f MiB)\n", r.ListSeconds, r.RSSMiB, r.PeakRSSMiB)
	rows := [][]string{{"method", "clients", "requests", "errors", "requests/s", "p50", "p99", "max"},
		{r.Get.Method, fmt.Sprint(r.Concurrency), fmt.Sprint(r.Get.Requests), fmt.Sprint(r.Get.Errors), fmt.Sprintf("%.0f", r.Get.PerSec),
			formatNumber(r.Get.P50Ms, "ms"), formatNumber(r.Get.P99Ms, "ms"), formatNumber(r.Get.MaxMs, "ms")}}
	writeTable(&b, rows, false)
	_, err := io.WriteString(w, b.String())
	return err
}
