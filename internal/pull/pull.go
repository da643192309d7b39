// Package pull copies skills from any server that implements the MCP Skills
// extension (SEP-2640) to a local folder, verified.
//
// It is a client of the wire protocol only: it connects over stdio (a
// spawned server command) or Streamable HTTP, lists skills with skills/list,
// and reads each file with resources/read. Every server is treated as
// hostile:
//
//   - nothing is fetched on connect or while listing (SEP-2640 H13, H33);
//   - a manifest must be an array (not "dynamic", unless allowed), include
//     its SKILL.md once, list each file once, and keep every URI inside the
//     skill; files are read only at URIs the entry lists (H11);
//   - every byte read is checked against the listed size and sha256 digest
//     before it is written (H10), and the fetched SKILL.md frontmatter is
//     compared field by field with the listed one (H12);
//   - the destination is opened as an [os.Root], no symlink below it is
//     followed, and skills are staged in a hidden folder inside it, then
//     renamed into place, so a failure leaves the destination as it was.
//
// # Use
//
//	c, err := pull.Dial(ctx, pull.Endpoint{URL: "http://127.0.0.1:3939/mcp"}, nil)
//	...
//	defer c.Close()
//	all, err := c.List(ctx)
//	sel, err := pull.Select(all, []string{"refunds"})
//	rep, err := c.Pull(ctx, sel, &pull.PullOptions{Dest: "skills", Sync: true})
package pull

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/mcpclient"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Defaults for Options fields left zero.
const (
	// DefaultRequestTimeout bounds one request: a skills/list page or one
	// resources/read.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultMaxPages bounds the skills/list pages followed in one listing.
	DefaultMaxPages = 10000
	// DefaultMaxEntries bounds the entries accepted in one listing.
	DefaultMaxEntries = 100000
	// DefaultMaxMessageBytes bounds one message from the server. A skill may
	// hold up to 16 MiB, and a binary file travels base64-encoded, so one
	// maximal file needs about 22 MiB on the wire.
	DefaultMaxMessageBytes = 32 << 20
)

// Options configures a Client. A nil *Options means defaults.
type Options struct {
	// ProtocolVersion pins the protocol revision offered to the server. If
	// empty, the client offers 2026-07-28 (with server/discover) and falls
	// back to the 2025-11-25 initialize handshake.
	ProtocolVersion string
	// RequestTimeout bounds each request. If zero, DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxPages and MaxEntries bound a listing. If zero, DefaultMaxPages and
	// DefaultMaxEntries.
	MaxPages, MaxEntries int
	// MaxMessageBytes bounds one message received from the server over the
	// transports Dial builds. If zero, DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Logger receives warnings about the server (for example a missing
	// resources capability). If nil, nothing is logged.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.RequestTimeout <= 0 {
		v.RequestTimeout = DefaultRequestTimeout
	}
	if v.MaxPages <= 0 {
		v.MaxPages = DefaultMaxPages
	}
	if v.MaxEntries <= 0 {
		v.MaxEntries = DefaultMaxEntries
	}
	if v.MaxMessageBytes <= 0 {
		v.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	return v
}

// Endpoint says where the server is: exactly one of URL and Command.
type Endpoint struct {
	// URL is a Streamable HTTP endpoint (http or https).
	URL string
	// Header is sent with every request to URL's origin, and never to
	// another host a redirect leads to.
	Header http.Header
	// Command is a server command line run as a child process and spoken to
	// over stdin and stdout.
	Command []string
	// Stderr receives the child process's standard error. If nil, it is
	// discarded.
	Stderr io.Writer
}

// ErrNoExtension is returned by Dial and Connect when the server does not
// declare the skills extension; no skills/ method has been called then.
var ErrNoExtension = errors.New("pull: the server does not declare the MCP Skills extension (" + skillsext.ExtensionID + ")")

// Client is a connection to one skills server. Its methods are safe for
// concurrent use. Close it when done.
type Client struct {
	cs      *mcp.ClientSession
	opts    Options
	meter   *mcpclient.Meter // nil for a transport passed to Connect
	reads   atomic.Int64     // resources/read calls made
	dirRead bool
}

// Dial connects to the server at ep, negotiates the protocol and checks
// that the server declares the skills extension.
func Dial(ctx context.Context, ep Endpoint, opts *Options) (*Client, error) {
	o := opts.withDefaults()
	m := new(mcpclient.Meter)
	var t mcp.Transport
	switch {
	case ep.URL != "" && len(ep.Command) > 0:
		return nil, errors.New("pull: give a URL or a command, not both")
	case ep.URL != "":
		if u, err := url.Parse(ep.URL); err == nil && u.User != nil {
			return nil, errors.New("server URL: credentials in the URL are not supported; use a header")
		}
		ht, err := mcpclient.NewHTTPTransport(ep.URL, ep.Header, int64(o.MaxMessageBytes), m)
		if err != nil {
			return nil, err
		}
		t = ht
	case len(ep.Command) > 0:
		t = &mcpclient.CommandTransport{Argv: ep.Command, Stderr: ep.Stderr, MaxMessageBytes: o.MaxMessageBytes, Meter: m}
	default:
		return nil, errors.New("pull: no server given: set a URL or a command")
	}
	c, err := connect(ctx, t, o)
	if err != nil {
		if cause := m.Cause(); cause != "" {
			return nil, fmt.Errorf("connecting to the server: %s", cause)
		}
		return nil, err
	}
	c.meter = m
	return c, nil
}

// Connect is Dial over a transport the caller built, such as one of
// [mcp.NewInMemoryTransports].
func Connect(ctx context.Context, t mcp.Transport, opts *Options) (*Client, error) {
	return connect(ctx, t, opts.withDefaults())
}

func connect(ctx context.Context, t mcp.Transport, o Options) (*Client, error) {
	mc := mcp.NewClient(&mcp.Implementation{Name: "skills-mcp-pull", Version: "1"}, &mcp.ClientOptions{
		// Declare nothing: the extension needs no client capability, and
		// roots would invite requests a pull never answers.
		Capabilities: &mcp.ClientCapabilities{},
	})
	if err := mcp.AddSendingCustomMethod[*skillsext.ListSkillsParams, *listResult](mc, skillsext.MethodList); err != nil {
		return nil, err
	}
	if err := mcp.AddSendingCustomMethod[*skillsext.GetSkillParams, *getResult](mc, skillsext.MethodGet); err != nil {
		return nil, err
	}
	if err := mcp.AddSendingCustomMethod[*skillsext.ReadDirectoryParams, *skillsext.ReadDirectoryResult](mc, skillsext.MethodReadDirectory); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
	defer cancel()
	cs, err := mc.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: o.ProtocolVersion})
	if err != nil {
		return nil, fmt.Errorf("connecting to the server: %w", err)
	}
	c := &Client{cs: cs, opts: o}
	// H2: no skills/ call before the declaration has been seen.
	ir := cs.InitializeResult()
	var caps *mcp.ServerCapabilities
	if ir != nil {
		caps = ir.Capabilities
	}
	if caps == nil || caps.Extensions == nil {
		cs.Close()
		return nil, ErrNoExtension
	}
	settings, ok := caps.Extensions[skillsext.ExtensionID]
	if !ok {
		cs.Close()
		return nil, ErrNoExtension
	}
	if m, ok := settings.(map[string]any); ok {
		c.dirRead, _ = m["directoryRead"].(bool)
	}
	if caps.Resources == nil {
		o.Logger.Warn("the server declares the skills extension but not the resources capability it requires; reads may fail")
	}
	return c, nil
}

// Close ends the session and, for a spawned server, waits for it to exit.
func (c *Client) Close() error { return c.cs.Close() }

// Server describes the server the client is connected to.
type Server struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Protocol string `json:"protocol"`
	// DirectoryRead reports whether the server declared directoryRead.
	DirectoryRead bool `json:"directoryRead"`
}

// Server returns what the server said about itself at connection.
func (c *Client) Server() Server {
	s := Server{DirectoryRead: c.dirRead}
	if ir := c.cs.InitializeResult(); ir != nil {
		s.Protocol = ir.ProtocolVersion
		if ir.ServerInfo != nil {
			s.Name, s.Version = ir.ServerInfo.Name, ir.ServerInfo.Version
		}
	}
	return s
}

// WireBytes returns the bytes received from the server so far, or -1 when
// the transport does not count them (a transport passed to Connect).
func (c *Client) WireBytes() int64 {
	if c.meter == nil {
		return -1
	}
	return c.meter.Received()
}

// Reads returns the number of resources/read requests sent so far.
func (c *Client) Reads() int64 { return c.reads.Load() }

// listResult is skills/list as the client decodes it: entries stay raw so
// that one malformed entry is reported on its own instead of failing the
// whole page.
type listResult struct {
	mcp.ResultBase
	ResultType string             `json:"resultType,omitempty"`
	Skills     *[]json.RawMessage `json:"skills"`
	NextCursor *string            `json:"nextCursor,omitempty"`
}

type getResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Skill      json.RawMessage `json:"skill"`
	NextCursor *string         `json:"nextCursor,omitempty"`
}

// checkResultType refuses a result that is not complete. Older servers omit
// the field, which means complete.
func checkResultType(method, rt string) error {
	if rt != "" && rt != skillsext.ResultComplete {
		return fmt.Errorf("%s returned resultType %q; want %q", method, rt, skillsext.ResultComplete)
	}
	return nil
}

// List returns every skill the server lists, following cursors. It reads
// no file. It fails when the server repeats a cursor, lists one skill twice,
// or exceeds Options.MaxPages or Options.MaxEntries. An entry that cannot be
// pulled (bad URI, missing or malformed fields) is returned with Err set.
func (c *Client) List(ctx context.Context) ([]*Entry, error) {
	var (
		all     []*Entry
		cursor  string
		cursors = map[string]bool{}
		uris    = map[string]bool{}
	)
	for page := 1; ; page++ {
		if page > c.opts.MaxPages {
			return nil, fmt.Errorf("listing skills: the listing did not end after %d pages; the server's cursors never end", c.opts.MaxPages)
		}
		rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
		res, err := mcp.CallCustomMethod[*skillsext.ListSkillsParams, *listResult](rctx, c.cs, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("listing skills (page %d): no answer within %s", page, c.opts.RequestTimeout)
			}
			return nil, fmt.Errorf("listing skills (page %d): %w", page, c.explain(err))
		}
		if err := checkResultType(skillsext.MethodList, res.ResultType); err != nil {
			return nil, err
		}
		if res.Skills == nil {
			return nil, fmt.Errorf("listing skills (page %d): the result has no skills array", page)
		}
		for _, raw := range *res.Skills {
			e := parseEntry(raw)
			if e.URI != "" {
				if uris[e.URI] {
					return nil, fmt.Errorf("listing skills: the server lists %s twice", e.URI)
				}
				uris[e.URI] = true
			}
			all = append(all, e)
			if len(all) > c.opts.MaxEntries {
				return nil, fmt.Errorf("listing skills: more than %d entries; refusing to hold more", c.opts.MaxEntries)
			}
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			return all, nil
		}
		next := *res.NextCursor
		if next == cursor || cursors[next] {
			return nil, fmt.Errorf("listing skills: server repeats cursor %q", truncate(next, 64))
		}
		cursors[next] = true
		cursor = next
	}
}

// Get returns the entry skills/get gives for a SKILL.md URI: the way to
// reach a skill a partial listing leaves out (SEP-2640 H5).
func (c *Client) Get(ctx context.Context, uri string) (*Entry, error) {
	rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	res, err := mcp.CallCustomMethod[*skillsext.GetSkillParams, *getResult](rctx, c.cs, skillsext.MethodGet, &skillsext.GetSkillParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("skills/get %s: %w", uri, c.explain(err))
	}
	if err := checkResultType(skillsext.MethodGet, res.ResultType); err != nil {
		return nil, err
	}
	if len(res.Skill) == 0 || string(res.Skill) == "null" {
		return nil, fmt.Errorf("skills/get %s: the result has no skill", uri)
	}
	e := parseEntry(res.Skill)
	if e.URI != uri {
		return nil, fmt.Errorf("skills/get %s: the server answered with the skill %q", uri, e.URI)
	}
	return e, nil
}

// explain adds to a failed call the reason the transport cut a response
// short, if it did.
func (c *Client) explain(err error) error {
	if c.meter != nil {
		if msg := c.meter.Cause(); msg != "" {
			return fmt.Errorf("%w (%s)", err, msg)
		}
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
