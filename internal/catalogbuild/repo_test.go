package catalogbuild

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// A test repository is written object by object with go-git, so that
// thousands of folders cost milliseconds and symlinks need no file system
// support. A name ending in "*" is executable; content "->target" makes a
// symlink; content "<submodule>" a submodule entry.
type testRepo struct {
	t    testing.TB
	dir  string
	repo *git.Repository
	head plumbing.Hash
}

func newTestRepo(t testing.TB, bare bool) *testRepo {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, bare)
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, repo: repo}
}

type node struct {
	files map[string]fileSpec
	dirs  map[string]*node
}

type fileSpec struct {
	data string
	mode filemode.FileMode
}

func (r *testRepo) blob(data string) plumbing.Hash {
	obj := r.repo.Storer.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		r.t.Fatal(err)
	}
	w.Write([]byte(data))
	w.Close()
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

func (r *testRepo) tree(n *node) plumbing.Hash {
	var entries []object.TreeEntry
	for name, f := range n.files {
		h := plumbing.NewHash(strings.Repeat("1", 40))
		if f.mode != filemode.Submodule {
			h = r.blob(f.data)
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: f.mode, Hash: h})
	}
	for name, d := range n.dirs {
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: r.tree(d)})
	}
	// git's order: a folder sorts as its name and a slash.
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	obj := r.repo.Storer.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		r.t.Fatal(err)
	}
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		r.t.Fatal(err)
	}
	return h
}

// commit replaces the whole tree with files and commits it on main at when.
func (r *testRepo) commit(when time.Time, files map[string]string) plumbing.Hash {
	r.t.Helper()
	root := &node{files: map[string]fileSpec{}, dirs: map[string]*node{}}
	for name, content := range files {
		mode := filemode.Regular
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, filemode.Executable
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			content, mode = target, filemode.Symlink
		}
		if content == "<submodule>" {
			mode = filemode.Submodule
		}
		segs := strings.Split(name, "/")
		n := root
		for _, s := range segs[:len(segs)-1] {
			if n.dirs[s] == nil {
				n.dirs[s] = &node{files: map[string]fileSpec{}, dirs: map[string]*node{}}
			}
			n = n.dirs[s]
		}
		n.files[segs[len(segs)-1]] = fileSpec{data: content, mode: mode}
	}
	sig := object.Signature{Name: "Test", Email: "test@example.com", When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: "test", TreeHash: r.tree(root)}
	if !r.head.IsZero() {
		c.ParentHashes = []plumbing.Hash{r.head}
	}
	obj := r.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		r.t.Fatal(err)
	}
	h, err := r.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", h)); err != nil {
		r.t.Fatal(err)
	}
	if err := r.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/main")); err != nil {
		r.t.Fatal(err)
	}
	r.head = h
	return h
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
}

var _ = bytes.NewReader
