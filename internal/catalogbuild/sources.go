package catalogbuild

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// Repository is one repository to index.
type Repository struct {
	// URL is the public repository URL the catalog records (https, or a
	// file URL for a local repository given without one).
	URL string
	// Local, if set, is the local copy read instead of URL: a git
	// directory (bare or a working clone) or a .zip of the repository.
	Local string
	// Ref is the branch or tag to resolve; "" for the default branch.
	Ref string
	// Commit, if set, pins the commit: it is read without resolving.
	Commit string
	// Category is the category its items get ("" for none).
	Category string
}

// maxRepositories bounds one build's repositories, whatever found them.
const maxRepositories = 5000

// ParseRepository reads one repository argument:
//
//	URL[#REF][@COMMIT]          a remote repository
//	PATH                        a local git directory or .zip, recorded as a file URL
//	PATH=URL[#REF][@COMMIT]     a local copy of URL, recorded as URL
//
// A GitHub URL is normalised to https://github.com/OWNER/REPO.
func ParseRepository(s string) (Repository, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Repository{}, errors.New("empty repository")
	}
	var r Repository
	local, public, hasMap := strings.Cut(s, "=")
	if !hasMap && isURL(s) {
		local, public = "", s
	}
	if local != "" {
		r.Local = filepath.Clean(local)
	}
	if public == "" {
		abs, err := filepath.Abs(r.Local)
		if err != nil {
			return Repository{}, fmt.Errorf("repository %s: %w", local, err)
		}
		r.URL = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
		return r, nil
	}
	if i := strings.LastIndexByte(public, '@'); i > strings.Index(public, "://")+2 && i > 0 {
		r.Commit = public[i+1:]
		public = public[:i]
		if !isCommit(r.Commit) {
			return Repository{}, fmt.Errorf("repository %s: %q after @ is not a full 40-digit lowercase commit id", public, r.Commit)
		}
	}
	public, r.Ref, _ = strings.Cut(public, "#")
	u, err := url.Parse(public)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
		return Repository{}, fmt.Errorf("repository %q: the public URL must be an absolute https (or http, file) URL", public)
	}
	if u.User != nil || u.RawQuery != "" {
		return Repository{}, fmt.Errorf("repository %q: the URL must carry no credentials and no query; a catalog lists public URLs only", redact(public))
	}
	if owner, name, ok := githubRepo(public); ok {
		public = "https://github.com/" + owner + "/" + name
	} else {
		public = strings.TrimSuffix(public, "/")
	}
	r.URL = public
	return r, nil
}

func isURL(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && !strings.ContainsAny(s[:i], `/\`)
}

func isCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// githubRepo parses a github.com repository URL, also a link to one of its
// pages (…/tree/main/skills/x), into its owner and name.
func githubRepo(raw string) (owner, name string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return "", "", false
	}
	if h := strings.ToLower(u.Hostname()); h != "github.com" && h != "www.github.com" {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	owner, name = parts[0], strings.TrimSuffix(parts[1], ".git")
	if !githubName(owner) || !githubName(name) || reservedGitHub[strings.ToLower(owner)] {
		return "", "", false
	}
	return owner, name, true
}

// githubName: GitHub's owner and repository names are ASCII letters,
// digits, "-", "_" and ".".
func githubName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// reservedGitHub are first path segments of github.com that are pages of
// the site, not owners.
var reservedGitHub = map[string]bool{
	"about": true, "apps": true, "collections": true, "contact": true, "customer-stories": true,
	"enterprise": true, "explore": true, "features": true, "login": true, "marketplace": true,
	"orgs": true, "pricing": true, "search": true, "settings": true, "site": true,
	"sponsors": true, "topics": true, "trending": true, "join": true, "signup": true,
	"security": true, "notifications": true, "new": true, "organizations": true, "readme": true,
}

// ReadSources reads a sources file: one repository per line (the forms
// of [ParseRepository]), optionally followed by its category; "#" starts a
// comment.
func ReadSources(name string) ([]Repository, error) {
	f, err := regfile.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sources file: %w", err)
	}
	defer f.Close()
	return parseSources(f, name)
}

func parseSources(r io.Reader, name string) ([]Repository, error) {
	var out []Repository
	sc := bufio.NewScanner(io.LimitReader(r, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := withoutComment(sc.Text())
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) > 2 {
			return nil, fmt.Errorf("%s:%d: want \"REPOSITORY [CATEGORY]\", got %d fields", name, n, len(f))
		}
		repo, err := ParseRepository(f[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(f) == 2 {
			repo.Category = f[1]
		}
		out = append(out, repo)
		if len(out) > maxRepositories {
			return nil, fmt.Errorf("%s: more than %d repositories", name, maxRepositories)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// withoutComment cuts a line at its comment: a "#" at the start or after
// a space or tab ("#" inside a URL names its ref).
func withoutComment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return line[:i]
		}
	}
	return line
}

// mirrorOf returns the local copy of a GitHub repository named by the
// mirrors pattern: {owner} and {name} in it are replaced by the
// repository's; a pattern without them is a folder holding OWNER+NAME
// (a git directory or a working clone) or OWNER+NAME.zip.
func mirrorOf(pattern, rawURL string) (string, error) {
	owner, name, ok := githubRepo(rawURL)
	if !ok {
		return "", fmt.Errorf("--mirrors holds GitHub repositories only; %s is not one", redact(rawURL))
	}
	var cands []string
	if strings.Contains(pattern, "{owner}") || strings.Contains(pattern, "{name}") {
		cands = []string{strings.NewReplacer("{owner}", owner, "{name}", name).Replace(pattern)}
	} else {
		base := filepath.Join(pattern, owner+"+"+name)
		cands = []string{base, base + ".zip"}
	}
	for _, p := range cands {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no mirror of %s: none of %s exists", rawURL, strings.Join(cands, ", "))
}

// redact drops credentials, query and fragment from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
