package vault

import (
	"errors"
	"net/url"
	"strings"
)

// URI schemes of vault resources.
const (
	PlaybookScheme = "playbook"
	ChainScheme    = "value-chain"
)

// PlaybookURI returns the URI of a playbook note, or of the attachment file
// when file is not empty: playbook://<ns>/<name>[/<file>], each segment
// percent-encoded, with no namespace segment for an un-namespaced library.
func PlaybookURI(ns, name, file string) string {
	return join(PlaybookScheme, ns, name, file)
}

// ChainURI returns the URI of a value chain: value-chain://<ns>/<id>.
func ChainURI(ns, id string) string { return join(ChainScheme, ns, id, "") }

func join(scheme, ns, name, file string) string {
	var b strings.Builder
	b.WriteString(scheme + "://")
	if ns != "" {
		b.WriteString(url.PathEscape(ns) + "/")
	}
	b.WriteString(url.PathEscape(name))
	if file != "" {
		b.WriteString("/" + url.PathEscape(file))
	}
	return b.String()
}

// ErrBadURI is returned for URIs that are not vault resource URIs.
var ErrBadURI = errors.New("not a playbook:// or value-chain:// URI")

// ResourceURI is a parsed vault resource URI.
type ResourceURI struct {
	Scheme string
	// Segments are the decoded path segments: [ns] name [file].
	Segments []string
}

// ParseURI parses a playbook:// or value-chain:// URI. Segments are
// decoded; an empty segment, one with a slash once decoded, or "." and
// ".." are refused, so a segment can never climb out of its folder.
func ParseURI(s string) (ResourceURI, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != PlaybookScheme && scheme != ChainScheme) || rest == "" || len(s) > 4096 {
		return ResourceURI{}, ErrBadURI
	}
	if strings.ContainsAny(rest, "?#") {
		return ResourceURI{}, ErrBadURI
	}
	u := ResourceURI{Scheme: scheme}
	for seg := range strings.SplitSeq(rest, "/") {
		d, err := url.PathUnescape(seg)
		if err != nil || d == "" || d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00") {
			return ResourceURI{}, ErrBadURI
		}
		u.Segments = append(u.Segments, d)
	}
	if len(u.Segments) > 3 {
		return ResourceURI{}, ErrBadURI
	}
	return u, nil
}
