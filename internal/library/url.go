package library

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// URLSpec is a URL library: an https URL of a zip archive and how to verify
// it.
type URLSpec struct {
	// URL is the https URL of the archive, without a fragment. A query
	// string is allowed (signed URLs) and never logged.
	URL string
	// SHA256 pins the archive's digest (lowercase hex). If empty, the
	// digest is read from the sidecar "<URL path>.sha256".
	SHA256 string
	// AllowUnverified accepts an archive with neither a pin nor a sidecar.
	// A sidecar that exists is still enforced.
	AllowUnverified bool
}

// ParseURLSpec parses the command-line form of a URL library:
// "https://host/x.zip", optionally pinned as "https://host/x.zip#sha256=HEX".
// The URL must be https and carry no credentials; the only fragment
// accepted is the pin. Errors never repeat the query string.
func ParseURLSpec(s string) (URLSpec, error) {
	u, err := url.Parse(s)
	if err != nil {
		return URLSpec{}, fmt.Errorf("library URL %s: not a URL", Redact(s))
	}
	var spec URLSpec
	if u.Fragment != "" {
		pin, ok := strings.CutPrefix(u.Fragment, "sha256=")
		pin = strings.ToLower(pin)
		if !ok || !isDigest(pin) {
			return URLSpec{}, fmt.Errorf("library URL %s: the fragment must be #sha256= and 64 hex digits", Redact(s))
		}
		spec.SHA256 = pin
		u.Fragment, u.RawFragment = "", ""
	}
	if err := checkURL(u); err != nil {
		return URLSpec{}, fmt.Errorf("library URL %s: %w", Redact(s), err)
	}
	spec.URL = u.String()
	return spec, nil
}

// checkURL refuses a URL that is not https, has no host, or carries
// credentials (they would end up in config files and process listings;
// use SKILLS_FETCH_TOKEN).
func checkURL(u *url.URL) error {
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("%w: only https URLs are fetched", ErrInsecureURL)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%w: no host", ErrInsecureURL)
	case u.User != nil:
		return fmt.Errorf("%w: credentials in the URL are not accepted; set SKILLS_FETCH_TOKEN instead", ErrInsecureURL)
	}
	return nil
}

// Redact returns rawURL without user info, query and fragment, for logs and
// error messages: signed URLs and tokens live there.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "<unparsable URL>"
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	if u.Opaque != "" {
		r.Opaque = "…"
	}
	return r.String()
}

// urlInText finds URLs inside error text (net/http quotes Location headers
// it cannot follow).
var urlInText = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://[^\s"'<>]+`)

// redactText redacts every URL in s.
func redactText(s string) string {
	return urlInText.ReplaceAllStringFunc(s, Redact)
}

// redactedError carries an error whose text may contain URLs with secrets.
// Error redacts them; Unwrap keeps errors.Is working.
type redactedError struct{ err error }

func (e *redactedError) Error() string { return redactText(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// redactErr unwraps net/http's *url.Error, which prints the full URL, and
// redacts whatever else the message holds.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = fmt.Errorf("%s %s: %w", ue.Op, Redact(ue.URL), ue.Err)
	}
	return &redactedError{err}
}

// hostKey is the identity of a URL's host for credential scoping: the
// lowercase host name and the port, so that two servers on one address
// are different hosts.
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// isGitHubHost reports whether u is github.com, api.github.com or another
// *.github.com host, on the https port. Release assets redirect elsewhere
// (objects.githubusercontent.com), which is deliberately not included.
func isGitHubHost(u *url.URL) bool {
	h := strings.ToLower(u.Hostname())
	return u.Scheme == "https" && (u.Port() == "" || u.Port() == "443") &&
		(h == "github.com" || strings.HasSuffix(h, ".github.com"))
}

// gitHubAsset matches GitHub's release asset API, which serves the asset
// itself only when asked for application/octet-stream.
var gitHubAsset = regexp.MustCompile(`^/repos/[^/]+/[^/]+/releases/assets/[0-9]+$`)

func isGitHubAsset(u *url.URL) bool {
	return strings.EqualFold(u.Hostname(), "api.github.com") && gitHubAsset.MatchString(u.Path)
}

// authorization returns the Authorization header for the last URL of
// chain, where chain[0] is the URL first requested and the rest are the
// redirects followed so far; "" means none. A token is sent only while
// every hop stays on the first URL's host (host and port): once a redirect
// leaves it, no later hop gets one, even back on the first host.
// SKILLS_FETCH_TOKEN is sent to any first host; GH_TOKEN or GITHUB_TOKEN
// only when the first host is a GitHub host.
func authorization(chain []*url.URL, env func(string) (string, bool)) string {
	if env == nil || len(chain) == 0 {
		return ""
	}
	first := hostKey(chain[0])
	for _, u := range chain[1:] {
		if hostKey(u) != first {
			return ""
		}
	}
	lookup := func(k string) string {
		v, _ := env(k)
		return strings.TrimSpace(v)
	}
	if tok := lookup("SKILLS_FETCH_TOKEN"); tok != "" {
		return "Bearer " + tok
	}
	if isGitHubHost(chain[0]) {
		for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
			if tok := lookup(k); tok != "" {
				return "Bearer " + tok
			}
		}
	}
	return ""
}
