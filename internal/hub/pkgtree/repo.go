package pkgtree

import (
	"archive/tar"
	"archive/zip"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/skills-mcp/skills-mcp/internal/library"
)

// EntryKind is what an entry of a repository listing is.
type EntryKind uint8

// Entry kinds.
const (
	EntryFile      EntryKind = iota // a regular file
	EntryDir                        // a folder
	EntryLink                       // a symbolic or hard link
	EntrySubmodule                  // a git submodule
	EntrySpecial                    // a device, fifo, socket or anything else
)

// RepoEntry is one entry of a [Repo]: its "/"-separated path from the
// repository root and its kind.
type RepoEntry struct {
	Path string
	Kind EntryKind
}

// Repo is a whole repository read at one commit, for a reader of many of
// its packages (the catalog builder): it is opened once, lists every entry,
// and reads each package with [Repo.Package] as [FromGit] would read it at
// that commit, the same files, checks and tree digest, the repository's
// licence files under [OriginDir] included. Nothing in it runs. A Repo is
// not safe for concurrent use; Close releases it.
type Repo struct {
	// Commit is the full commit id the repository was read at; "" when
	// the source does not say (a zip archive without GitHub's comment).
	Commit string
	// Time is the commit's committer time; zero when unknown.
	Time time.Time

	entries  []RepoEntry // sorted by Path in byte order
	licenses []int       // root-level licence files, indexes into entries
	src      repoSource
	lim      Limits
}

// repoSource reads the content behind a Repo's entries.
type repoSource interface {
	size(i int) (int64, error)
	mode(i int) uint32
	read(i int, size int64) ([]byte, error)
	close() error
}

// Entries returns the repository's entries, sorted by path in byte order.
// The slice must not be modified.
func (r *Repo) Entries() []RepoEntry { return r.entries }

// Close releases the repository (and removes a downloaded archive).
func (r *Repo) Close() error {
	if r.src == nil {
		return nil
	}
	err := r.src.close()
	r.src = nil
	return err
}

// newRepo sorts the listing, keeping the source's indexes aligned, and
// notes the root's licence files.
func newRepo(entries []RepoEntry, src repoSource, lim Limits) *Repo {
	r := &Repo{entries: entries, src: src, lim: lim}
	for i, e := range entries {
		if e.Kind == EntryFile && !strings.Contains(e.Path, "/") && isLicenseName(e.Path) {
			r.licenses = append(r.licenses, i)
		}
	}
	return r
}

// sortEntries sorts entries by path and returns, for each new position,
// the entry's old index.
func sortEntries(entries []RepoEntry) (sorted []RepoEntry, old []int) {
	old = make([]int, len(entries))
	for i := range old {
		old[i] = i
	}
	slices.SortFunc(old, func(a, b int) int { return cmp.Compare(entries[a].Path, entries[b].Path) })
	sorted = make([]RepoEntry, len(entries))
	for i, o := range old {
		sorted[i] = entries[o]
	}
	return sorted, old
}

// find returns the index of the entry at p, or -1.
func (r *Repo) find(p string) int {
	i, ok := slices.BinarySearchFunc(r.entries, p, func(e RepoEntry, p string) int { return strings.Compare(e.Path, p) })
	if !ok {
		return -1
	}
	return i
}

// below returns the range of entries whose paths start with prefix.
func (r *Repo) below(prefix string) (lo, hi int) {
	if prefix == "" {
		return 0, len(r.entries)
	}
	lo, _ = slices.BinarySearchFunc(r.entries, prefix, func(e RepoEntry, p string) int { return strings.Compare(e.Path, p) })
	hi = lo
	for hi < len(r.entries) && strings.HasPrefix(r.entries[hi].Path, prefix) {
		hi++
	}
	return lo, hi
}

// Package reads the package at dir ("" for the root), checked as every
// reader of this package checks a tree: the same errors as [FromGit] for a
// folder that is missing, a link, a submodule, a special file, a file over
// the limits, or no valid SKILL.md.
func (r *Repo) Package(ctx context.Context, dir string) (*Tree, error) {
	if r.src == nil {
		return nil, errors.New("the repository is closed")
	}
	d, err := cleanDir(dir)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if d != "" {
		prefix = d + "/"
		switch i := r.find(d); {
		case i >= 0 && r.entries[i].Kind == EntryLink:
			return nil, fmt.Errorf("%w: %q is a symbolic link; give the folder it points to", ErrLink, d)
		case i >= 0 && r.entries[i].Kind != EntryDir:
			return nil, fmt.Errorf("%w: %q is not a folder", ErrPath, d)
		}
	}
	lo, hi := r.below(prefix)
	if d != "" && lo == hi && r.find(d) < 0 {
		return nil, fmt.Errorf("%w: no folder %q in the repository", ErrNotFound, d)
	}
	type pick struct {
		i    int
		name string
		size int64
	}
	var (
		picks []pick
		total int64
	)
	add := func(i int, name string) error {
		if len(picks) >= r.lim.MaxFiles {
			return fmt.Errorf("%w: more than %d files in the package", ErrTooLarge, r.lim.MaxFiles)
		}
		size, err := r.src.size(i)
		if err != nil {
			return fmt.Errorf("%w: reading %q: %v", ErrNotFound, name, err)
		}
		if size > r.lim.MaxFileBytes {
			return fmt.Errorf("%w: %q is %d bytes, the per-file limit is %d", ErrTooLarge, name, size, r.lim.MaxFileBytes)
		}
		total += size
		if total > r.lim.MaxPackageBytes {
			return fmt.Errorf("%w: the package's files add up to more than the limit of %d bytes", ErrTooLarge, r.lim.MaxPackageBytes)
		}
		picks = append(picks, pick{i, name, size})
		return nil
	}
	for i := lo; i < hi; i++ {
		e := r.entries[i]
		name := e.Path[len(prefix):]
		switch e.Kind {
		case EntryDir:
		case EntryFile:
			if d != "" && (name == OriginDir || strings.HasPrefix(name, OriginDir+"/")) {
				return nil, fmt.Errorf("%w: the package has its own %q, a folder the hub reserves for the repository's licence files", ErrPath, name)
			}
			if err := add(i, name); err != nil {
				return nil, err
			}
		case EntryLink:
			return nil, fmt.Errorf("%w: %q is a symbolic link; a package holds files only", ErrLink, name)
		case EntrySubmodule:
			return nil, fmt.Errorf("%w: %q is a git submodule, which the hub does not fetch; vendor its files instead", ErrSpecial, name)
		default:
			return nil, fmt.Errorf("%w: %q is a special file", ErrSpecial, name)
		}
	}
	if d != "" {
		for _, i := range r.licenses {
			if err := add(i, OriginDir+"/"+r.entries[i].Path); err != nil {
				return nil, err
			}
		}
	}
	files := make([]File, 0, len(picks))
	for _, p := range picks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := r.src.read(p.i, p.size)
		if err != nil {
			return nil, fmt.Errorf("reading %q: %w", p.name, err)
		}
		if int64(len(data)) != p.size {
			return nil, fmt.Errorf("%w: %q holds %d bytes, its entry says %d", ErrArchive, p.name, len(data), p.size)
		}
		files = append(files, File{Path: p.name, Mode: r.src.mode(p.i), Size: p.size, Digest: sha256.Sum256(data), Data: data})
	}
	return build(files, r.lim)
}

// ResolveGit resolves ref ("" for the default branch) of the repository at
// rawURL (a local path, a file:// URL or an https URL) to a full commit id,
// without reading any tree: a local repository is opened in place, a
// remote one's refs are listed.
func ResolveGit(ctx context.Context, rawURL, ref string) (string, error) {
	dir, local, err := localPath(rawURL)
	if err != nil {
		return "", err
	}
	if local {
		repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
		if err != nil {
			return "", fmt.Errorf("%w: opening the repository: %v", ErrNotFound, err)
		}
		h, err := resolveLocal(repo, ref, "")
		if err != nil {
			return "", err
		}
		return h.String(), nil
	}
	if err := checkRemote(rawURL); err != nil {
		return "", err
	}
	return listRemote(ctx, rawURL, ref)
}

func checkRemote(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%w: %q: only https URLs and local paths are read", ErrSource, displayURL(rawURL))
	}
	if u.User != nil {
		return fmt.Errorf("%w: the URL carries credentials; remove them", ErrSource)
	}
	return nil
}

// OpenGit opens the repository src.URL at src.Commit (or src.Ref resolved)
// for reading its packages; src.Path, Progress and GitHub are ignored.
// A remote repository is fetched one commit deep into memory.
func OpenGit(ctx context.Context, src GitSource) (*Repo, error) {
	if src.Commit != "" && !isCommitID(src.Commit) {
		return nil, fmt.Errorf("%w: commit %q is not a full 40-digit commit id", ErrNotFound, src.Commit)
	}
	src.Progress = nil
	repo, hash, err := openAt(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", displayURL(src.URL), err)
	}
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w: commit %s: %v", displayURL(src.URL), ErrNotFound, hash, err)
	}
	root, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w: the tree of commit %s: %v", displayURL(src.URL), ErrNotFound, hash, err)
	}
	gs := &gitRepoSource{repo: repo}
	var entries []RepoEntry
	var walk func(t *object.Tree, prefix string, depth int) error
	walk = func(t *object.Tree, prefix string, depth int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range t.Entries {
			e := &t.Entries[i]
			name := e.Name
			if prefix != "" {
				name = prefix + "/" + e.Name
			}
			kind := EntrySpecial
			switch e.Mode {
			case filemode.Dir:
				kind = EntryDir
			case filemode.Regular, filemode.Executable, filemode.Deprecated:
				kind = EntryFile
			case filemode.Symlink:
				kind = EntryLink
			case filemode.Submodule:
				kind = EntrySubmodule
			}
			entries = append(entries, RepoEntry{Path: name, Kind: kind})
			gs.hashes = append(gs.hashes, e.Hash)
			gs.exec = append(gs.exec, e.Mode == filemode.Executable)
			if kind == EntryDir && depth+1 >= 2*maxDepth {
				entries[len(entries)-1].Kind = EntrySpecial // deeper than any package path may go
				continue
			}
			if kind == EntryDir {
				sub, err := repo.TreeObject(e.Hash)
				if err != nil {
					return fmt.Errorf("%w: reading folder %q: %v", ErrNotFound, name, err)
				}
				if err := walk(sub, name, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, "", 0); err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", displayURL(src.URL), hash, err)
	}
	sorted, old := sortEntries(entries)
	gs.hashes = permute(gs.hashes, old)
	gs.exec = permute(gs.exec, old)
	r := newRepo(sorted, gs, src.Limits.withDefaults())
	r.Commit = hash.String()
	r.Time = commit.Committer.When.UTC()
	return r, nil
}

func permute[T any](s []T, old []int) []T {
	out := make([]T, len(old))
	for i, o := range old {
		out[i] = s[o]
	}
	return out
}

type gitRepoSource struct {
	repo   *git.Repository
	hashes []plumbing.Hash
	exec   []bool
}

func (g *gitRepoSource) size(i int) (int64, error) {
	return g.repo.Storer.EncodedObjectSize(g.hashes[i])
}

func (g *gitRepoSource) mode(i int) uint32 {
	if g.exec[i] {
		return 0o755
	}
	return 0o644
}

func (g *gitRepoSource) read(i int, size int64) ([]byte, error) {
	blob, err := g.repo.BlobObject(g.hashes[i])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(rd, size+1))
	return data, errors.Join(err, rd.Close())
}

func (g *gitRepoSource) close() error { return nil }

// Limits of a repository read whole from an archive: entries, and bytes
// unpacked (the package limits apply to each package read from it).
const maxRepoEntries = 200_000

// OpenZip opens a ZIP archive of a repository (r, size bytes) for reading
// its packages. The whole archive passes the library's hardened checks
// first (see [FromZip]); a single top-level folder holding everything (as
// GitHub's and git's archives have) is taken as the repository root.
// Commit is GitHub's archive comment when it is a commit id, else "".
func OpenZip(r io.ReaderAt, size int64, lim Limits) (*Repo, error) {
	a, err := library.OpenArchive(r, size, library.Limits{
		MaxEntries: maxRepoEntries, MaxEntryBytes: maxUnpackedBytes, MaxTotalBytes: maxUnpackedBytes,
	})
	if err != nil {
		return nil, zipError(err)
	}
	files := a.Files()
	top := ""
	if len(files) > 0 {
		first, _, ok := strings.Cut(files[0].Name, "/")
		if ok {
			top = first + "/"
			for _, f := range files {
				if !strings.HasPrefix(f.Name, top) {
					top = ""
					break
				}
			}
		}
	}
	zs := &zipRepoSource{a: a, buf: make([]byte, 64<<10)}
	var entries []RepoEntry
	dirs := map[string]bool{}
	for i, f := range files {
		name := strings.TrimPrefix(f.Name, top)
		entries = append(entries, RepoEntry{Path: name, Kind: EntryFile})
		zs.index = append(zs.index, i)
		zs.files = append(zs.files, f)
		for j := strings.IndexByte(name, '/'); j >= 0; j = nextSlash(name, j) {
			if d := name[:j]; !dirs[d] {
				dirs[d] = true
				entries = append(entries, RepoEntry{Path: d, Kind: EntryDir})
				zs.index = append(zs.index, -1)
				zs.files = append(zs.files, library.ArchiveFile{})
			}
		}
	}
	sorted, old := sortEntries(entries)
	zs.index = permute(zs.index, old)
	zs.files = permute(zs.files, old)
	repo := newRepo(sorted, zs, lim.withDefaults())
	if zr, err := zip.NewReader(r, size); err == nil && isCommitID(zr.Comment) {
		repo.Commit = zr.Comment
	}
	return repo, nil
}

func nextSlash(s string, j int) int {
	k := strings.IndexByte(s[j+1:], '/')
	if k < 0 {
		return -1
	}
	return j + 1 + k
}

type zipRepoSource struct {
	a     *library.Archive
	index []int // into a.Files(); -1 for a folder
	files []library.ArchiveFile
	buf   []byte
}

func (z *zipRepoSource) size(i int) (int64, error) { return z.files[i].Size, nil }
func (z *zipRepoSource) mode(i int) uint32         { return uint32(z.files[i].Mode) }
func (z *zipRepoSource) read(i int, _ int64) ([]byte, error) {
	data, _, err := z.a.ReadFile(z.index[i], z.buf)
	if err != nil {
		return nil, zipError(err)
	}
	return data, nil
}
func (z *zipRepoSource) close() error { return nil }

// ResolveGitHub resolves ref ("" for the default branch) of the GitHub
// repository rawURL (https://github.com/OWNER/REPO) to a commit with one
// call of the commits API.
func (o *GitHubOptions) ResolveGitHub(ctx context.Context, rawURL, ref string) (string, error) {
	owner, repo, ok := githubRepo(rawURL)
	if !ok {
		return "", fmt.Errorf("%w: %s is not a https://github.com/OWNER/REPO repository", ErrSource, displayURL(rawURL))
	}
	if ref == "" {
		ref = "HEAD"
	}
	return o.resolve(ctx, o.client(), owner, repo, ref)
}

// OpenGitHub opens the GitHub repository rawURL at commit (a full commit
// id) for reading its packages: the commit's tar.gz archive is downloaded
// (bounded by MaxDownloadBytes) and unpacked into an unnamed temporary
// file (bounded by 2 GiB), from which each package is read. Close removes
// it.
func (o *GitHubOptions) OpenGitHub(ctx context.Context, rawURL, commit string, lim Limits) (*Repo, error) {
	owner, repo, ok := githubRepo(rawURL)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a https://github.com/OWNER/REPO repository", ErrSource, displayURL(rawURL))
	}
	if !isCommitID(commit) {
		return nil, fmt.Errorf("%w: commit %q is not a full 40-digit commit id", ErrNotFound, commit)
	}
	u := orDefault(o.ArchiveBase, defaultGitHubArchive) + "/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/tar.gz/" + commit
	resp, err := get(ctx, o.client(), u, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: the archive of commit %s: HTTP %s (a commit that is no longer in the repository, or no access to it)", ErrNotFound, commit, resp.Status)
	}
	maxDown := o.MaxDownloadBytes
	if maxDown <= 0 {
		maxDown = defaultMaxDownload
	}
	tmp, err := os.CreateTemp("", "skills-mcp-archive-*.tar")
	if err != nil {
		return nil, err
	}
	name := tmp.Name()
	removed := os.Remove(name) == nil // unnamed at once where the system allows it
	ts := &tarRepoSource{f: tmp, name: name, removed: removed}
	r, err := readTarRepo(&countingReader{r: resp.Body, max: maxDown}, ts)
	if err != nil {
		ts.close()
		return nil, fmt.Errorf("the archive of commit %s: %w", commit, err)
	}
	r.lim = lim.withDefaults()
	r.Commit = commit
	return r, nil
}

// readTarRepo unpacks a GitHub tar.gz into ts's file and lists it.
func readTarRepo(body io.Reader, ts *tarRepoSource) (*Repo, error) {
	zr, err := gzip.NewReader(body)
	if errors.Is(err, ErrTooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not a gzip stream: %v", ErrArchive, err)
	}
	defer zr.Close()
	n, err := io.Copy(ts.f, &limitedReader{r: zr, left: maxUnpackedBytes + 1})
	var tooBig *tooLargeError
	switch {
	case errors.As(err, &tooBig) || n > maxUnpackedBytes:
		return nil, fmt.Errorf("%w: the repository unpacks to more than %d bytes", ErrTooLarge, int64(maxUnpackedBytes))
	case errors.Is(err, ErrTooLarge):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrArchive, err)
	}
	pos := &offsetReader{r: io.NewSectionReader(ts.f, 0, n)}
	tr := tar.NewReader(pos)
	var (
		entries []RepoEntry
		top     string
		when    time.Time
	)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrArchive, err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if len(entries) >= maxRepoEntries {
			return nil, fmt.Errorf("%w: more than %d entries in the repository", ErrTooLarge, maxRepoEntries)
		}
		first, rel, _ := strings.Cut(strings.TrimSuffix(h.Name, "/"), "/")
		if top == "" {
			top = first
			when = h.ModTime.UTC()
		}
		if first != top {
			return nil, fmt.Errorf("%w: entry %q is outside the archive's top folder %q", ErrArchive, h.Name, top)
		}
		if rel == "" {
			continue
		}
		kind := EntrySpecial
		switch h.Typeflag {
		case tar.TypeDir:
			kind = EntryDir
		case tar.TypeReg, tar.TypeRegA:
			kind = EntryFile
		case tar.TypeSymlink, tar.TypeLink:
			kind = EntryLink
		}
		entries = append(entries, RepoEntry{Path: rel, Kind: kind})
		mode := uint32(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		ts.at = append(ts.at, tarSpan{off: pos.n, size: h.Size, mode: mode})
	}
	sorted, old := sortEntries(entries)
	ts.at = permute(ts.at, old)
	r := newRepo(sorted, ts, Limits{})
	r.Time = when
	return r, nil
}

// offsetReader counts what was read through it: after tar.Reader.Next,
// the offset of the entry's data (archive/tar reads no further ahead).
type offsetReader struct {
	r io.Reader
	n int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	o.n += int64(n)
	return n, err
}

type tarSpan struct {
	off, size int64
	mode      uint32
}

type tarRepoSource struct {
	f       *os.File
	name    string
	removed bool
	at      []tarSpan
}

func (t *tarRepoSource) size(i int) (int64, error) { return t.at[i].size, nil }
func (t *tarRepoSource) mode(i int) uint32         { return t.at[i].mode }
func (t *tarRepoSource) read(i int, size int64) ([]byte, error) {
	data := make([]byte, size)
	if _, err := t.f.ReadAt(data, t.at[i].off); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArchive, err)
	}
	return data, nil
}

func (t *tarRepoSource) close() error {
	err := t.f.Close()
	if !t.removed {
		err = errors.Join(err, os.Remove(t.name))
	}
	return err
}

// listRemote resolves ref on a remote repository by listing its refs.
func listRemote(ctx context.Context, rawURL, ref string) (string, error) {
	if isCommitID(ref) {
		return ref, nil
	}
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return "", err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{rawURL}})
	if err != nil {
		return "", err
	}
	refs, err := remote.ListContext(ctx, &git.ListOptions{PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", fmt.Errorf("listing the repository's refs: %w", err)
	}
	byName := make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
	for _, r := range refs {
		byName[r.Name()] = r
	}
	cands := refCandidates(ref)
	if ref == "" {
		head := byName[plumbing.HEAD]
		if head == nil {
			return "", fmt.Errorf("%w: the repository has no default branch (HEAD)", ErrNotFound)
		}
		if head.Type() != plumbing.SymbolicReference {
			return head.Hash().String(), nil
		}
		cands = []plumbing.ReferenceName{head.Target()}
	}
	for _, c := range cands {
		if p := byName[plumbing.ReferenceName(string(c)+"^{}")]; p != nil {
			return p.Hash().String(), nil // an annotated tag's commit
		}
		if r := byName[c]; r != nil {
			return r.Hash().String(), nil
		}
	}
	return "", fmt.Errorf("%w: no branch or tag %q in the repository", ErrNotFound, ref)
}

// Requirements returns what the package's frontmatter declares it needs,
// as [Inspect] reports it.
func (m *Meta) Requirements() Requirements { return requirements(m.fm) }

// Field returns the frontmatter's value of key when it is a string.
func (m *Meta) Field(key string) (string, bool) { return m.fm.String(key) }

// StringMap returns the frontmatter's value of key when it is a map of
// strings (as metadata is).
func (m *Meta) StringMap(key string) (map[string]string, bool) { return m.fm.StringMap(key) }
