package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// session is one client connection of a run.
type session struct {
	cs        *mcp.ClientSession
	version   string // negotiated
	timeout   time.Duration
	transport mcp.Transport
	// dead is set once the connection broke; later calls fail at once
	// with it instead of waiting for a timeout each.
	dead error
	// wire validates what the server sends, if the transport allows.
	wire *wireTap
}

// rawResult keeps a custom method's result as the server sent it, so that
// the checks see missing, null and mistyped fields.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) UnmarshalJSON(b []byte) error {
	r.raw = bytes.Clone(b)
	return nil
}

// connect opens a connection at protocol revision v and records the
// connect check. It returns nil when the server cannot be reached.
func (c *checker) connect(ctx context.Context, dial Dialer, v string) *session {
	t, err := dial(ctx)
	if err != nil {
		c.rec.add(Fail, "connect", v, "", "cannot reach the server: %v", err)
		return nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "skills-mcp-check", Version: "1"}, nil)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *rawResult](client, skillsext.MethodList),
		mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *rawResult](client, skillsext.MethodGet),
		mcp.AddSendingCustomMethod[*skillsext.ReadDirectoryParams, *rawResult](client, skillsext.MethodReadDirectory),
	} {
		if err != nil {
			panic(err) // constant method names: a programming mistake
		}
	}
	cctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout)
	defer cancel()
	tapped, wire := c.tapTransport(t, v)
	cs, err := client.Connect(cctx, tapped, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		c.rec.add(Fail, "connect", v, "", "connecting at %s: %s", v, describe(err, cctx, t, c.opts.ConnectTimeout))
		c.wireResults(&session{version: v, wire: wire}) // an invalid handshake may be why
		return nil
	}
	s := &session{cs: cs, version: cs.InitializeResult().ProtocolVersion, timeout: c.opts.Timeout, transport: t, wire: wire}
	if s.version != v {
		c.rec.add(Skip, "connect", s.version, "", "asked for %s, the server negotiated %s; checks of this connection apply to %s", v, s.version, s.version)
	} else {
		c.rec.ok("connect", s.version)
	}
	return s
}

func (s *session) close() {
	// A server that hangs must not hang the checker on close either.
	done := make(chan struct{})
	go func() {
		s.cs.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(s.timeout):
	}
}

// newProtocol reports whether the connection is on 2026-07-28 or later.
func (s *session) newProtocol() bool { return skillsext.UsesCacheFields(s.version) }

// call sends a custom method and returns the raw result.
func call[P any, PP interface {
	*P
	mcp.Params
}](ctx context.Context, s *session, method string, p PP) (json.RawMessage, error) {
	if s.dead != nil {
		return nil, s.dead
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := mcp.CallCustomMethod[PP, *rawResult](cctx, s.cs, method, p)
	if err != nil {
		return nil, s.fail(err, cctx)
	}
	if res == nil || res.raw == nil {
		return nil, errors.New("the result is empty")
	}
	return res.raw, nil
}

// read sends resources/read.
func (s *session) read(ctx context.Context, uri, tester string) (*mcp.ReadResourceResult, error) {
	if s.dead != nil {
		return nil, s.dead
	}
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := s.cs.ReadResource(cctx, &mcp.ReadResourceParams{URI: uri, Meta: mcp.Meta{testerMetaKey: tester}})
	if err != nil {
		return nil, s.fail(err, cctx)
	}
	return res, nil
}

// fail turns a call error into one that names its cause, and marks the
// connection dead when it broke.
func (s *session) fail(err error, ctx context.Context) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	msg := describe(err, ctx, s.transport, s.timeout)
	switch {
	case stoppedBy(ctx) != nil:
		// The caller stopped the run (its overall deadline): no request
		// of this connection can run any more, and none is to blame.
		s.dead = fmt.Errorf("the run was stopped: %v", stoppedBy(ctx))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// A server that ignores one request may ignore all: fail the
		// rest at once rather than waiting out every timeout.
		s.dead = fmt.Errorf("the server stopped answering (an earlier request got no answer within %s)", s.timeout)
	case errors.Is(err, mcp.ErrConnectionClosed) || cutBy(s.transport):
		s.dead = fmt.Errorf("the connection broke earlier: %s", msg)
	}
	return errors.New(msg)
}

// cutBy reports whether a bounded transport cut the connection.
func cutBy(t mcp.Transport) bool {
	c, ok := t.(causer)
	return ok && c.Cause() != ""
}

// causer is implemented by the bounded transports of this package: it
// says why the transport cut the connection, if it did.
type causer interface{ Cause() string }

// describe explains a transport or SDK error.
func describe(err error, ctx context.Context, t mcp.Transport, timeout time.Duration) string {
	if c, ok := t.(causer); ok {
		if cause := c.Cause(); cause != "" {
			return cause
		}
	}
	if cause := stoppedBy(ctx); cause != nil {
		return "stopped: " + cause.Error()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	return truncate(err.Error(), 300)
}

// stoppedBy returns the cause with which the caller ended ctx, such as the
// CLI's overall deadline, or nil when ctx is live or ended by its own
// timeout or a plain cancellation.
func stoppedBy(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause
	}
	return nil
}

// code returns the JSON-RPC error code of err, or 0.
func code(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// object decodes a JSON object into its members, or reports what it is
// instead.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("want a JSON object, got %s", kind(raw))
	}
	return m, nil
}

// kind names the JSON type of raw, for messages.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// str decodes a JSON string member, reporting whether it is one.
func str(m map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// resultType checks the resultType member of a skills result: required to
// be "complete" on 2026-07-28, and if present "complete" before.
func (c *checker) resultType(s *session, m map[string]json.RawMessage, subject string) {
	raw, present := m["resultType"]
	rt, isStr := str(m, "resultType")
	switch {
	case !present && s.newProtocol():
		c.rec.add(Fail, "list-result-type", s.version, subject, `the result has no resultType; want "complete"`)
	case present && (!isStr || rt != skillsext.ResultComplete):
		c.rec.add(Fail, "list-result-type", s.version, subject, `resultType is %s; want "complete"`, truncate(string(raw), 60))
	default:
		c.rec.ok("list-result-type", s.version)
	}
}

// cacheFields checks ttlMs and cacheScope of a cacheable result and
// returns the scope.
func (c *checker) cacheFields(s *session, m map[string]json.RawMessage, subject string) string {
	if !s.newProtocol() {
		c.rec.ok("cache-fields", s.version)
		return ""
	}
	var problems []string
	var ttl json.Number
	if raw, ok := m["ttlMs"]; !ok {
		problems = append(problems, "no ttlMs")
	} else if err := json.Unmarshal(raw, &ttl); err != nil {
		problems = append(problems, "ttlMs is "+kind(raw))
	} else if n, err := ttl.Int64(); err != nil || n < 0 {
		problems = append(problems, "ttlMs is "+ttl.String()+", want an integer ≥ 0")
	}
	scope, ok := str(m, "cacheScope")
	if !ok {
		problems = append(problems, "no cacheScope string")
	} else if scope != "public" && scope != "private" {
		problems = append(problems, fmt.Sprintf("cacheScope is %q, want public or private", scope))
	}
	if len(problems) > 0 {
		c.rec.add(Fail, "cache-fields", s.version, subject, "on %s the result must carry ttlMs and cacheScope: %s", s.version, strings.Join(problems, ", "))
		return ""
	}
	c.rec.ok("cache-fields", s.version)
	return scope
}
