package catalogbuild

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Report says what a build read and left out, and why: every repository
// (its commit and item count, or the error that kept it out), every
// skipped SKILL.md folder with its reason, and the pages discovery read.
type Report struct {
	// Failed is why the build wrote nothing; "" when it succeeded.
	Failed string `json:"failed,omitempty"`
	// Items is the number of items in the catalog.
	Items int `json:"items"`
	// Pages are the directory pages read, the saved one first.
	Pages []PageReport `json:"pages,omitempty"`
	// Repositories are sorted by URL.
	Repositories []RepoReport `json:"repositories"`
	// Duplicates are repositories given more than once (read once).
	Duplicates []string `json:"duplicates,omitempty"`
}

// PageReport is one directory page read during discovery.
type PageReport struct {
	URL          string `json:"url"`
	Repositories int    `json:"repositories"`
	Pages        int    `json:"pages"`
	Error        string `json:"error,omitempty"`
	// NotFetched are links to pages of the directory that were skipped
	// because they are not https (http is fetched on loopback only).
	NotFetched []string `json:"not_fetched,omitempty"`
}

// RepoReport is one repository's outcome.
type RepoReport struct {
	Repository string `json:"repository"`
	// Local is true when a local copy was read in its place.
	Local bool   `json:"local,omitempty"`
	Ref   string `json:"ref,omitempty"`
	// Commit is the commit read; Resolved says how it was found
	// ("git", "GitHub API", "local git", "pinned", "zip archive").
	Commit   string    `json:"commit,omitempty"`
	Resolved string    `json:"resolved,omitempty"`
	Items    int       `json:"items"`
	Skipped  []Skipped `json:"skipped,omitempty"`
	// Error is why the repository could not be read; it is then not in
	// the catalog.
	Error string `json:"error,omitempty"`
	// Note remarks on a repository read without error (no skills).
	Note string `json:"note,omitempty"`
}

// Skipped is a folder with a SKILL.md that is not in the catalog.
type Skipped struct {
	// Path is the folder in the repository; "" for its root.
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (r *RepoReport) skip(dir, why string) {
	r.Skipped = append(r.Skipped, Skipped{Path: dir, Reason: why})
}

func (r *Report) addSkip(repo, dir, why string) {
	for i := range r.Repositories {
		if r.Repositories[i].Repository == repo {
			r.Repositories[i].skip(dir, why)
			r.Repositories[i].Items--
			return
		}
	}
}

func (r *RepoReport) line() string {
	if r.Error != "" {
		return r.Repository + ": FAILED: " + r.Error
	}
	s := fmt.Sprintf("%s at %s: %d items", r.Repository, short(r.Commit), r.Items)
	if len(r.Skipped) > 0 {
		s += fmt.Sprintf(", %d skipped", len(r.Skipped))
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for people: every page, repository and
// skipped folder, one line each.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, p := range r.Pages {
		if p.Error != "" {
			fmt.Fprintf(&b, "page %s: FAILED: %s\n", p.URL, p.Error)
		} else {
			fmt.Fprintf(&b, "page %s: %d repositories, %d pages linked\n", p.URL, p.Repositories, p.Pages)
		}
		for _, u := range p.NotFetched {
			fmt.Fprintf(&b, "  not fetched %s: not https\n", u)
		}
	}
	for i := range r.Repositories {
		rr := &r.Repositories[i]
		b.WriteString(rr.line() + "\n")
		for _, s := range rr.Skipped {
			where := s.Path
			if where == "" {
				where = "(root)"
			}
			fmt.Fprintf(&b, "  skipped %s: %s\n", where, s.Reason)
		}
	}
	for _, d := range r.Duplicates {
		fmt.Fprintf(&b, "%s: listed more than once, read once\n", d)
	}
	if r.Failed != "" {
		fmt.Fprintf(&b, "FAILED: %s; nothing written\n", r.Failed)
	} else {
		fmt.Fprintf(&b, "%d items from %d repositories\n", r.Items, r.ok())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) ok() int {
	n := 0
	for i := range r.Repositories {
		if r.Repositories[i].Error == "" {
			n++
		}
	}
	return n
}
