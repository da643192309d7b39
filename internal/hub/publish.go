package hub

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
)

// Publication is a package published through the ClawHub-compatible
// registry: the files a publisher uploaded, the name they gave it and the
// semantic version they chose.
type Publication struct {
	// Name must be the name in the package's SKILL.md.
	Name string
	// Version and Changelog are recorded in the version's origin.
	Version   string
	Changelog string
	// Files are the package's files, path below the package root and
	// content. Paths are untrusted: they are checked as an archive's
	// names are.
	Files []PublishedFile
}

// PublishedFile is one uploaded file of a Publication.
type PublishedFile struct {
	Path string
	Data []byte
}

// ErrNameMismatch says that a publication's name is not its SKILL.md's.
var ErrNameMismatch = errors.New("the published name is not the name in SKILL.md")

// InstallPublished installs a publication as a version, through the path
// every upload takes: the files become a ZIP that pkgtree reads with the
// hub's limits and archive checks (names, sizes, counts, no links), the
// tree is inspected, and the version is stored unapproved. A tree the hub
// holds already is returned as it is, with its first origin.
func (h *Hub) InstallPublished(ctx context.Context, p Publication) (*Installed, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range p.Files {
		fh := &zip.FileHeader{Name: f.Path, Method: zip.Store, CRC32: crc32.ChecksumIEEE(f.Data),
			CompressedSize64: uint64(len(f.Data)), UncompressedSize64: uint64(len(f.Data))}
		fh.SetMode(0o644)
		w, err := zw.CreateRaw(fh)
		if err == nil {
			_, err = w.Write(f.Data)
		}
		if err != nil {
			return nil, fmt.Errorf("publishing %s: %w", p.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("publishing %s: %w", p.Name, err)
	}
	tree, err := pkgtree.FromZip(bytes.NewReader(buf.Bytes()), int64(buf.Len()), &pkgtree.ZipOptions{Limits: h.limits})
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", p.Name, err)
	}
	meta, err := tree.Meta()
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", p.Name, err)
	}
	if meta.Name != p.Name {
		return nil, fmt.Errorf("publishing %s: %w (%q); publish it under that name", p.Name, ErrNameMismatch, meta.Name)
	}
	origin := pkgtree.Origin{Kind: pkgtree.OriginPublish, Version: p.Version, Changelog: p.Changelog}
	inst, err := h.install(ctx, tree, fixed(origin), nil)
	if err != nil {
		return nil, fmt.Errorf("publishing %s: %w", p.Name, err)
	}
	return inst, nil
}

// Limits returns the bounds every installed package must fit, defaults
// filled in.
func (h *Hub) Limits() pkgtree.Limits {
	l, d := h.limits, pkgtree.DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxPackageBytes <= 0 {
		l.MaxPackageBytes = d.MaxPackageBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	return l
}
