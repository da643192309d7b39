package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// maxRedirects is how many redirects a fetch follows.
const maxRedirects = 5

// maxSidecarBytes bounds a "<url>.sha256" sidecar: a digest and a file
// name, as sha256sum writes them.
const maxSidecarBytes = 4 << 10

// Fetch returns the extraction of the zip archive at spec.URL, downloading
// it if needed, and its sha256 (lowercase hex).
//
// The archive is verified against spec.SHA256, or else against the
// "<url>.sha256" sidecar, or refused with ErrUnverified unless
// spec.AllowUnverified. A pinned archive already downloaded is used without
// touching the network, so a restart works offline. An unpinned one is
// fetched again on every call (only the sidecar, when it names a digest
// already downloaded). If that refresh fails and the URL was fetched
// before, by this process or an earlier one, Fetch returns the earlier copy
// with err nil and a warning saying so (also logged).
//
// Every request is https, to the first URL and on every redirect (at most
// five, no loops); downloads are capped by Limits.MaxDownloadBytes before
// and while streaming, written to a temporary file and renamed into
// Dir/downloads only once verified; a verified archive that is then refused
// (an [*ArchiveError]) is removed again. SKILLS_FETCH_TOKEN is sent as a
// bearer token to the first host (host and port) and to redirects that stay
// on it; GH_TOKEN or GITHUB_TOKEN likewise, but only when the first host is
// github.com or a *.github.com host. Query strings and fragments never reach
// a log or an error.
//
// Like Extract, every successful call takes one use of the digest, to be
// ended by [Cache.Prune].
func (c *Cache) Fetch(ctx context.Context, spec URLSpec) (dir, digest, warning string, err error) {
	if err := c.init(); err != nil {
		return "", "", "", err
	}
	display := Redact(spec.URL)
	u, err := url.Parse(spec.URL)
	if err != nil {
		return "", "", "", fmt.Errorf("library URL %s: not a URL", display)
	}
	if err := checkURL(u); err != nil {
		return "", "", "", fmt.Errorf("library URL %s: %w", display, err)
	}
	u.Fragment, u.RawFragment = "", ""
	if spec.SHA256 != "" {
		if spec.SHA256 = strings.ToLower(spec.SHA256); !isDigest(spec.SHA256) {
			return "", "", "", fmt.Errorf("library URL %s: the pinned sha256 is not 64 hex digits", display)
		}
		// A pinned archive already downloaded never touches the network.
		dir, err := c.useDownload(ctx, spec.SHA256, display)
		if err == nil {
			return dir, spec.SHA256, "", nil
		}
		if !errors.Is(err, errNoDownload) {
			return "", "", "", err
		}
	}
	for attempt := 0; ; attempt++ {
		digest, err = c.download(ctx, u, spec, display)
		if err == nil {
			dir, err = c.useDownload(ctx, digest, display)
			if errors.Is(err, errNoDownload) && attempt == 0 {
				continue // the sidecar named a cached download found damaged: fetch it
			}
			if errors.As(err, new(*ArchiveError)) {
				// Verified, but refused: do not keep it around.
				os.Remove(filepath.Join(c.Dir, downloadsDir, digest+".zip"))
			}
		}
		break
	}
	if err == nil {
		if spec.SHA256 == "" {
			c.remember(u, digest)
		}
		return dir, digest, "", nil
	}
	// A failed refresh of an unpinned URL keeps serving the copy from
	// before. A pinned URL has no "before": its pin names one archive.
	if spec.SHA256 != "" || ctx.Err() != nil {
		return "", "", "", err
	}
	prev := c.previous(u)
	if prev == "" {
		return "", "", "", err
	}
	dir, perr := c.useDownload(ctx, prev, display)
	if perr != nil {
		return "", "", "", err
	}
	warning = fmt.Sprintf("refreshing library %s failed (%v); still serving the copy fetched earlier (sha256 %s)", display, err, prev)
	c.log().Warn("refreshing library URL failed; still serving the earlier copy", "url", display, "sha256", prev, "err", err)
	return dir, prev, warning, nil
}

// errNoDownload means the digest has no usable download in the cache.
var errNoDownload = errors.New("not downloaded")

// useDownload extracts the cached download of digest, after re-hashing it:
// a download that no longer matches its name is removed.
func (c *Cache) useDownload(ctx context.Context, digest, display string) (string, error) {
	p := filepath.Join(c.Dir, downloadsDir, digest+".zip")
	f, err := regfile.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errNoDownload
	}
	if err != nil {
		return "", fmt.Errorf("opening cached download: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("opening cached download: %w", err)
	}
	got, err := c.digestOf(ctx, p, f, info)
	if err != nil {
		return "", err
	}
	if got != digest {
		c.log().Warn("cached download does not match its digest; removing it", "sha256", digest)
		os.Remove(p)
		return "", errNoDownload
	}
	return c.use(ctx, f, info.Size(), digest, display, nil)
}

// download fetches the archive at u, verifies it, stores it as
// Dir/downloads/<sha256>.zip and returns its digest.
func (c *Cache) download(ctx context.Context, u *url.URL, spec URLSpec, display string) (string, error) {
	lim := c.limits()
	want, how := spec.SHA256, "the pinned sha256"
	if want == "" {
		side, found, err := c.sidecar(ctx, u, display)
		if err != nil {
			return "", err
		}
		switch {
		case found:
			want, how = side, "the sidecar "+display+".sha256"
			if _, err := os.Stat(filepath.Join(c.Dir, downloadsDir, want+".zip")); err == nil {
				return want, nil // already downloaded
			}
		case spec.AllowUnverified:
			c.log().Warn("library URL has no pin and no sidecar; accepting it unverified, as configured", "url", display)
		default:
			return "", fmt.Errorf("fetching %s: %w: no #sha256= pin and no %s.sha256 sidecar; pin the digest, publish a sidecar, or allow unverified archives", display, ErrUnverified, display)
		}
	}

	tmp, err := os.CreateTemp(filepath.Join(c.Dir, downloadsDir), tmpPrefix+"*.zip")
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", display, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if canLock { // tells a sweep in another process that this download is alive
		if ok, err := tryLockExclusive(tmp); !ok || err != nil {
			return "", fmt.Errorf("fetching %s: locking the download: %v", display, cmpErr(err, "already locked"))
		}
	}

	resp, cancel, err := c.get(ctx, u)
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", display, err)
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("fetching %s: the server answered %s", display, resp.Status)
	}
	if resp.ContentLength > lim.MaxDownloadBytes {
		return "", fmt.Errorf("fetching %s: %w: Content-Length %d bytes, the download limit is %d", display, ErrTooLarge, resp.ContentLength, lim.MaxDownloadBytes)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, lim.MaxDownloadBytes+1))
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", display, redactErr(err))
	}
	if n > lim.MaxDownloadBytes {
		return "", fmt.Errorf("fetching %s: %w: more than the download limit of %d bytes", display, ErrTooLarge, lim.MaxDownloadBytes)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want != "" && got != want {
		return "", fmt.Errorf("fetching %s: %w: the archive's sha256 is %s, %s says %s", display, ErrDigestMismatch, got, how, want)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("fetching %s: %w", display, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(c.Dir, downloadsDir, got+".zip")); err != nil {
		return "", fmt.Errorf("fetching %s: %w", display, err)
	}
	done = true
	return got, nil
}

// sidecar fetches "<url>.sha256" and returns the digest it starts with.
// found is false when the server says it does not exist (404 or 410);
// any other failure is an error, never a reason to skip verification.
func (c *Cache) sidecar(ctx context.Context, u *url.URL, display string) (digest string, found bool, err error) {
	su := *u
	su.Path += ".sha256"
	if su.RawPath != "" {
		su.RawPath += ".sha256"
	}
	resp, cancel, err := c.get(ctx, &su)
	if err != nil {
		return "", false, fmt.Errorf("fetching the sidecar %s.sha256: %w", display, err)
	}
	defer cancel()
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusGone:
		return "", false, nil
	default:
		return "", false, fmt.Errorf("fetching the sidecar %s.sha256: the server answered %s", display, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSidecarBytes+1))
	if err != nil {
		return "", false, fmt.Errorf("fetching the sidecar %s.sha256: %w", display, redactErr(err))
	}
	if len(body) > maxSidecarBytes {
		return "", false, fmt.Errorf("the sidecar %s.sha256 is larger than %d bytes", display, maxSidecarBytes)
	}
	fields := strings.Fields(string(body))
	if len(fields) == 0 || !isDigest(strings.ToLower(fields[0])) {
		return "", false, fmt.Errorf("the sidecar %s.sha256 does not start with a sha256 (64 hex digits)", display)
	}
	return strings.ToLower(fields[0]), true, nil
}

// get sends one GET under the per-request timeout. The caller must close
// the body and call cancel.
func (c *Cache) get(ctx context.Context, u *url.URL) (*http.Response, context.CancelFunc, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, nil, redactErr(err)
	}
	req.Header.Set("User-Agent", "skills-mcp")
	// The digest is of the bytes as served: no transparent decompression.
	req.Header.Set("Accept-Encoding", "identity")
	if isGitHubAsset(u) {
		req.Header.Set("Accept", "application/octet-stream")
	}
	if a := authorization([]*url.URL{u}, c.Env); a != "" {
		req.Header.Set("Authorization", a)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		cancel()
		return nil, nil, redactErr(err)
	}
	return resp, cancel, nil
}

// client is HTTPClient with this package's redirect policy, and without a
// cookie jar or a client-wide timeout (each request has its own).
func (c *Cache) client() *http.Client {
	var cl http.Client
	if c.HTTPClient != nil {
		cl.Transport = c.HTTPClient.Transport
	}
	cl.CheckRedirect = c.checkRedirect
	return &cl
}

// checkRedirect follows a redirect only to https, at most maxRedirects
// times, never in a loop, and sets the Authorization header afresh for
// each hop (net/http keeps it across ports of one host name).
func (c *Cache) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects", ErrRedirect, maxRedirects)
	}
	if req.URL.Scheme != "https" {
		return fmt.Errorf("%w: redirect to %s", ErrInsecureURL, Redact(req.URL.String()))
	}
	if req.URL.User != nil {
		return fmt.Errorf("%w: redirect to a URL with credentials", ErrInsecureURL)
	}
	chain := make([]*url.URL, 0, len(via)+1)
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			return fmt.Errorf("%w: redirect loop back to %s", ErrRedirect, Redact(req.URL.String()))
		}
		chain = append(chain, v.URL)
	}
	chain = append(chain, req.URL)
	req.Header.Del("Authorization")
	if a := authorization(chain, c.Env); a != "" {
		req.Header.Set("Authorization", a)
	}
	return nil
}

// urlRef is what the cache remembers about an unpinned URL: the digest it
// served last, to keep serving when a refresh fails.
type urlRef struct {
	SHA256 string `json:"sha256"`
}

// refName names the record of an unpinned URL by a hash of the whole URL,
// so that no query string is written to disk.
func (c *Cache) refName(u *url.URL) string {
	sum := sha256.Sum256([]byte(u.String()))
	return filepath.Join(c.Dir, downloadsDir, "url-"+hex.EncodeToString(sum[:16])+".json")
}

func (c *Cache) remember(u *url.URL, digest string) {
	c.mu.Lock()
	c.refs[u.String()] = digest
	c.mu.Unlock()
	data, _ := json.Marshal(urlRef{SHA256: digest})
	name := c.refName(u)
	tmp, err := os.CreateTemp(filepath.Dir(name), tmpPrefix+"*.json")
	if err != nil {
		return // only the offline fallback after a restart is lost
	}
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
	}
}

func (c *Cache) previous(u *url.URL) string {
	c.mu.Lock()
	d := c.refs[u.String()]
	c.mu.Unlock()
	if d != "" {
		return d
	}
	data, err := regfile.ReadFile(c.refName(u), 1024)
	if err != nil {
		return ""
	}
	var ref urlRef
	if json.Unmarshal(data, &ref) != nil || !isDigest(ref.SHA256) {
		return ""
	}
	return ref.SHA256
}
