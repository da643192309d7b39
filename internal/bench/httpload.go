package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/httpserve"
)

// Defaults for HTTPOptions fields left zero.
const (
	DefaultConcurrency    = 32
	DefaultDuration       = 10 * time.Second
	DefaultMaxRequests    = 1_000_000
	DefaultRequestTimeout = 10 * time.Second
	// MaxConcurrency bounds HTTPOptions.Concurrency: each worker holds a
	// session and a connection.
	MaxConcurrency = 1024
	// MaxDuration bounds HTTPOptions.Duration per phase.
	MaxDuration = 10 * time.Minute
)

// HTTPOptions configures LoadHTTP. Zero fields take the defaults above.
type HTTPOptions struct {
	// URL is the Streamable HTTP endpoint, e.g. http://127.0.0.1:3939/mcp.
	URL string
	// Concurrency is the number of concurrent clients, each with its own
	// session over one shared connection pool.
	Concurrency int
	// Duration is how long each phase (skills/get, then resources/read)
	// sends requests.
	Duration time.Duration
	// MaxRequests bounds the requests of each phase.
	MaxRequests int
	// RequestTimeout bounds every request.
	RequestTimeout time.Duration
	// Token, if set, is sent as a bearer token.
	Token string
	// AllowRemote permits a URL whose host is not a loopback address.
	AllowRemote bool
	// Seed picks the URIs each worker requests. If zero, DefaultSeed.
	Seed uint64
	// ProtocolVersion is the MCP revision the client asks for. If empty, the
	// SDK's latest.
	ProtocolVersion string
	// Client is ClientRaw or ClientSDK. If empty, ClientRaw.
	Client string
	// Methods are the phases to run, in the order skills/get, resources/read.
	// If empty, both.
	Methods []string
}

// HTTPReport is the outcome of LoadHTTP.
type HTTPReport struct {
	URL         string       `json:"url"`
	Client      string       `json:"client"`
	Concurrency int          `json:"concurrency"`
	Skills      int          `json:"skills"`
	Files       int          `json:"files"`
	Phases      []HTTPResult `json:"phases"`
}

// HTTPResult is one phase of LoadHTTP: one method under load.
type HTTPResult struct {
	Method   string  `json:"method"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Seconds  float64 `json:"seconds"`
	PerSec   float64 `json:"requestsPerSecond"`
	P50Ms    float64 `json:"p50Ms"`
	P99Ms    float64 `json:"p99Ms"`
	MaxMs    float64 `json:"maxMs"`
	// FirstError is the first failure, if any.
	FirstError string `json:"firstError,omitempty"`
}

// ErrRemote is returned for a non-loopback URL without AllowRemote: a load
// test is an attack on anyone else's server.
var ErrRemote = errors.New("bench: refusing to load a non-loopback host (use --allow-remote for a server you run)")

// ErrRequestsFailed is wrapped by LoadHTTP's error when requests failed; the
// report is still returned.
var ErrRequestsFailed = errors.New("bench: requests failed under load")

// LoadHTTP walks skills/list once to collect URIs, then measures skills/get
// and resources/read, one after the other, each with opts.Concurrency
// clients for opts.Duration (or opts.MaxRequests requests). Latencies are
// of successful requests; failures are counted, and any failure makes the
// returned error wrap ErrRequestsFailed.
func LoadHTTP(ctx context.Context, opts HTTPOptions) (*HTTPReport, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	// One pool for every worker, with an idle connection for each, so that
	// the measurement is of the server and not of TCP handshakes.
	transport := &http.Transport{
		Proxy:               nil, // loopback traffic must not go through a proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * o.Concurrency,
		MaxIdleConnsPerHost: 2 * o.Concurrency,
		IdleConnTimeout:     90 * time.Second,
	}
	defer transport.CloseIdleConnections()
	var rt http.RoundTripper = transport
	if o.Token != "" {
		rt = bearer{token: o.Token, next: transport}
	}
	hc := &http.Client{Transport: rt}
	first, err := connectHTTP(ctx, o, hc)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", o.URL, err)
	}
	listCtx, cancel := context.WithTimeout(ctx, 10*o.RequestTimeout)
	l, err := listAll(listCtx, sdkLister(first), nil)
	cancel()
	_ = first.Close()
	if err != nil {
		return nil, err
	}
	skillURIs, fileURIs, err := uriSets(l.Entries)
	if err != nil {
		return nil, err
	}
	if len(skillURIs) == 0 {
		return nil, errors.New("bench: the server lists no skills; nothing to request")
	}
	rep := &HTTPReport{URL: o.URL, Client: o.Client, Concurrency: o.Concurrency, Skills: len(skillURIs), Files: len(fileURIs)}

	var failed []string
	for _, ph := range []struct {
		method string
		uris   []string
	}{
		{methodGetSkill, skillURIs},
		{methodReadResource, fileURIs},
	} {
		if !slices.Contains(o.Methods, ph.method) {
			continue
		}
		callers, closeAll, err := newCallers(ctx, o, ph.method, ph.uris[0], hc, transport)
		if err != nil {
			return rep, err
		}
		res := loadPhase(ctx, o, callers, ph.uris)
		closeAll()
		res.Method = ph.method
		rep.Phases = append(rep.Phases, res)
		if res.Errors > 0 {
			failed = append(failed, fmt.Sprintf("%s: %d of %d failed (first: %s)", ph.method, res.Errors, res.Requests, res.FirstError))
		}
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
	if len(failed) > 0 {
		return rep, fmt.Errorf("%w: %s", ErrRequestsFailed, strings.Join(failed, "; "))
	}
	return rep, nil
}

// caller sends one request for uri (and its JSON string q) and checks the
// answer.
type caller func(ctx context.Context, uri string, q []byte) error

// newCallers returns one caller per worker for method, and a function that
// closes what they hold. With ClientSDK each worker has its own client
// session; with ClientRaw one SDK session sends a request for uri, which is
// recorded and then replayed by every worker with their own URIs.
func newCallers(ctx context.Context, o HTTPOptions, method, uri string, hc *http.Client, transport http.RoundTripper) ([]caller, func(), error) {
	callers := make([]caller, o.Concurrency)
	if o.Client == ClientSDK {
		sessions := make([]*mcp.ClientSession, o.Concurrency)
		closeAll := func() {
			for _, cs := range sessions {
				if cs != nil {
					_ = cs.Close()
				}
			}
		}
		for i := range sessions {
			cs, err := connectHTTP(ctx, o, hc)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("connecting client %d: %w", i+1, err)
			}
			sessions[i] = cs
			callers[i] = func(ctx context.Context, uri string, _ []byte) error { return callSDK(ctx, cs, method, uri) }
		}
		return callers, closeAll, nil
	}

	// The session that made the recorded request stays open while it is
	// replayed, in case the server ties requests to it.
	rec := &recorder{next: transport}
	var rt http.RoundTripper = rec
	if o.Token != "" {
		rt = bearer{token: o.Token, next: rec}
	}
	cs, err := connectHTTP(ctx, o, &http.Client{Transport: rt})
	if err != nil {
		return nil, nil, fmt.Errorf("connecting the recording client: %w", err)
	}
	closeAll := func() { _ = cs.Close() }
	rctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
	err = callSDK(rctx, cs, method, uri)
	cancel()
	if err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("%s %s through the SDK client: %w", method, uri, err)
	}
	r, ok := rec.request(method)
	if !ok {
		closeAll()
		return nil, nil, fmt.Errorf("bench: the SDK client sent no %s request over HTTP to record", method)
	}
	tmpl, err := newRawTemplate(o.URL, r, uri)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	// The raw requests go straight to the pool: the recorded headers
	// already carry the token, if any.
	raw := &http.Client{Transport: transport}
	for i := range callers {
		c := &rawCaller{hc: raw, tmpl: tmpl, method: method}
		callers[i] = c.call
	}
	return callers, closeAll, nil
}

// connectHTTP opens a client session over Streamable HTTP.
func connectHTTP(ctx context.Context, o HTTPOptions, hc *http.Client) (*mcp.ClientSession, error) {
	client, err := newClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
	defer cancel()
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: o.URL, HTTPClient: hc, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: o.ProtocolVersion})
}

// callSDK sends method for uri through cs and checks the answer.
func callSDK(ctx context.Context, cs *mcp.ClientSession, method, uri string) error {
	if method == methodGetSkill {
		res, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, cs, methodGetSkill, &getSkillParams{URI: uri})
		if err == nil && (len(res.Skill) == 0 || string(res.Skill) == "null") {
			err = errors.New("the result has no skill")
		}
		return err
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err == nil && len(res.Contents) == 0 {
		err = errors.New("no contents")
	}
	return err
}

func (o HTTPOptions) withDefaults() (HTTPOptions, error) {
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
	if o.Client == "" {
		o.Client = ClientRaw
	}
	if len(o.Methods) == 0 {
		o.Methods = []string{methodGetSkill, methodReadResource}
	}
	for _, m := range o.Methods {
		if m != methodGetSkill && m != methodReadResource {
			return o, fmt.Errorf("bench: --methods: %q is neither %s nor %s", m, methodGetSkill, methodReadResource)
		}
	}
	switch {
	case o.Client != ClientRaw && o.Client != ClientSDK:
		return o, fmt.Errorf("bench: --client must be %s or %s", ClientRaw, ClientSDK)
	case o.Concurrency < 1 || o.Concurrency > MaxConcurrency:
		return o, fmt.Errorf("bench: --concurrency must be between 1 and %d", MaxConcurrency)
	case o.Duration < 0 || o.Duration > MaxDuration:
		return o, fmt.Errorf("bench: --duration must be positive and at most %v", MaxDuration)
	case o.MaxRequests < 1 || o.RequestTimeout < 0:
		return o, errors.New("bench: --max-requests and --timeout must be positive")
	}
	return o, checkLoopback(o.URL, o.AllowRemote)
}

// checkLoopback accepts http(s) URLs whose host is localhost or a loopback
// address, and any host if allowRemote.
func checkLoopback(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bench: --url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("bench: --url %q is not an http:// or https:// URL", raw)
	}
	if allowRemote {
		return nil
	}
	if httpserve.IsLoopback(u.Host) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrRemote, u.Hostname())
}

// uriSets returns the SKILL.md URIs of a listing and the URIs of every file
// in its manifests (the SKILL.md URIs if no manifest lists files).
func uriSets(entries []json.RawMessage) (skills, files []string, err error) {
	for i, raw := range entries {
		var e wireEntry
		if err := json.Unmarshal(raw, &e); err != nil || e.URI == "" {
			return nil, nil, fmt.Errorf("skills/list entry %d has no uri", i+1)
		}
		skills = append(skills, e.URI)
		var list []wireResource
		if json.Unmarshal(e.Resources, &list) == nil {
			for _, r := range list {
				if r.URI != "" {
					files = append(files, r.URI)
				}
			}
		}
	}
	if len(files) == 0 {
		files = skills
	}
	return skills, files, nil
}

// loadPhase runs one method under load and summarises it.
func loadPhase(ctx context.Context, o HTTPOptions, callers []caller, uris []string) HTTPResult {
	// The URIs' JSON strings are made before the clock starts, so that the
	// raw client's requests cost a copy each.
	quoted := make([][]byte, len(uris))
	for i, u := range uris {
		quoted[i], _ = json.Marshal(u) // a string always marshals
	}
	workers := make([]func(context.Context, *rand.Rand) (string, error), len(callers))
	for w, call := range callers {
		workers[w] = func(ctx context.Context, r *rand.Rand) (string, error) {
			i := r.IntN(len(uris))
			return uris[i], call(ctx, uris[i], quoted[i])
		}
	}
	return loadWorkers(ctx, o, workers)
}

// WriteText writes the report as a table.
func (r *HTTPReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d %s clients, %d skills, %d files\n", r.URL, r.Concurrency, r.Client, r.Skills, r.Files)
	rows := [][]string{{"method", "requests", "errors", "requests/s", "p50", "p99", "max"}}
	for _, p := range r.Phases {
		rows = append(rows, []string{p.Method, fmt.Sprint(p.Requests), fmt.Sprint(p.Errors), fmt.Sprintf("%.0f", p.PerSec),
			formatNumber(p.P50Ms, "ms"), formatNumber(p.P99Ms, "ms"), formatNumber(p.MaxMs, "ms")})
	}
	writeTable(&b, rows, false)
	_, err := io.WriteString(w, b.String())
	return err
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}
