package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// SnapshotStore keeps the last good catalog document; the hub's store
// implements it. PutIndexSnapshot records raw, already validated, as the
// latest, with where it came from. LatestIndexSnapshot returns the latest
// one recorded, or a nil raw and a nil error when none has been.
type SnapshotStore interface {
	PutIndexSnapshot(ctx context.Context, raw []byte, source string) error
	LatestIndexSnapshot(ctx context.Context) (raw []byte, source string, err error)
}

// Options configures a Catalog. A nil *Options means all defaults.
type Options struct {
	// Limits bounds every document read; nil means the defaults.
	Limits *Limits
	// Client downloads refreshes. If nil, a client of the default
	// transport is used. Its CheckRedirect is replaced by the catalog's own.
	Client *http.Client
	// Timeout bounds a whole refresh, the body included. If zero, 2 minutes.
	Timeout time.Duration
	// Logger receives the catalog's warnings. If nil, they are discarded.
	Logger *slog.Logger
}

// Defaults of a refresh.
const (
	DefaultTimeout = 2 * time.Minute
	maxRedirects   = 5
)

// Catalog is the hub's current catalog snapshot and the ways to replace
// it. Updates are serialised and all-or-nothing: a document is read and
// validated whole, then recorded in the store, then served; a failure at any
// step leaves the previous snapshot both served and stored. Its methods are
// safe for concurrent use.
type Catalog struct {
	store  SnapshotStore
	limits *Limits
	client *http.Client
	// timeout bounds a refresh.
	timeout time.Duration
	log     *slog.Logger

	update sync.Mutex // serialises updates, so the store and cur agree
	cur    atomic.Pointer[Index]
	// served is the sha256 of the stored document served now (zero for
	// the bundled one); guarded by update.
	served [32]byte
}

// Open returns the catalog the (non-nil) store holds, or the bundled snapshot if it
// holds none. A stored document that no longer validates (written under
// other limits, say) is logged and passed over for the bundled one, and
// stays stored until an update replaces it. Open fails only if the store
// cannot be read.
func Open(ctx context.Context, store SnapshotStore, opts *Options) (*Catalog, error) {
	if opts == nil {
		opts = &Options{}
	}
	c := &Catalog{store: store, limits: opts.Limits, timeout: opts.Timeout, log: opts.Logger}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	client := http.Client{}
	if opts.Client != nil {
		client = *opts.Client
	}
	client.CheckRedirect = checkRedirect
	c.client = &client

	raw, source, err := store.LatestIndexSnapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the stored catalog: %w", err)
	}
	if len(raw) == 0 {
		c.cur.Store(Bundled())
		return c, nil
	}
	c.served = sha256.Sum256(raw)
	snap, err := Parse(bytes.NewReader(raw), c.limits)
	if err != nil {
		c.log.Warn("the stored catalog is not valid; serving the bundled one until the next refresh or import", "source", source, "err", err)
		c.cur.Store(Bundled())
		return c, nil
	}
	c.cur.Store(NewIndex(snap, source))
	return c, nil
}

// Reload serves the document the store holds now when it is not the one
// served: one another process (the command line) or another replica
// stored. It reports whether the catalog changed. A stored document that
// does not validate is logged and the catalog served stays.
func (c *Catalog) Reload(ctx context.Context) (bool, error) {
	raw, source, err := c.store.LatestIndexSnapshot(ctx)
	if err != nil {
		return false, fmt.Errorf("reading the stored catalog: %w", err)
	}
	if len(raw) == 0 {
		return false, nil
	}
	sum := sha256.Sum256(raw)
	c.update.Lock()
	defer c.update.Unlock()
	if sum == c.served {
		return false, nil
	}
	snap, err := Parse(bytes.NewReader(raw), c.limits)
	if err != nil {
		c.served = sum // logged once, not at every announcement
		c.log.Warn("the stored catalog is not valid; the catalog served stays", "source", source, "err", err)
		return false, nil
	}
	ix := NewIndex(snap, source)
	c.served = sum
	c.cur.Store(ix)
	c.log.Info("catalog updated from the store", "source", source, "items", ix.Len())
	return true, nil
}

// Current returns the snapshot served now.
func (c *Catalog) Current() *Index { return c.cur.Load() }

// Refresh downloads a catalog document from rawURL and, if it is valid,
// stores and serves it. The URL must be https, or http to a loopback
// address (a local mirror, a test); redirects are followed at most five
// times and under the same rule. The body is bounded by the byte and item
// limits and the whole download by the timeout. No credential is sent.
func (c *Catalog) Refresh(ctx context.Context, rawURL string) (*Index, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("catalog refresh: %q is not a URL", truncateText(rawURL, 200))
	}
	shown := redact(u)
	if err := checkFetchURL(u); err != nil {
		return nil, fmt.Errorf("catalog refresh from %s: %w", shown, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ix, err := c.download(ctx, u)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("not complete within %v: %w", c.timeout, err)
		}
		return nil, fmt.Errorf("catalog refresh from %s: %w; the previous catalog is kept", shown, err)
	}
	return ix, nil
}

func (c *Catalog) download(ctx context.Context, u *url.URL) (*Index, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is already in the message, without its query
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	if resp.ContentLength > c.limits.bytes() {
		return nil, fmt.Errorf("%w: the server announces %d bytes, over the limit of %d", ErrTooLarge, resp.ContentLength, c.limits.bytes())
	}
	return c.apply(ctx, resp.Body, redact(u))
}

// Import reads a catalog document from the regular file name and, if it is
// valid, stores and serves it. The source recorded is "import:" and the
// file's base name.
func (c *Catalog) Import(ctx context.Context, name string) (*Index, error) {
	f, err := regfile.Open(name)
	if err != nil {
		return nil, fmt.Errorf("catalog import: %w", err)
	}
	defer f.Close()
	ix, err := c.apply(ctx, f, "import:"+filepath.Base(name))
	if err != nil {
		return nil, fmt.Errorf("catalog import from %s: %w; the previous catalog is kept", filepath.Base(name), err)
	}
	return ix, nil
}

// Apply validates raw as a catalog document (the content of an upload, say)
// and, if it is valid, stores and serves it under source.
func (c *Catalog) Apply(ctx context.Context, raw []byte, source string) (*Index, error) {
	ix, err := c.apply(ctx, bytes.NewReader(raw), source)
	if err != nil {
		return nil, fmt.Errorf("catalog update: %w; the previous catalog is kept", err)
	}
	return ix, nil
}

// apply reads a document from r, keeping the bytes it parsed, and replaces
// the catalog with it once it is valid and stored.
func (c *Catalog) apply(ctx context.Context, r io.Reader, source string) (*Index, error) {
	var raw bytes.Buffer
	snap, err := Parse(io.TeeReader(r, &raw), c.limits)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	ix := NewIndex(snap, source)
	c.update.Lock()
	defer c.update.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.store.PutIndexSnapshot(ctx, raw.Bytes(), source); err != nil {
		return nil, fmt.Errorf("storing the catalog: %w", err)
	}
	c.served = sha256.Sum256(raw.Bytes())
	c.cur.Store(ix)
	c.log.Info("catalog updated", "source", source, "items", ix.Len())
	return ix, nil
}

// checkFetchURL allows https anywhere and http to loopback addresses only.
func checkFetchURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return errors.New("plain http is allowed only to a loopback address; use https")
		}
	default:
		return errors.New("the URL must be https")
	}
	if u.Host == "" {
		return errors.New("the URL has no host")
	}
	if u.User != nil {
		return errors.New("the URL carries credentials; a catalog is fetched without them")
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	if err := checkFetchURL(req.URL); err != nil {
		return fmt.Errorf("redirected to %s: %w", redact(req.URL), err)
	}
	return nil
}

// redact shows a URL without its query, fragment and user information,
// which may hold secrets.
func redact(u *url.URL) string {
	v := *u
	v.User, v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = nil, "", false, "", ""
	return v.String()
}
