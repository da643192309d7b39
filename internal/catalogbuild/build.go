package catalogbuild

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/hub/index"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Ways of resolving a repository to a commit.
const (
	ResolveGit = "git" // git's protocol (or the local repository)
	ResolveAPI = "api" // GitHub's commits API and archive endpoint
)

// Options configure [Build].
type Options struct {
	// Repositories are what to index, in any order; one listed twice is
	// read once.
	Repositories []Repository
	// ResolveWith is ResolveGit (the default) or ResolveAPI; it applies
	// to remote repositories, local copies are always read in place.
	ResolveWith string
	// GitHub configures the API mode (the token, and endpoints for
	// tests). nil means GitHub's public endpoints without a token.
	GitHub *pkgtree.GitHubOptions
	// Parallel is how many repositories are read at once; 0 means 2.
	Parallel int
	// KeepGoing leaves a repository that cannot be read out of the
	// catalog (and its sources) instead of failing the build.
	KeepGoing bool
	// Limits bound each package, as the hub's install does; zero fields
	// mean the hub's defaults.
	Limits pkgtree.Limits
	// Progress, if not nil, gets one line per repository as it is done,
	// from any goroutine (calls are serialised).
	Progress func(line string)
}

// ErrFailed is wrapped by the error of a build whose catalog would be
// wrong or truncated; the report says which repositories and why.
var ErrFailed = errors.New("catalog build failed")

// Build reads every repository at one commit and returns the catalog
// document and its report. It returns an error wrapping ErrFailed when a
// repository cannot be read (unless KeepGoing), or when no item at all was
// found; the report is complete either way.
func Build(ctx context.Context, opts Options) (*index.Snapshot, *Report, error) {
	if opts.ResolveWith == "" {
		opts.ResolveWith = ResolveGit
	}
	if opts.ResolveWith != ResolveGit && opts.ResolveWith != ResolveAPI {
		return nil, nil, fmt.Errorf("resolve with %q: want git or api", opts.ResolveWith)
	}
	if opts.GitHub == nil {
		opts.GitHub = &pkgtree.GitHubOptions{}
	}
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 2
	}
	for _, r := range opts.Repositories {
		if err := checkRepositoryURL(r.URL); err != nil {
			return nil, nil, err
		}
	}
	rep := &Report{}
	var repos []Repository
	seen := map[string]bool{}
	for _, r := range opts.Repositories {
		if seen[r.URL] {
			rep.Duplicates = append(rep.Duplicates, r.URL)
			continue
		}
		seen[r.URL] = true
		repos = append(repos, r)
	}
	if len(repos) > maxRepositories {
		return nil, rep, fmt.Errorf("%w: %d repositories, more than %d in one catalog", ErrFailed, len(repos), maxRepositories)
	}
	results := make([]repoResult, len(repos))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for range min(parallel, len(repos)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				results[i] = readRepository(ctx, repos[i], opts)
				if opts.Progress != nil {
					mu.Lock()
					done++
					opts.Progress(fmt.Sprintf("[%d/%d] %s (%.1fs)", done, len(repos), results[i].report.line(), time.Since(start).Seconds()))
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range repos {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, rep, err
	}

	snap := &index.Snapshot{SchemaVersion: index.SchemaVersion, Items: []index.Item{}}
	var failed []string
	for i := range results {
		res := &results[i]
		rep.Repositories = append(rep.Repositories, res.report)
		if res.report.Error != "" {
			failed = append(failed, res.report.Repository)
			continue
		}
		snap.Sources = append(snap.Sources, index.Source{Repository: repos[i].URL, Commit: res.report.Commit})
		snap.Items = append(snap.Items, res.items...)
		if res.when.After(snap.GeneratedAt) {
			snap.GeneratedAt = res.when // the newest commit's time: a rebuild is byte-identical
		}
	}
	slices.SortFunc(rep.Repositories, func(a, b RepoReport) int { return cmp.Compare(a.Repository, b.Repository) })
	slices.SortFunc(snap.Sources, func(a, b index.Source) int { return cmp.Compare(a.Repository, b.Repository) })
	slices.SortFunc(snap.Items, func(a, b index.Item) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Repository, b.Repository))
	})
	// Two repositories may claim one id (a file URL and its mirror's
	// public URL are different repositories with one path); the first
	// by repository URL keeps it, whatever the order they were given in,
	// and the other is reported.
	items := snap.Items[:0]
	for i, it := range snap.Items {
		if i > 0 && snap.Items[i-1].ID == it.ID {
			rep.addSkip(it.Repository, it.Path, "its id "+it.ID+" is already an item of another repository")
			continue
		}
		items = append(items, it)
	}
	snap.Items = items
	rep.Items = len(snap.Items)
	switch {
	case len(failed) > 0 && !opts.KeepGoing:
		rep.Failed = fmt.Sprintf("%d of %d repositories could not be read: %s", len(failed), len(repos), strings.Join(failed, ", "))
		return nil, rep, fmt.Errorf("%w: %s; the catalog would miss them (give --keep-going to publish without them)", ErrFailed, rep.Failed)
	case len(snap.Items) == 0:
		rep.Failed = "no skill package in any repository"
		return nil, rep, fmt.Errorf("%w: %s; an empty catalog is not written", ErrFailed, rep.Failed)
	}
	return snap, rep, nil
}

type repoResult struct {
	report RepoReport
	items  []index.Item
	when   time.Time
}

// readRepository resolves, opens and reads one repository. Its errors go
// into its report.
func readRepository(ctx context.Context, r Repository, opts Options) (res repoResult) {
	res.report = RepoReport{Repository: r.URL, Ref: r.Ref, Local: r.Local != ""}
	repo, resolved, release, err := open(ctx, r, opts)
	if err != nil {
		res.report.Error = err.Error()
		return res
	}
	defer release()
	res.report.Commit = repo.Commit
	res.report.Resolved = resolved
	res.when = repo.Time
	res.items = packages(ctx, repo, r, &res.report)
	if err := ctx.Err(); err != nil {
		res.report.Error = err.Error()
		return res
	}
	res.report.Items = len(res.items)
	if len(res.items) == 0 && len(res.report.Skipped) == 0 {
		res.report.Note = "no SKILL.md in the repository: no skills"
	} else if len(res.items) == 0 {
		res.report.Note = "no valid skill package: every SKILL.md folder was skipped"
	}
	return res
}

// open resolves the repository to a commit (unless pinned) and opens it
// there. resolved says how the commit was found; release closes what was
// opened.
func open(ctx context.Context, r Repository, opts Options) (repo *pkgtree.Repo, resolved string, release func(), err error) {
	repo, resolved, closer, err := openRepo(ctx, r, opts)
	if err != nil {
		return nil, "", nil, err
	}
	return repo, resolved, func() {
		repo.Close()
		if closer != nil {
			closer.Close()
		}
	}, nil
}

func openRepo(ctx context.Context, r Repository, opts Options) (repo *pkgtree.Repo, resolved string, closer io.Closer, err error) {
	lim := opts.Limits
	switch {
	case r.Local != "" && strings.EqualFold(path.Ext(r.Local), ".zip"):
		f, err := regfile.Open(r.Local)
		if err != nil {
			return nil, "", nil, fmt.Errorf("opening the zip archive: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, "", nil, err
		}
		repo, err := pkgtree.OpenZip(f, fi.Size(), lim)
		if err != nil {
			f.Close()
			return nil, "", nil, fmt.Errorf("reading the zip archive: %w", err)
		}
		switch {
		case r.Commit != "" && repo.Commit != "" && r.Commit != repo.Commit:
			repo.Close()
			f.Close()
			return nil, "", nil, fmt.Errorf("the zip archive says commit %s, not the %s given", repo.Commit, r.Commit)
		case r.Commit != "":
			repo.Commit = r.Commit
		case repo.Commit == "":
			repo.Close()
			f.Close()
			return nil, "", nil, errors.New("the zip archive does not say its commit (GitHub's archives do, in their comment); give it as PATH=URL@COMMIT, so that the catalog pins what it lists")
		}
		return repo, "zip archive", f, nil
	case r.Local != "":
		commit, how := r.Commit, "pinned"
		if commit == "" {
			if commit, err = pkgtree.ResolveGit(ctx, r.Local, r.Ref); err != nil {
				return nil, "", nil, fmt.Errorf("resolving %s in the local copy: %w", refName(r.Ref), err)
			}
			how = "local git"
		}
		repo, err := pkgtree.OpenGit(ctx, pkgtree.GitSource{URL: r.Local, Commit: commit, Limits: lim})
		if err != nil {
			return nil, "", nil, vanished(commit, how, err)
		}
		return repo, how, nil, nil
	case opts.ResolveWith == ResolveAPI:
		if _, _, ok := githubRepo(r.URL); !ok {
			return nil, "", nil, fmt.Errorf("--resolve-with api reads GitHub repositories only; %s is not one (use --resolve-with git)", redact(r.URL))
		}
		commit, how := r.Commit, "pinned"
		if commit == "" {
			if commit, err = opts.GitHub.ResolveGitHub(ctx, r.URL, r.Ref); err != nil {
				return nil, "", nil, fmt.Errorf("resolving %s with the GitHub API: %w", refName(r.Ref), err)
			}
			how = "GitHub API"
		}
		repo, err := opts.GitHub.OpenGitHub(ctx, r.URL, commit, lim)
		if err != nil {
			return nil, "", nil, vanished(commit, how, err)
		}
		return repo, how, nil, nil
	default:
		commit, how := r.Commit, "pinned"
		if commit == "" {
			if commit, err = pkgtree.ResolveGit(ctx, r.URL, r.Ref); err != nil {
				return nil, "", nil, fmt.Errorf("resolving %s with git: %w", refName(r.Ref), err)
			}
			how = "git"
		}
		repo, err := pkgtree.OpenGit(ctx, pkgtree.GitSource{URL: r.URL, Commit: commit, Limits: lim})
		if err != nil {
			return nil, "", nil, vanished(commit, how, err)
		}
		return repo, how, nil, nil
	}
}

func refName(ref string) string {
	if ref == "" {
		return "the default branch"
	}
	return fmt.Sprintf("ref %q", ref)
}

// vanished words a read that failed after the resolve: the commit may
// have gone in between (a force-push, a deleted branch).
func vanished(commit, how string, err error) error {
	if how != "pinned" && errors.Is(err, pkgtree.ErrNotFound) {
		return fmt.Errorf("resolved (%s) to commit %s, which could then not be read: it may have vanished since (a force-push or a deleted branch); build again: %w", how, commit, err)
	}
	return fmt.Errorf("reading commit %s: %w", commit, err)
}

// packages finds the skill folders of repo by the server's discovery rule
// and reads each as the hub installs it.
func packages(ctx context.Context, repo *pkgtree.Repo, r Repository, rep *RepoReport) []index.Item {
	var items []index.Item
	for _, e := range repo.Entries() {
		if ctx.Err() != nil {
			return nil
		}
		if path.Base(e.Path) != pkgtree.SkillFile {
			continue
		}
		dir := path.Dir(e.Path)
		if dir == "." {
			dir = ""
		}
		if why := undiscoverable(dir); why != "" {
			rep.skip(dir, why)
			continue
		}
		if e.Kind == pkgtree.EntryDir {
			rep.skip(dir, "SKILL.md is a folder, not a file; a skill's SKILL.md must be a regular file")
			continue
		}
		if e.Kind != pkgtree.EntryFile {
			rep.skip(dir, "SKILL.md is a symbolic link or special file; the server does not serve such a folder as a skill")
			continue
		}
		tree, err := repo.Package(ctx, dir)
		if err != nil {
			rep.skip(dir, reason(err))
			continue
		}
		it, err := item(tree, r, repo.Commit, dir)
		if err != nil {
			rep.skip(dir, reason(err))
			continue
		}
		items = append(items, it)
	}
	return items
}

// undiscoverable says why the server would not find a skill in dir, or
// returns "": a folder of tool state (.git, node_modules, …) on the way, a
// name no skill URI can hold, or deeper than the server searches.
func undiscoverable(dir string) string {
	if dir == "" {
		return ""
	}
	depth := 0
	for seg := range strings.SplitSeq(dir, "/") {
		depth++
		if skill.IsToolFolder(seg) {
			return fmt.Sprintf("inside %q, a folder of tool state the server never enters", seg)
		}
		if err := skillsext.CheckName(seg); err != nil {
			return fmt.Sprintf("folder name %s: %v", strings.Trim(fmt.Sprintf("%q", seg), `"`), err)
		}
	}
	if depth > catalog.DefaultDepth {
		return fmt.Sprintf("%d folders deep, deeper than the %d levels the server searches", depth, catalog.DefaultDepth)
	}
	return ""
}

// reason is an error as a skip reason.
func reason(err error) string { return err.Error() }

// item makes the catalog item of a package tree read at commit.
func item(tree *pkgtree.Tree, r Repository, commit, dir string) (index.Item, error) {
	meta, err := tree.Meta()
	if err != nil {
		return index.Item{}, err
	}
	owner := ownerOf(r.URL)
	md, _ := meta.StringMap("metadata")
	it := index.Item{
		ID:          idOf(r.URL, dir),
		Name:        meta.Name,
		Description: strings.TrimSpace(meta.Description),
		Author:      cmp.Or(strings.TrimSpace(md["author"]), strings.TrimSpace(md["skill-author"]), owner),
		Category:    r.Category,
		Repository:  r.URL,
		Path:        dir,
		Commit:      commit,
		FileCount:   int64(len(tree.Files)),
		Size:        tree.Size(),
		TreeDigest:  tree.Digest(),
	}
	if l, ok := meta.Field("license"); ok {
		it.License = strings.TrimSpace(l)
	}
	if it.License == "" || len(it.License) > 256 {
		it.License = repoLicense(tree, dir)
	}
	if len(it.Author) > 256 {
		it.Author = owner
	}
	if req := meta.Requirements(); req.Declared {
		it.Requirements = req.Summary
	}
	if err := it.Validate(); err != nil {
		return index.Item{}, fmt.Errorf("not a valid catalog item: %w", err)
	}
	return it, nil
}

// checkRepositoryURL refuses a Repository URL the catalog cannot record
// (ParseRepository checks the same of what it reads; Options may come
// from elsewhere): it must parse, be an absolute https, http or file URL
// and carry no credentials.
func checkRepositoryURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("repository %s: the URL does not parse; give an absolute https URL", redact(raw))
	}
	if (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
		return fmt.Errorf("repository %q: the public URL must be an absolute https (or http, file) URL", redact(raw))
	}
	if u.User != nil {
		return fmt.Errorf("repository %q: the URL must carry no credentials; a catalog lists public URLs only", redact(raw))
	}
	return nil
}

// idOf is an item's id: the repository's host and path, and the package
// folder.
func idOf(repoURL, dir string) string {
	u, _ := url.Parse(repoURL)
	id := strings.TrimSuffix(u.Host+u.Path, ".git")
	if dir != "" {
		id += "/" + dir
	}
	return id
}

// ownerOf is the default author: a GitHub repository's owner, else the
// host.
func ownerOf(repoURL string) string {
	if owner, _, ok := githubRepo(repoURL); ok {
		return owner
	}
	u, _ := url.Parse(repoURL)
	if u.Host == "" {
		return ""
	}
	return u.Hostname()
}

// licenceFiles are the repository licence files whose opening words name
// the licence, in the order they are looked at.
var licenceFiles = []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING"}

// repoLicense names the licence of the repository's top-level licence file
// (kept in a nested package's tree under .origin) by its opening words,
// for the few licences skill repositories use; "" otherwise.
func repoLicense(tree *pkgtree.Tree, dir string) string {
	for _, name := range licenceFiles {
		p := name
		if dir != "" {
			p = pkgtree.OriginDir + "/" + name
		}
		f := tree.File(p)
		if f == nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(f.Data[:min(len(f.Data), 4096)]))
		var head strings.Builder
		for sc.Scan() {
			head.WriteString(strings.TrimSpace(sc.Text()) + " ")
		}
		h := head.String()
		switch {
		case strings.Contains(h, "MIT License"):
			return "MIT"
		case strings.Contains(h, "Apache License") && strings.Contains(h, "Version 2.0"):
			return "Apache-2.0"
		case strings.Contains(h, "Mozilla Public License Version 2.0"):
			return "MPL-2.0"
		case strings.HasPrefix(h, "Attribution-ShareAlike 4.0 International"):
			return "CC-BY-SA-4.0"
		}
		return ""
	}
	return ""
}
