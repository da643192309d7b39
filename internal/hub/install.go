package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
)

// Progress stages of an install beyond pkgtree's reading stages.
const (
	// StageHashing: the upload is hashed for its origin.
	StageHashing = "hashing"
	// StageInspecting: the tree is inspected.
	StageInspecting = "inspecting"
	// StageStoring: the version is written to the store.
	StageStoring = "storing"
)

// Installed is the result of an install.
type Installed struct {
	Version Version `json:"version"`
	// Created is false when the same tree was installed before: the
	// existing version is returned and nothing was written.
	Created bool `json:"created"`
	// Inspection is the version's inspection (also when not created).
	Inspection pkgtree.Inspection `json:"inspection"`
}

// ZipInstall is a package uploaded as a ZIP archive.
type ZipInstall struct {
	// R and Size are the archive.
	R    io.ReaderAt
	Size int64
	// FileName is the uploaded file's name, recorded in the origin.
	FileName string
	// Path is the package directory inside the archive; "" means SKILL.md
	// is at the archive root.
	Path string
	// Progress, if not nil, is called from the calling goroutine as the
	// install goes on.
	Progress func(pkgtree.Progress)
}

// InstallZip installs the package in a ZIP upload. Its origin records the
// file's name and the sha256 of the whole upload.
func (h *Hub) InstallZip(ctx context.Context, z ZipInstall) (*Installed, error) {
	tree, err := pkgtree.FromZip(z.R, z.Size, &pkgtree.ZipOptions{Path: z.Path, Limits: h.limits, Progress: z.Progress})
	if err != nil {
		return nil, fmt.Errorf("installing %s: %w", z.FileName, err)
	}
	// The upload is hashed only for a new version: installing a tree the
	// store holds costs the one digest pass FromZip made.
	origin := func() (pkgtree.Origin, error) {
		progress(z.Progress, pkgtree.Progress{Stage: StageHashing, TotalBytes: z.Size})
		hash := sha256.New()
		if _, err := io.Copy(hash, io.NewSectionReader(z.R, 0, z.Size)); err != nil {
			return pkgtree.Origin{}, fmt.Errorf("hashing the upload: %w", err)
		}
		return pkgtree.Origin{Kind: pkgtree.OriginZip, Path: z.Path, FileName: z.FileName, FileSHA256: hex.EncodeToString(hash.Sum(nil))}, nil
	}
	inst, err := h.install(ctx, tree, origin, z.Progress)
	if err != nil {
		return nil, fmt.Errorf("installing %s: %w", z.FileName, err)
	}
	return inst, nil
}

// InstallZipFile installs the package in the ZIP archive at name, which must
// be a regular file; see InstallZip.
func (h *Hub) InstallZipFile(ctx context.Context, name, dir string, progress func(pkgtree.Progress)) (*Installed, error) {
	f, err := regfile.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening the ZIP: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("opening the ZIP: %w", err)
	}
	return h.InstallZip(ctx, ZipInstall{R: f, Size: fi.Size(), FileName: filepath.Base(name), Path: dir, Progress: progress})
}

// GitInstall is a package in a git repository.
type GitInstall struct {
	// URL is the repository: a local path, a file:// URL or an https URL.
	URL string
	// Path is the package directory inside the repository; "" for the root.
	Path string
	// Ref is a branch, tag or full ref name; "" means the default branch.
	Ref string
	// Commit, if set, is the full commit id to read.
	Commit string
	// Progress, if not nil, is called from the calling goroutine as the
	// install goes on.
	Progress func(pkgtree.Progress)
}

// InstallGit installs the package at g.Path of repository g.URL, at g.Ref
// resolved to a commit (or at g.Commit). The origin records the ref asked
// for and the commit read. Nothing in the repository runs.
func (h *Hub) InstallGit(ctx context.Context, g GitInstall) (*Installed, error) {
	if err := h.CheckRepository(g.URL); err != nil {
		return nil, fmt.Errorf("installing from a repository: %w", err)
	}
	tree, origin, err := pkgtree.FromGit(ctx, pkgtree.GitSource{
		URL: g.URL, Path: g.Path, Ref: g.Ref, Commit: g.Commit,
		Limits: h.limits, GitHub: h.github, Progress: g.Progress,
	})
	if err != nil {
		return nil, fmt.Errorf("installing from %s: %w", g.URL, err)
	}
	inst, err := h.install(ctx, tree, fixed(origin), g.Progress)
	if err != nil {
		return nil, fmt.Errorf("installing from %s: %w", g.URL, err)
	}
	return inst, nil
}

// InstallCatalogItem installs the catalog item id: its repository's package
// directory at the item's commit (its default branch when the item names
// none). When the item publishes a tree digest, a tree with another one is
// refused with ErrDigestMismatch, and a version with that digest already
// installed is returned without reading the repository.
func (h *Hub) InstallCatalogItem(ctx context.Context, id string, progress func(pkgtree.Progress)) (*Installed, error) {
	cat, err := h.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	it, ok := cat.Current().Item(id)
	if !ok {
		return nil, fmt.Errorf("catalog item %q: %w: search the catalog with `hub catalog search` for its id", id, store.ErrNotFound)
	}
	if it.TreeDigest != "" {
		if sv, err := h.st.FindVersion(ctx, it.TreeDigest); err == nil {
			return h.existing(sv)
		}
	}
	// A catalog is a document anyone may have written: its items'
	// locations follow the same rule as a direct install's.
	if err := h.CheckRepository(it.Repository); err != nil {
		return nil, fmt.Errorf("installing catalog item %s: %w", id, err)
	}
	tree, origin, err := pkgtree.FromGit(ctx, pkgtree.GitSource{
		URL: it.Repository, Path: it.Path, Commit: it.Commit,
		Limits: h.limits, GitHub: h.github, Progress: progress,
	})
	if err != nil {
		return nil, fmt.Errorf("installing catalog item %s: %w", id, err)
	}
	if it.TreeDigest != "" {
		if got := tree.Digest(); got != it.TreeDigest {
			return nil, fmt.Errorf("installing catalog item %s: %w: the catalog says %s, %s at %s has %s; the repository or the catalog changed: refresh the catalog, or install from the repository with `hub install --repo` to take the tree as it is",
				id, ErrDigestMismatch, it.TreeDigest, it.Repository, origin.Commit, got)
		}
	}
	origin.Kind = pkgtree.OriginCatalog
	origin.CatalogItem = id
	inst, err := h.install(ctx, tree, fixed(origin), progress)
	if err != nil {
		return nil, fmt.Errorf("installing catalog item %s: %w", id, err)
	}
	return inst, nil
}

// install stores a tree read and checked by pkgtree, with the origin
// originOf returns. A tree already stored costs one lookup: it is neither
// inspected nor written again, and keeps the origin of its first install.
func (h *Hub) install(ctx context.Context, tree *pkgtree.Tree, originOf func() (pkgtree.Origin, error), prog func(pkgtree.Progress)) (*Installed, error) {
	digest := tree.Digest()
	if sv, err := h.st.FindVersion(ctx, digest); err == nil {
		return h.existing(sv)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	meta, err := tree.Meta()
	if err != nil {
		return nil, err
	}
	origin, err := originOf()
	if err != nil {
		return nil, err
	}
	progress(prog, pkgtree.Progress{Stage: StageInspecting, TotalFiles: len(tree.Files), TotalBytes: tree.Size()})
	in := pkgtree.Inspect(tree)
	originJSON, err := json.Marshal(origin)
	if err != nil {
		return nil, err
	}
	inJSON, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	nv := store.NewVersion{
		Package:     meta.Name,
		TreeDigest:  digest,
		Frontmatter: meta.Frontmatter,
		Origin:      originJSON,
		Inspection:  inJSON,
		Files:       make([]store.NewFile, len(tree.Files)),
	}
	for i, f := range tree.Files {
		nv.Files[i] = store.NewFile{Path: f.Path, Mode: f.Mode, Size: f.Size, Digest: f.Digest, Data: f.Data}
	}
	progress(prog, pkgtree.Progress{Stage: StageStoring, TotalFiles: len(tree.Files), TotalBytes: tree.Size()})
	sv, created, err := h.st.Install(ctx, nv)
	if err != nil {
		return nil, err
	}
	if !created {
		// A concurrent install of the same tree won.
		return h.existing(sv)
	}
	return &Installed{Version: newVersion(sv), Created: true, Inspection: in}, nil
}

// existing is the result of installing a tree the store already holds.
func (h *Hub) existing(sv store.Version) (*Installed, error) {
	inst := &Installed{Version: newVersion(sv)}
	if err := json.Unmarshal(sv.Inspection, &inst.Inspection); err != nil {
		return nil, fmt.Errorf("version %s: its stored inspection does not decode: %w", inst.Version.ID, err)
	}
	inst.Inspection.Note = pkgtree.NotProofOfSafety
	return inst, nil
}

func fixed(o pkgtree.Origin) func() (pkgtree.Origin, error) {
	return func() (pkgtree.Origin, error) { return o, nil }
}

func progress(f func(pkgtree.Progress), p pkgtree.Progress) {
	if f != nil {
		f(p)
	}
}
