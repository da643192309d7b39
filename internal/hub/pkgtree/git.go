package pkgtree

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/skills-mcp/skills-mcp/internal/library"
)

// GitSource names a package in a git repository.
type GitSource struct {
	// URL is the repository: a local path, a file:// URL, or an https URL.
	URL string
	// Path is the package directory inside the repository; "" for the root.
	Path string
	// Ref is a branch, a tag, a full ref name ("refs/…") or a full commit
	// id; "" means the default branch (the repository's HEAD).
	Ref string
	// Commit, if set, is the full commit id to read. With Ref also set,
	// Ref must resolve to it.
	Commit string
	// Limits bound the package; zero fields mean the defaults.
	Limits Limits
	// GitHub, if not nil, reads https://github.com/OWNER/REPO repositories
	// through GitHub's API and archive endpoint instead of git's protocol
	// (see [GitHubOptions]). Other URLs are read with git.
	GitHub *GitHubOptions
	// Progress, if not nil, is called from the calling goroutine as the
	// read goes on.
	Progress func(Progress)
}

// FromGit resolves src's ref to a commit and reads the package at that
// commit into memory, returning it with its origin (the commit recorded).
//
// Local repositories (a path or a file:// URL) are opened in place and read
// object by object; nothing is copied and no git program runs. Remote ones
// (https) are fetched into memory by go-git, one commit deep. Either way,
// blobs are read as stored: no hooks, filters or LFS. A package directory
// that escapes the repository, a ref or commit that does not exist, a link,
// a submodule, or a file over the limits is refused with an error wrapping
// [ErrPath], [ErrNotFound], [ErrLink], [ErrSpecial] or [ErrTooLarge]. A
// package below the root also gets the repository's top-level LICENSE*,
// NOTICE* and COPYING* files under [OriginDir].
func FromGit(ctx context.Context, src GitSource) (*Tree, Origin, error) {
	lim := src.Limits.withDefaults()
	dir, err := cleanDir(src.Path)
	if err != nil {
		return nil, Origin{}, err
	}
	if src.Commit != "" && !isCommitID(src.Commit) {
		return nil, Origin{}, fmt.Errorf("%w: commit %q is not a full 40-digit commit id", ErrNotFound, src.Commit)
	}
	origin := Origin{Kind: OriginGit, Repository: src.URL, Path: dir, Ref: src.Ref}
	if src.GitHub != nil {
		if owner, repo, ok := githubRepo(src.URL); ok {
			t, commit, err := src.GitHub.read(ctx, owner, repo, dir, src, lim)
			if err != nil {
				return nil, Origin{}, fmt.Errorf("reading %s: %w", displayURL(src.URL), err)
			}
			origin.Commit = commit
			return t, origin, nil
		}
	}
	report(src.Progress, Progress{Stage: StageResolving})
	repo, hash, err := openAt(ctx, src)
	if err != nil {
		return nil, Origin{}, fmt.Errorf("reading %s: %w", displayURL(src.URL), err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, Origin{}, fmt.Errorf("reading %s: %w: commit %s: %v", displayURL(src.URL), ErrNotFound, hash, err)
	}
	files, err := readCommit(ctx, repo, commit, dir, lim, src.Progress)
	if err != nil {
		return nil, Origin{}, fmt.Errorf("reading %s at %s: %w", displayURL(src.URL), hash, err)
	}
	t, err := build(files, lim)
	if err != nil {
		return nil, Origin{}, fmt.Errorf("reading %s at %s: %w", displayURL(src.URL), hash, err)
	}
	origin.Commit = hash.String()
	return t, origin, nil
}

// displayURL is a repository URL fit for an error message: without user
// info, query or fragment, where secrets live. Of an scp-like address
// (user:token@host:path) it keeps only what follows the last '@'.
func displayURL(s string) string {
	if strings.Contains(s, "://") {
		return library.Redact(s)
	}
	if isSCP(s) {
		if i := strings.LastIndexByte(s, '@'); i >= 0 {
			return "…@" + s[i+1:]
		}
	}
	return s
}

// isSCP reports whether s is git's scp-like ssh syntax ([user@]host:path):
// a colon before any slash, after more than one character (so that a
// Windows drive letter is not one).
func isSCP(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 1 && !strings.ContainsAny(s[:i], `/\`) && !strings.Contains(s, "://")
}

func report(fn func(Progress), p Progress) {
	if fn != nil {
		fn(p)
	}
}

func isCommitID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IsLocal reports whether a repository address names a repository on
// this machine's disk (a path or a file:// URL) rather than a remote one;
// an address that is neither (an ssh address, a file URL of another host)
// is an error matching ErrSource.
func IsLocal(raw string) (bool, error) {
	_, local, err := localPath(raw)
	return local, err
}

// localPath returns the directory of a local repository URL, or ok false
// for a remote one.
func localPath(raw string) (string, bool, error) {
	if strings.HasPrefix(raw, "file://") {
		u, err := url.Parse(raw)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return "", false, fmt.Errorf("%w: %q is not a local file URL", ErrSource, displayURL(raw))
		}
		return u.Path, true, nil
	}
	if strings.Contains(raw, "://") {
		return "", false, nil
	}
	if isSCP(raw) {
		return "", false, fmt.Errorf("%w: %q is an ssh address; use an https URL or a local path", ErrSource, displayURL(raw))
	}
	return raw, true, nil
}

// openAt opens the repository and resolves the source's ref to a commit
// that the returned repository holds.
func openAt(ctx context.Context, src GitSource) (*git.Repository, plumbing.Hash, error) {
	dir, local, err := localPath(src.URL)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	if local {
		repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
		if err != nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("%w: opening the repository: %v", ErrNotFound, err)
		}
		h, err := resolveLocal(repo, src.Ref, src.Commit)
		return repo, h, err
	}
	if err := checkRemote(src.URL); err != nil {
		return nil, plumbing.ZeroHash, err
	}
	return fetchRemote(ctx, src)
}

// refCandidates lists the ref names a short name may mean, in git's order
// of precedence (tags before branches).
func refCandidates(ref string) []plumbing.ReferenceName {
	if strings.HasPrefix(ref, "refs/") {
		return []plumbing.ReferenceName{plumbing.ReferenceName(ref)}
	}
	return []plumbing.ReferenceName{
		plumbing.ReferenceName("refs/" + ref),
		plumbing.NewTagReferenceName(ref),
		plumbing.NewBranchReferenceName(ref),
		plumbing.NewRemoteReferenceName("origin", ref),
	}
}

// resolveLocal resolves ref (and checks it against commit) in an opened
// repository.
func resolveLocal(repo *git.Repository, ref, commit string) (plumbing.Hash, error) {
	var h plumbing.Hash
	switch {
	case ref == "" && commit != "":
		h = plumbing.NewHash(commit)
	case ref == "":
		head, err := repo.Head()
		if err != nil {
			return h, fmt.Errorf("%w: the repository has no default branch (HEAD): %v", ErrNotFound, err)
		}
		h = head.Hash()
	case isCommitID(ref):
		h = plumbing.NewHash(ref)
	default:
		found := false
		for _, name := range refCandidates(ref) {
			r, err := repo.Reference(name, true)
			if err == nil {
				h, found = r.Hash(), true
				break
			}
		}
		if !found {
			return h, fmt.Errorf("%w: no branch or tag %q in the repository", ErrNotFound, ref)
		}
	}
	h, err := peel(repo, h)
	if err != nil {
		return h, err
	}
	if commit != "" && h.String() != commit {
		return h, fmt.Errorf("%w: ref %q is at commit %s, not the commit %s asked for", ErrNotFound, ref, h, commit)
	}
	return h, nil
}

// peel follows annotated tags to the commit they name.
func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range 8 {
		tag, err := repo.TagObject(h)
		if err != nil {
			break // not a tag object
		}
		h = tag.Target
	}
	if _, err := repo.CommitObject(h); err != nil {
		return h, fmt.Errorf("%w: commit %s is not in the repository", ErrNotFound, h)
	}
	return h, nil
}

// fetchedRef is where a remote fetch stores the commit it fetched.
const fetchedRef = "refs/hub/fetched"

// fetchRemote lists the remote's refs, resolves src's ref against them and
// fetches that one commit, one deep, into memory.
func fetchRemote(ctx context.Context, src GitSource) (*git.Repository, plumbing.Hash, error) {
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{src.URL}})
	if err != nil {
		return nil, plumbing.ZeroHash, err
	}
	want := src.Commit
	var name plumbing.ReferenceName
	if src.Ref != "" && isCommitID(src.Ref) {
		want = src.Ref
	} else if want == "" || src.Ref != "" {
		refs, err := remote.ListContext(ctx, &git.ListOptions{PeelingOption: git.AppendPeeled})
		if err != nil {
			return nil, plumbing.ZeroHash, fmt.Errorf("listing the repository's refs: %w", err)
		}
		byName := make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
		for _, r := range refs {
			byName[r.Name()] = r
		}
		cands := refCandidates(src.Ref)
		if src.Ref == "" {
			head := byName[plumbing.HEAD]
			if head == nil {
				return nil, plumbing.ZeroHash, fmt.Errorf("%w: the repository has no default branch (HEAD)", ErrNotFound)
			}
			if head.Type() == plumbing.SymbolicReference {
				cands = []plumbing.ReferenceName{head.Target()}
			} else {
				want = head.Hash().String()
			}
		}
		for _, c := range cands {
			if r := byName[c]; r != nil && want == "" {
				name = c
				if p := byName[plumbing.ReferenceName(string(c)+"^{}")]; p != nil {
					want = p.Hash().String() // an annotated tag's commit
				} else {
					want = r.Hash().String()
				}
			}
		}
		if want == "" || (src.Commit != "" && want != src.Commit) {
			if src.Commit != "" && want != "" {
				return nil, plumbing.ZeroHash, fmt.Errorf("%w: ref %q is at commit %s, not the commit %s asked for", ErrNotFound, src.Ref, want, src.Commit)
			}
			return nil, plumbing.ZeroHash, fmt.Errorf("%w: no branch or tag %q in the repository", ErrNotFound, src.Ref)
		}
	}
	report(src.Progress, Progress{Stage: StageFetching})
	spec := config.RefSpec(want + ":" + fetchedRef)
	if name != "" {
		spec = config.RefSpec("+" + string(name) + ":" + fetchedRef)
	}
	err = repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Depth: 1, Tags: git.NoTags})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, plumbing.ZeroHash, fmt.Errorf("fetching %s: %w", want, err)
	}
	r, err := repo.Reference(fetchedRef, true)
	if err != nil {
		return nil, plumbing.ZeroHash, fmt.Errorf("%w: the fetch brought no commit %s", ErrNotFound, want)
	}
	h, err := peel(repo, r.Hash())
	return repo, h, err
}

// gitFile is a blob chosen for the package, before it is read.
type gitFile struct {
	path string
	mode uint32
	hash plumbing.Hash
	size int64
}

// readCommit reads the package at dir in commit: it walks the package's
// trees, checking every entry and adding up the blobs' sizes against the
// limits, and only then reads the blobs.
func readCommit(ctx context.Context, repo *git.Repository, commit *object.Commit, dir string, lim Limits, progress func(Progress)) ([]File, error) {
	root, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("%w: reading the commit's tree: %v", ErrNotFound, err)
	}
	pkg := root
	if dir != "" {
		walked := ""
		for seg := range strings.SplitSeq(dir, "/") {
			walked = path.Join(walked, seg)
			e := findEntry(pkg, seg)
			switch {
			case e == nil:
				return nil, fmt.Errorf("%w: no folder %q in the repository", ErrNotFound, walked)
			case e.Mode == filemode.Symlink:
				return nil, fmt.Errorf("%w: %q is a symbolic link; give the folder it points to", ErrLink, walked)
			case e.Mode != filemode.Dir:
				return nil, fmt.Errorf("%w: %q is not a folder", ErrPath, walked)
			}
			if pkg, err = repo.TreeObject(e.Hash); err != nil {
				return nil, fmt.Errorf("%w: reading folder %q: %v", ErrNotFound, walked, err)
			}
		}
	}
	w := &gitWalk{repo: repo, lim: lim}
	if err := w.walk(pkg, "", 0); err != nil {
		return nil, err
	}
	if dir != "" {
		for _, f := range w.files {
			if strings.HasPrefix(f.path, OriginDir+"/") {
				return nil, fmt.Errorf("%w: the package has its own %q, a folder the hub reserves for the repository's licence files", ErrPath, f.path)
			}
		}
		for i := range root.Entries {
			e := &root.Entries[i]
			if isLicenseName(e.Name) && (e.Mode == filemode.Regular || e.Mode == filemode.Executable || e.Mode == filemode.Deprecated) {
				if err := w.add(OriginDir+"/"+e.Name, e); err != nil {
					return nil, err
				}
			}
		}
	}
	files := make([]File, 0, len(w.files))
	pr := Progress{Stage: StageReading, TotalFiles: len(w.files), TotalBytes: w.total}
	for _, gf := range w.files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		blob, err := repo.BlobObject(gf.hash)
		if err != nil {
			return nil, fmt.Errorf("%w: reading %q: %v", ErrNotFound, gf.path, err)
		}
		r, err := blob.Reader()
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", gf.path, err)
		}
		data, err := io.ReadAll(io.LimitReader(r, gf.size+1))
		err = errors.Join(err, r.Close())
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", gf.path, err)
		}
		if int64(len(data)) != gf.size {
			return nil, fmt.Errorf("%w: %q holds %d bytes, its object says %d", ErrArchive, gf.path, len(data), gf.size)
		}
		files = append(files, File{Path: gf.path, Mode: gf.mode, Size: gf.size, Digest: sha256.Sum256(data), Data: data})
		pr.Files++
		pr.Bytes += gf.size
		report(progress, pr)
	}
	return files, nil
}

func findEntry(t *object.Tree, name string) *object.TreeEntry {
	for i := range t.Entries {
		if t.Entries[i].Name == name {
			return &t.Entries[i]
		}
	}
	return nil
}

// gitWalk collects a package's blobs, bounded by the limits as it goes.
type gitWalk struct {
	repo  *git.Repository
	lim   Limits
	files []gitFile
	total int64
}

func (w *gitWalk) walk(t *object.Tree, prefix string, depth int) error {
	if depth >= maxDepth {
		return fmt.Errorf("%w: %q: more than %d path segments", ErrPath, prefix, maxDepth)
	}
	for i := range t.Entries {
		e := &t.Entries[i]
		name := e.Name
		if prefix != "" {
			name = prefix + "/" + e.Name
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := w.repo.TreeObject(e.Hash)
			if err != nil {
				return fmt.Errorf("%w: reading folder %q: %v", ErrNotFound, name, err)
			}
			if err := w.walk(sub, name, depth+1); err != nil {
				return err
			}
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			if err := w.add(name, e); err != nil {
				return err
			}
		case filemode.Symlink:
			return fmt.Errorf("%w: %q is a symbolic link; a package holds files only", ErrLink, name)
		case filemode.Submodule:
			return fmt.Errorf("%w: %q is a git submodule, which the hub does not fetch; vendor its files instead", ErrSpecial, name)
		default:
			return fmt.Errorf("%w: %q has git mode %s", ErrSpecial, name, e.Mode)
		}
	}
	return nil
}

func (w *gitWalk) add(name string, e *object.TreeEntry) error {
	if len(w.files) >= w.lim.MaxFiles {
		return fmt.Errorf("%w: more than %d files in the package", ErrTooLarge, w.lim.MaxFiles)
	}
	size, err := w.repo.Storer.EncodedObjectSize(e.Hash)
	if err != nil {
		return fmt.Errorf("%w: reading %q: %v", ErrNotFound, name, err)
	}
	if size > w.lim.MaxFileBytes {
		return fmt.Errorf("%w: %q is %d bytes, the per-file limit is %d", ErrTooLarge, name, size, w.lim.MaxFileBytes)
	}
	w.total += size
	if w.total > w.lim.MaxPackageBytes {
		return fmt.Errorf("%w: the package's files add up to more than the limit of %d bytes", ErrTooLarge, w.lim.MaxPackageBytes)
	}
	mode := uint32(0o644)
	if e.Mode == filemode.Executable {
		mode = 0o755
	}
	w.files = append(w.files, gitFile{path: name, mode: mode, hash: e.Hash, size: size})
	return nil
}
