// Package pack builds the release zip of a vault's public subset: the
// skills that pass validation, the playbooks it ships (active ones unless
// told otherwise) with the files they embed, and its value-chain file,
// plus a manifest. The same vault always packs to the same bytes, and
// serving the zip gives the catalog serving the folder gives.
//
// Private playbook folders are never read, symlinks are never followed,
// and nothing outside the vault is opened.
package pack

import (
	"archive/zip"
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/vault"
)

// ManifestName is the manifest's name inside the zip (below the wrapper).
const ManifestName = "pack.json"

// modTime is the fixed time of every entry, so that packing is
// reproducible.
var modTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrNotVault means the folder holds no vault.
var ErrNotVault = errors.New("not a vault: it holds neither " + vault.SkillsDir + ", nor " + vault.PlaybooksDir + ", nor a value-chains.md")

// Options configures Build.
type Options struct {
	// Wrapper, if set, is a folder every entry is put in.
	Wrapper string
	// AllStatuses packs playbooks of every status, not only active ones.
	AllStatuses bool
}

// Manifest describes a pack; it is stored as pack.json.
type Manifest struct {
	Format      int      `json:"format"`
	Skills      []string `json:"skills"`
	Playbooks   []string `json:"playbooks"`
	Attachments []string `json:"attachments"`
	ValueChains string   `json:"valueChains,omitempty"`
	Files       int      `json:"files"`
	Bytes       int64    `json:"bytes"`
	// Left lists what was left out and why (paths relative to the vault).
	Left []string `json:"left,omitempty"`
}

// entry is one file of the pack. Content is read when the zip is
// written, one file at a time, so that a large vault is never held in
// memory.
type entry struct {
	name string // inside the zip, wrapper excluded
	size int64
	read func() ([]byte, error)
}

// Pack is a planned pack: what goes in, in order. It keeps the vault
// open until Close.
type Pack struct {
	Manifest Manifest
	entries  []entry
	wrapper  string
	libs     []*catalog.Library
}

// Close releases the vault.
func (p *Pack) Close() error {
	var errs []error
	for _, l := range p.libs {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// Plan reads the vault at dir and decides what the pack holds. Close the
// pack when done with it.
func Plan(ctx context.Context, dir string, opts Options) (_ *Pack, err error) {
	if opts.Wrapper != "" && (!filepath.IsLocal(opts.Wrapper) || strings.ContainsAny(opts.Wrapper, `/\`)) {
		return nil, fmt.Errorf("wrapper %q must be a plain folder name", opts.Wrapper)
	}
	p := &Pack{wrapper: opts.Wrapper, Manifest: Manifest{Format: 1, Skills: []string{}, Playbooks: []string{}, Attachments: []string{}}}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	root, err := catalog.OpenDirectory("", dir)
	if err != nil {
		return nil, err
	}
	p.libs = append(p.libs, root)
	layout := vault.DetectLayout(root.FS)
	if layout.Vault == "" && vault.Probe(root.FS, "") {
		layout.Vault = "."
	}
	if layout.Vault != "." {
		if layout.Vault != "" {
			return nil, fmt.Errorf("%w (its vault is in the folder %s: pack that folder)", ErrNotVault, layout.Vault)
		}
		return nil, ErrNotVault
	}

	// Skills: what a scan of the skills folder serves, hidden ones too.
	skillsLib := root
	if layout.Skills != "." {
		skillsLib, err = catalog.OpenDirectory("", filepath.Join(dir, filepath.FromSlash(layout.Skills)))
		if err != nil {
			return nil, err
		}
		p.libs = append(p.libs, skillsLib)
	}
	snap, err := catalog.Scan(ctx, []*catalog.Library{skillsLib}, 1, &catalog.Options{NoLint: true, ShowDisabled: true})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, sk := range snap.All() {
		folder := path.Join(layout.Skills, sk.Folder)
		p.Manifest.Skills = append(p.Manifest.Skills, folder)
		for _, f := range sk.Files {
			name := path.Join(layout.Skills, f.Name())
			if seen[name] {
				continue // a nested skill's file is in its parent's manifest too
			}
			seen[name] = true
			p.add(name, f.Size, f.ReadFile)
		}
	}
	for _, w := range snap.Warnings() {
		if w.Path != "" {
			p.Manifest.Left = append(p.Manifest.Left, path.Join(layout.Skills, w.Path)+": "+w.Message)
		}
	}

	// Playbooks and the chain file, read as the server reads them.
	raw := vault.Load(root.FS, vault.Options{Playbooks: true, ValueChains: true, SkillsDir: layout.Skills})
	for _, n := range raw.Notes {
		if status := n.Status(); status != "active" && !opts.AllStatuses {
			p.Manifest.Left = append(p.Manifest.Left, n.Path+": status "+status)
			continue
		}
		p.Manifest.Playbooks = append(p.Manifest.Playbooks, n.Path)
		p.addBytes(n.Path, []byte(n.Text))
		for _, a := range n.Attachments {
			if seen[a.Path] {
				continue
			}
			seen[a.Path] = true
			p.Manifest.Attachments = append(p.Manifest.Attachments, a.Path)
			p.add(a.Path, a.Size, func() ([]byte, error) { return catalog.ReadAttachment(root, a) })
		}
	}
	for _, w := range raw.Warnings {
		p.Manifest.Left = append(p.Manifest.Left, w.Path+": "+w.Message)
	}
	if raw.ChainFile != "" {
		p.Manifest.ValueChains = raw.ChainFile
		p.addBytes(raw.ChainFile, []byte(raw.ChainText))
	}
	slices.SortFunc(p.entries, func(a, b entry) int { return cmp.Compare(a.name, b.name) })
	slices.Sort(p.Manifest.Skills)
	slices.Sort(p.Manifest.Playbooks)
	slices.Sort(p.Manifest.Attachments)
	slices.Sort(p.Manifest.Left)
	for _, e := range p.entries {
		p.Manifest.Files++
		p.Manifest.Bytes += e.size
	}
	return p, nil
}

func (p *Pack) add(name string, size int64, read func() ([]byte, error)) {
	p.entries = append(p.entries, entry{name: name, size: size, read: read})
}

func (p *Pack) addBytes(name string, data []byte) {
	p.add(name, int64(len(data)), func() ([]byte, error) { return data, nil })
}

// WriteTo writes the zip to w and returns its size. Entries are sorted,
// dated modTime, mode 0644, and deflated only when that makes them
// smaller; the manifest comes first.
func (p *Pack) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	zw := zip.NewWriter(cw)
	manifest, err := json.MarshalIndent(p.Manifest, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := writeEntry(zw, path.Join(p.wrapper, ManifestName), append(manifest, '\n')); err != nil {
		return cw.n, err
	}
	for _, e := range p.entries {
		data, err := e.read()
		if err != nil {
			if errors.Is(err, catalog.ErrChanged) {
				err = errors.New("it changed while being packed; pack again")
			}
			return cw.n, fmt.Errorf("%s: %w", e.name, err)
		}
		if err := writeEntry(zw, path.Join(p.wrapper, e.name), data); err != nil {
			return cw.n, err
		}
	}
	if err := zw.Close(); err != nil {
		return cw.n, err
	}
	return cw.n, nil
}

func writeEntry(zw *zip.Writer, name string, data []byte) error {
	h := &zip.FileHeader{
		Name:   name,
		Method: zip.Store,
		// CreateRaw writes the header as given: the time goes in the MS-DOS
		// fields, which have no zone, so every pack carries the same bytes.
		ModifiedDate:       uint16((modTime.Year()-1980)<<9 | int(modTime.Month())<<5 | modTime.Day()),
		ModifiedTime:       uint16(modTime.Hour()<<11 | modTime.Minute()<<5 | modTime.Second()/2),
		CRC32:              crc32.ChecksumIEEE(data),
		UncompressedSize64: uint64(len(data)),
	}
	h.SetMode(0o644)
	body := data
	var buf bytes.Buffer
	fw, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		return err
	}
	fw.Write(data)
	if err := fw.Close(); err != nil {
		return err
	}
	if buf.Len() < len(data) {
		h.Method, body = zip.Deflate, buf.Bytes()
	}
	h.CompressedSize64 = uint64(len(body))
	wr, err := zw.CreateRaw(h)
	if err != nil {
		return err
	}
	_, err = wr.Write(body)
	return err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// Result is what Write produced.
type Result struct {
	// SHA256 is the hex digest of the zip, Size its length.
	SHA256 string
	Size   int64
}

// Digest returns the zip's digest and size without writing it anywhere.
func (p *Pack) Digest() (Result, error) {
	h := sha256.New()
	n, err := p.WriteTo(h)
	if err != nil {
		return Result{}, err
	}
	return Result{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// Write writes the zip to out and its "<out>.sha256" sidecar (the digest,
// two spaces and the file name, as sha256sum prints it). Both are written
// to temporary files, synced, and renamed into place, so a failure leaves
// nothing half-written.
func (p *Pack) Write(out string) (Result, error) {
	h := sha256.New()
	var res Result
	err := atomicfile.Write(out, 0o644, true, func(f io.Writer) error {
		n, err := p.WriteTo(io.MultiWriter(f, h))
		res.Size = n
		return err
	})
	if err != nil {
		return Result{}, err
	}
	res.SHA256 = hex.EncodeToString(h.Sum(nil))
	err = atomicfile.Write(out+".sha256", 0o644, true, func(f io.Writer) error {
		_, err := fmt.Fprintf(f, "%s  %s\n", res.SHA256, filepath.Base(out))
		return err
	})
	return res, err
}
