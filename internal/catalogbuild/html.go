package catalogbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// Bounds of discovery.
const (
	// maxPageBytes bounds one directory page, saved or fetched.
	maxPageBytes = 16 << 20
	// maxFollowDepth: the saved page, its category pages, their detail
	// pages.
	maxFollowDepth = 2
	// DefaultMaxPages is the default of DiscoverOptions.MaxPages.
	DefaultMaxPages = 500
)

// ErrTruncated is wrapped by a discovery that would have had to stop
// early: more pages than MaxPages, or more repositories than one catalog
// holds.
var ErrTruncated = errors.New("discovery truncated")

// DiscoverOptions configure [Discover].
type DiscoverOptions struct {
	// Base is the URL the saved page was at, against which its relative
	// links resolve; if empty, the page's <base href>, canonical link or
	// og:url.
	Base string
	// MaxPages bounds the pages fetched after the saved one; more fails
	// discovery with ErrTruncated. 0 means DefaultMaxPages.
	MaxPages int
	// Client fetches pages (https, or http to loopback only). If nil, a
	// client with a 30-second timeout.
	Client *http.Client
}

// Discover reads the saved directory page file and follows its links,
// as a person would, to the repositories it lists: a link to a GitHub
// repository (or a page of one) is a repository; a link below the
// directory page's own path, on its site, is a category or detail page,
// fetched and read in turn, two levels deep. It fails with ErrTruncated
// rather than returning part of the list, and when no repository was found
// at all (a page that loads its list by script, or a verification page).
func Discover(ctx context.Context, file string, opts DiscoverOptions) ([]Repository, []PageReport, error) {
	f, err := regfile.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("directory page: %w", err)
	}
	defer f.Close()
	links, pageBase, err := ExtractLinks(io.LimitReader(f, maxPageBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("directory page %s: %w", file, err)
	}
	baseRaw := opts.Base
	if baseRaw == "" {
		baseRaw = pageBase
	}
	var base *url.URL
	if baseRaw != "" {
		if base, err = url.Parse(baseRaw); err != nil || !base.IsAbs() {
			return nil, nil, fmt.Errorf("the directory page's base URL %q is not an absolute URL", baseRaw)
		}
	}
	d := &discovery{ctx: ctx, opts: opts, base: base, seenRepo: map[string]bool{}, seenPage: map[string]bool{}}
	if d.opts.MaxPages <= 0 {
		d.opts.MaxPages = DefaultMaxPages
	}
	if d.opts.Client == nil {
		d.opts.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if base != nil {
		d.prefix = base.Path
		if !strings.HasSuffix(d.prefix, "/") {
			d.prefix += "/"
		}
		d.seenPage[pageKey(base)] = true
	}
	label := file
	if base != nil {
		label = base.String()
	}
	queue, err := d.page(label, links, base, 0)
	if err != nil {
		return nil, d.pages, err
	}
	for depth := 1; len(queue) > 0; depth++ {
		var nextQueue []*url.URL
		for _, u := range queue {
			if err := ctx.Err(); err != nil {
				return nil, d.pages, err
			}
			links, err := d.fetch(u)
			if err != nil {
				d.pages = append(d.pages, PageReport{URL: u.String(), Error: err.Error()})
				return nil, d.pages, fmt.Errorf("directory page %s: %w; the list would be incomplete", u, err)
			}
			more, err := d.page(u.String(), links, u, depth)
			if err != nil {
				return nil, d.pages, err
			}
			nextQueue = append(nextQueue, more...)
		}
		queue = nextQueue
	}
	if len(d.repos) == 0 {
		return nil, d.pages, fmt.Errorf("%w: no repository link found on the directory page or the pages it links to: a page that loads its list by script, or a browser verification page? Save the page once it shows the list, or give --repositories", ErrNoRepositories)
	}
	return d.repos, d.pages, nil
}

// ErrNoRepositories is wrapped by a discovery that found no repository.
var ErrNoRepositories = errors.New("no repositories found")

type discovery struct {
	ctx      context.Context
	opts     DiscoverOptions
	base     *url.URL
	prefix   string // the directory page's path, with a trailing slash
	repos    []Repository
	seenRepo map[string]bool
	seenPage map[string]bool
	fetched  int
	pages    []PageReport
}

// page takes one page's links: repositories are kept, pages to follow
// are returned (and counted against MaxPages).
func (d *discovery) page(label string, links []string, at *url.URL, depth int) ([]*url.URL, error) {
	pr := PageReport{URL: label}
	var follow []*url.URL
	for _, raw := range links {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			continue
		}
		if at != nil {
			u = at.ResolveReference(u)
		}
		if !u.IsAbs() {
			continue // relative, with no base to resolve it against
		}
		if owner, name, ok := githubRepo(u.String()); ok {
			key := strings.ToLower(owner + "/" + name)
			pr.Repositories++
			if !d.seenRepo[key] {
				d.seenRepo[key] = true
				if len(d.repos) >= maxRepositories {
					d.pages = append(d.pages, pr)
					return nil, fmt.Errorf("%w: more than %d repositories linked", ErrTruncated, maxRepositories)
				}
				d.repos = append(d.repos, Repository{URL: "https://github.com/" + owner + "/" + name})
			}
			continue
		}
		if depth >= maxFollowDepth || d.base == nil || !d.below(u) {
			continue
		}
		key := pageKey(u)
		if d.seenPage[key] {
			continue
		}
		d.seenPage[key] = true
		if !fetchable(u) {
			// An http link on the directory's own https site: skipped
			// and reported, rather than fetched in the clear or failing
			// the discovery.
			pr.NotFetched = append(pr.NotFetched, redact(u.String()))
			continue
		}
		pr.Pages++
		d.fetched++
		if d.fetched > d.opts.MaxPages {
			d.pages = append(d.pages, pr)
			return nil, fmt.Errorf("%w: the directory links to more than %d pages (--max-pages %d); raise --max-pages to read them all: a truncated catalog is never written", ErrTruncated, d.opts.MaxPages, d.opts.MaxPages)
		}
		follow = append(follow, u)
	}
	d.pages = append(d.pages, pr)
	return follow, nil
}

// below reports whether u is a page of the directory: its site, below
// its path.
func (d *discovery) below(u *url.URL) bool {
	return (u.Scheme == "https" || u.Scheme == "http") && strings.EqualFold(u.Host, d.base.Host) &&
		strings.HasPrefix(u.Path, d.prefix) && u.Path != d.prefix
}

// pageKey identifies a page: without its fragment, and without a trailing
// slash.
func pageKey(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	c.Path = strings.TrimSuffix(c.Path, "/")
	c.RawPath = ""
	return c.String()
}

// fetch reads one page's links: https, or http to a loopback address.
func (d *discovery) fetch(u *url.URL) ([]string, error) {
	if !fetchable(u) {
		return nil, fmt.Errorf("only https pages (or http on a loopback address) are fetched")
	}
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "skills-mcp-catalog")
	req.Header.Set("Accept", "text/html")
	c := *d.opts.Client
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if !fetchable(r.URL) {
			return fmt.Errorf("a redirect to %s, which is not https", redact(r.URL.String()))
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	links, _, err := ExtractLinks(io.LimitReader(resp.Body, maxPageBytes+1))
	return links, err
}

func fetchable(u *url.URL) bool {
	switch u.Scheme {
	case "https":
		return u.Host != ""
	case "http":
		ip := net.ParseIP(u.Hostname())
		return u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
	}
	return false
}

// ExtractLinks returns the href of every <a> and <area> element of the
// HTML document r, in document order, and the page's own URL if it names
// one (<base href>, else <link rel="canonical">, else og:url), read with
// the HTML5 tokenizer. A document over 16 MiB is refused.
func ExtractLinks(r io.Reader) (links []string, base string, err error) {
	cr := &countReader{r: r}
	z := html.NewTokenizer(cr)
	z.SetMaxBuf(1 << 20)
	var canonical, ogURL string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if cr.n > maxPageBytes {
				return nil, "", fmt.Errorf("the page is over %d bytes", maxPageBytes)
			}
			if errors.Is(z.Err(), io.EOF) {
				return links, firstOf(base, canonical, ogURL), nil
			}
			if errors.Is(z.Err(), html.ErrBufferExceeded) {
				return nil, "", errors.New("the page has a tag over 1 MiB")
			}
			return nil, "", z.Err()
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if !hasAttr {
				continue
			}
			tag := string(name)
			if tag != "a" && tag != "area" && tag != "base" && tag != "link" && tag != "meta" {
				continue
			}
			attrs := map[string]string{}
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				if _, dup := attrs[string(k)]; !dup {
					attrs[string(k)] = string(v)
				}
			}
			switch tag {
			case "a", "area":
				if h, ok := attrs["href"]; ok {
					links = append(links, h)
				}
			case "base":
				if base == "" {
					base = attrs["href"]
				}
			case "link":
				if canonical == "" && strings.EqualFold(attrs["rel"], "canonical") {
					canonical = attrs["href"]
				}
			case "meta":
				if ogURL == "" && attrs["property"] == "og:url" {
					ogURL = attrs["content"]
				}
			}
		}
	}
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
