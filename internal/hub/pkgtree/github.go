package pkgtree

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// GitHubOptions reads GitHub repositories through GitHub's HTTP endpoints
// instead of git's protocol: the ref is resolved to a commit with the
// commits API, and the tree is read from the tar.gz archive of that commit.
// One request each, no git objects, and the archive is streamed, so a
// large repository costs its download, not its history.
type GitHubOptions struct {
	// Token, if set, is sent as a bearer token, and only to GitHub's hosts
	// (github.com, api.github.com, codeload.github.com) and to the hosts of
	// APIBase and ArchiveBase, over https only, on the first request and on
	// every redirect alike. It never appears in an error.
	Token string
	// APIBase is the API's base URL. If empty, "https://api.github.com".
	APIBase string
	// ArchiveBase is the archive endpoint's base URL, under which
	// OWNER/REPO/tar.gz/COMMIT is the archive. If empty,
	// "https://codeload.github.com".
	ArchiveBase string
	// Client makes the requests; its Transport is wrapped, not changed. If
	// nil, a client with a 60-second timeout per request.
	Client *http.Client
	// MaxDownloadBytes bounds the compressed archive. If zero, 256 MiB.
	MaxDownloadBytes int64
}

// Defaults of GitHubOptions.
const (
	defaultGitHubAPI     = "https://api.github.com"
	defaultGitHubArchive = "https://codeload.github.com"
	defaultMaxDownload   = 256 << 20
	// maxUnpackedBytes bounds the decompressed archive, the whole
	// repository: the package is bounded by Limits, but the stream must be
	// read through to find it.
	maxUnpackedBytes = 2 << 30
)

// githubRepo parses https://github.com/OWNER/REPO[.git][/].
func githubRepo(raw string) (owner, repo string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil || (u.Host != "github.com" && u.Host != "www.github.com") {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], strings.TrimSuffix(parts[1], ".git"), true
}

// githubHosts are the hosts that may receive the token whatever the
// options say.
var githubHosts = []string{"github.com", "api.github.com", "codeload.github.com"}

// client returns the HTTP client, its transport wrapped to add the token
// where it may go.
func (o *GitHubOptions) client() *http.Client {
	c := &http.Client{Timeout: 60 * time.Second}
	if o.Client != nil {
		cp := *o.Client
		c = &cp
	}
	if o.Token == "" {
		return c
	}
	hosts := map[string]bool{}
	for _, h := range githubHosts {
		hosts[h] = true
	}
	for _, base := range []string{o.APIBase, o.ArchiveBase} {
		if u, err := url.Parse(base); err == nil && u.Host != "" {
			hosts[u.Host] = true
		}
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &tokenTransport{base: base, token: o.Token, hosts: hosts}
	return c
}

// tokenTransport adds the token to requests for its hosts over https. It
// decides per request, so a redirect elsewhere carries no token: the
// client copies headers of the caller's request, which never has one.
type tokenTransport struct {
	base  http.RoundTripper
	token string
	hosts map[string]bool
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" || !t.hosts[req.URL.Host] {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return strings.TrimSuffix(s, "/")
}

// read resolves the commit and reads the package from the archive.
func (o *GitHubOptions) read(ctx context.Context, owner, repo, dir string, src GitSource, lim Limits) (*Tree, string, error) {
	c := o.client()
	commit := src.Commit
	if isCommitID(src.Ref) && commit == "" {
		commit = src.Ref
	}
	if commit == "" || (src.Ref != "" && !isCommitID(src.Ref)) {
		report(src.Progress, Progress{Stage: StageResolving})
		ref := src.Ref
		if ref == "" {
			ref = "HEAD"
		}
		got, err := o.resolve(ctx, c, owner, repo, ref)
		if err != nil {
			return nil, "", err
		}
		if commit != "" && got != commit {
			return nil, "", fmt.Errorf("%w: ref %q is at commit %s, not the commit %s asked for", ErrNotFound, src.Ref, got, commit)
		}
		commit = got
	}
	u := orDefault(o.ArchiveBase, defaultGitHubArchive) + "/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/tar.gz/" + commit
	resp, err := get(ctx, c, u, "")
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%w: the archive of commit %s: HTTP %s", ErrNotFound, commit, resp.Status)
	}
	maxDown := o.MaxDownloadBytes
	if maxDown <= 0 {
		maxDown = defaultMaxDownload
	}
	body := &countingReader{r: resp.Body, max: maxDown, progress: src.Progress}
	files, err := readTarGz(body, dir, lim, src.Progress)
	if err != nil {
		return nil, "", fmt.Errorf("the archive of commit %s: %w", commit, err)
	}
	t, err := build(files, lim)
	if err != nil {
		return nil, "", fmt.Errorf("at %s: %w", commit, err)
	}
	return t, commit, nil
}

// resolve asks the commits API which commit ref names.
func (o *GitHubOptions) resolve(ctx context.Context, c *http.Client, owner, repo, ref string) (string, error) {
	segs := strings.Split(ref, "/")
	for i := range segs {
		segs[i] = url.PathEscape(segs[i])
	}
	u := orDefault(o.APIBase, defaultGitHubAPI) + "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/commits/" + strings.Join(segs, "/")
	resp, err := get(ctx, c, u, "application/vnd.github.sha")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", ref, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity:
		return "", fmt.Errorf("%w: no branch, tag or commit %q in github.com/%s/%s (or no access to it)", ErrNotFound, ref, owner, repo)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("resolving %q: the GitHub API answered HTTP %s", ref, resp.Status)
	}
	sha := strings.TrimSpace(string(body))
	if !isCommitID(sha) {
		return "", fmt.Errorf("resolving %q: the GitHub API answered something other than a commit id", ref)
	}
	return sha, nil
}

func get(ctx context.Context, c *http.Client, u, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", "skills-mcp-hub")
	resp, err := c.Do(req)
	if err != nil {
		// The error names the URL, which never holds the token.
		return nil, err
	}
	return resp, nil
}

// countingReader bounds and reports a download.
type countingReader struct {
	r        io.Reader
	n, max   int64
	progress func(Progress)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		// The bytes are dropped with the error: a buffered reader would
		// otherwise use them and may never ask again.
		return 0, fmt.Errorf("%w: the download is over its limit of %d bytes", ErrTooLarge, c.max)
	}
	if n > 0 {
		report(c.progress, Progress{Stage: StageFetching, Bytes: c.n})
	}
	return n, err
}

// readTarGz reads the package at dir from a GitHub archive: one top folder
// (REPO-COMMIT/) holding the repository. Entries outside the package are
// skipped, except the top-level licence files a nested package keeps;
// inside it, only folders and regular files are accepted.
func readTarGz(r io.Reader, dir string, lim Limits, progress func(Progress)) ([]File, error) {
	zr, err := gzip.NewReader(r)
	if errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not a gzip stream: %v", ErrArchive, err)
	}
	defer zr.Close()
	tr := tar.NewReader(&limitedReader{r: zr, left: maxUnpackedBytes})
	var (
		top     string
		files   []File
		origin  []File
		total   int64
		found   = dir == ""
		prefix  = dir + "/"
		buf     = make([]byte, 64<<10)
		pr      = Progress{Stage: StageReading}
		reading = func(name string, h *tar.Header) (File, error) {
			if h.Size > lim.MaxFileBytes {
				return File{}, fmt.Errorf("%w: %q is %d bytes, the per-file limit is %d", ErrTooLarge, name, h.Size, lim.MaxFileBytes)
			}
			total += h.Size
			if total > lim.MaxPackageBytes {
				return File{}, fmt.Errorf("%w: the package's files add up to more than the limit of %d bytes", ErrTooLarge, lim.MaxPackageBytes)
			}
			if len(files)+len(origin) >= lim.MaxFiles {
				return File{}, fmt.Errorf("%w: more than %d files in the package", ErrTooLarge, lim.MaxFiles)
			}
			data := make([]byte, 0, h.Size)
			w := &sliceAppender{b: data}
			if _, err := io.CopyBuffer(w, io.LimitReader(tr, h.Size), buf); err != nil {
				return File{}, fmt.Errorf("%w: reading %q: %w", ErrArchive, name, err)
			}
			if int64(len(w.b)) != h.Size {
				return File{}, fmt.Errorf("%w: %q is truncated", ErrArchive, name)
			}
			mode := uint32(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			pr.Files++
			pr.Bytes += h.Size
			report(progress, pr)
			return File{Path: name, Mode: mode, Size: h.Size, Digest: sha256.Sum256(w.b), Data: w.b}, nil
		}
	)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var tooBig *tooLargeError
			if errors.As(err, &tooBig) {
				return nil, fmt.Errorf("%w: the repository unpacks to more than %d bytes", ErrTooLarge, int64(maxUnpackedBytes))
			}
			if errors.Is(err, ErrTooLarge) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrArchive, err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // GitHub's records the commit id
		}
		first, rel, _ := strings.Cut(strings.TrimSuffix(h.Name, "/"), "/")
		if top == "" {
			top = first
		}
		if first != top {
			return nil, fmt.Errorf("%w: entry %q is outside the archive's top folder %q", ErrArchive, h.Name, top)
		}
		if rel == "" {
			continue
		}
		inPkg := dir == "" || rel == dir || strings.HasPrefix(rel, prefix)
		if !inPkg {
			if dir != "" && !strings.Contains(rel, "/") && isLicenseName(rel) && (h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeRegA) {
				f, err := reading(OriginDir+"/"+rel, h)
				if err != nil {
					return nil, err
				}
				origin = append(origin, f)
			}
			continue
		}
		name := rel
		if dir != "" {
			name = strings.TrimPrefix(strings.TrimPrefix(rel, dir), "/")
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if name == "" {
				found = true
			}
		case tar.TypeReg, tar.TypeRegA:
			if name == "" {
				return nil, fmt.Errorf("%w: %q is not a folder", ErrPath, dir)
			}
			f, err := reading(name, h)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		case tar.TypeSymlink, tar.TypeLink:
			if name == "" {
				return nil, fmt.Errorf("%w: %q is a link; give the folder it points to", ErrLink, dir)
			}
			return nil, fmt.Errorf("%w: %q is a link; a package holds files only", ErrLink, name)
		default:
			return nil, fmt.Errorf("%w: %q is a special file (tar type %q)", ErrSpecial, name, h.Typeflag)
		}
	}
	if !found && len(files) == 0 {
		return nil, fmt.Errorf("%w: no folder %q in the repository", ErrNotFound, dir)
	}
	if len(origin) > 0 {
		for _, f := range files {
			if strings.HasPrefix(f.Path, OriginDir+"/") {
				return nil, fmt.Errorf("%w: the package has its own %q, a folder the hub reserves for the repository's licence files", ErrPath, f.Path)
			}
		}
		files = append(files, origin...)
	}
	return files, nil
}

type sliceAppender struct{ b []byte }

func (w *sliceAppender) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// limitedReader fails, rather than ending, once left bytes were read.
type limitedReader struct {
	r    io.Reader
	left int64
}

type tooLargeError struct{}

func (*tooLargeError) Error() string { return "over the unpacked limit" }

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, &tooLargeError{}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
