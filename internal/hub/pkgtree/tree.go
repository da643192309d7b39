package pkgtree

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/library"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// Sentinel errors, matched with errors.Is. Every refusal wraps one of them
// with the offending path and the reason.
var (
	// ErrNoSkill: no SKILL.md at the package root, or one that cannot be
	// served (unparseable frontmatter, or a fatal validator problem).
	ErrNoSkill = errors.New("no valid SKILL.md at the package root")
	// ErrPath: a path that is not a safe relative name, or a package
	// directory that escapes its source.
	ErrPath = errors.New("invalid path")
	// ErrDuplicate: two files with the same path, also under case folding,
	// or a path that is both a file and a folder.
	ErrDuplicate = errors.New("duplicate path")
	// ErrLink: a symbolic link or hard link in the package.
	ErrLink = errors.New("link in the package")
	// ErrSpecial: a device, fifo, socket or git submodule in the package.
	ErrSpecial = errors.New("special file in the package")
	// ErrTooLarge: a file, the package or a download over its limit.
	ErrTooLarge = errors.New("over the package limits")
	// ErrArchive: a ZIP or tar archive that is corrupt, hostile or
	// ambiguous; the error also wraps the library's reason.
	ErrArchive = errors.New("archive refused")
	// ErrNotFound: a ref, commit or package directory that does not exist.
	ErrNotFound = errors.New("not found")
	// ErrSource: a repository URL this package cannot read.
	ErrSource = errors.New("unsupported source")
)

// Limits bound a package. A zero field means its default (see
// [DefaultLimits]).
type Limits struct {
	// MaxFileBytes bounds one file. Default 32 MiB.
	MaxFileBytes int64
	// MaxPackageBytes bounds all files together. Default 128 MiB.
	MaxPackageBytes int64
	// MaxFiles bounds the number of files. Default 2,000.
	MaxFiles int
}

// DefaultLimits returns the limits used for zero fields: the hub's, 32 MiB
// per file, 128 MiB per package, 2,000 files.
func DefaultLimits() Limits {
	return Limits{MaxFileBytes: 32 << 20, MaxPackageBytes: 128 << 20, MaxFiles: 2000}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
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

// File is one file of a package tree.
type File struct {
	// Path is "/"-separated, relative to the package root.
	Path string
	// Mode is 0o644, or 0o755 for an executable file.
	Mode uint32
	// Size is len(Data).
	Size int64
	// Digest is the sha256 of Data.
	Digest [32]byte
	// Data is the whole content.
	Data []byte
}

// Tree is a package: its files sorted by Path in byte order, each path
// unique. Trees returned by this package are valid (see the package
// documentation) and must not be modified.
type Tree struct {
	Files []File
}

// SkillFile is the name of the file every package has at its root.
const SkillFile = "SKILL.md"

// maxSkillMDBytes is the largest SKILL.md the server serves (the catalog's
// MaxSkillMDBytes).
const maxSkillMDBytes = 4 << 20

// Digest returns the tree digest, "sha256:" and 64 lowercase hex digits,
// defined in the package documentation.
func (t *Tree) Digest() string {
	h := sha256.New()
	var line []byte
	for i := range t.Files {
		f := &t.Files[i]
		line = append(line[:0], f.Path...)
		line = append(line, 0)
		line = append(line, modeText(f.Mode)...)
		line = append(line, 0)
		line = hex.AppendEncode(line, f.Digest[:])
		line = append(line, '\n')
		h.Write(line)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func modeText(m uint32) string {
	if m == 0o755 {
		return "755"
	}
	return "644"
}

// Size returns the total bytes of the tree's files.
func (t *Tree) Size() int64 {
	var n int64
	for i := range t.Files {
		n += t.Files[i].Size
	}
	return n
}

// File returns the file at p, or nil.
func (t *Tree) File(p string) *File {
	i, ok := slices.BinarySearchFunc(t.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return nil
	}
	return &t.Files[i]
}

// New builds a tree from files, whose Data is taken as the truth: Size and
// Digest are computed from it, and Mode may be 0 (meaning 0o644). It takes
// ownership of the slice, and checks the tree as every reader does (see the
// package documentation), with lim's limits (zero means the defaults).
func New(files []File, lim Limits) (*Tree, error) {
	for i := range files {
		f := &files[i]
		f.Size = int64(len(f.Data))
		f.Digest = sha256.Sum256(f.Data)
		if f.Mode == 0 {
			f.Mode = 0o644
		}
	}
	return build(files, lim.withDefaults())
}

// build sorts and checks files whose Size and Digest the caller computed.
func build(files []File, lim Limits) (*Tree, error) {
	if len(files) > lim.MaxFiles {
		return nil, fmt.Errorf("%w: %d files, the limit is %d", ErrTooLarge, len(files), lim.MaxFiles)
	}
	var total int64
	for i := range files {
		f := &files[i]
		if reason := pathProblem(f.Path); reason != "" {
			return nil, fmt.Errorf("%w: %q: %s", ErrPath, f.Path, reason)
		}
		if f.Mode != 0o644 && f.Mode != 0o755 {
			return nil, fmt.Errorf("%w: %q has mode %o; a package file is 644 or 755", ErrPath, f.Path, f.Mode)
		}
		if f.Size != int64(len(f.Data)) {
			return nil, fmt.Errorf("%w: %q: size %d but %d bytes of data", ErrArchive, f.Path, f.Size, len(f.Data))
		}
		if f.Size > lim.MaxFileBytes {
			return nil, fmt.Errorf("%w: %q is %d bytes, the per-file limit is %d", ErrTooLarge, f.Path, f.Size, lim.MaxFileBytes)
		}
		total += f.Size
		if total > lim.MaxPackageBytes {
			return nil, fmt.Errorf("%w: the files add up to more than the package limit of %d bytes", ErrTooLarge, lim.MaxPackageBytes)
		}
	}
	slices.SortFunc(files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	if err := checkCollisions(files); err != nil {
		return nil, err
	}
	t := &Tree{Files: files}
	if _, err := t.Meta(); err != nil {
		return nil, err
	}
	return t, nil
}

// maxDepth bounds a package's folders, as the library's archive rules do.
const maxDepth = library.MaxDepth

// pathProblem says why p, the path of a file, is not a valid package path,
// or returns "": the library's rule for archive entry names, and no ".git"
// segment (a .git folder in a materialised package would make git read its
// config and hooks there).
func pathProblem(p string) string {
	if strings.HasSuffix(p, "/") {
		return "empty path segment"
	}
	if reason := library.NameProblem(p); reason != "" {
		return reason
	}
	for seg := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(seg, ".git") {
			return `".git" segment (a repository's control folder)`
		}
	}
	return ""
}

// checkCollisions refuses, in sorted files, duplicate paths, paths equal
// under case folding (one file on macOS and Windows), and a path that is
// both a file and a folder.
func checkCollisions(files []File) error {
	type seen struct {
		exact string
		dir   bool
	}
	byFold := make(map[string]seen, len(files))
	add := func(name string, dir bool) error {
		key := library.FoldName(name)
		s, ok := byFold[key]
		switch {
		case !ok:
			byFold[key] = seen{name, dir}
			return nil
		case s.exact != name:
			return fmt.Errorf("%w: %q and %q differ only in letter case", ErrDuplicate, s.exact, name)
		case s.dir != dir:
			return fmt.Errorf("%w: %q is both a file and a folder", ErrDuplicate, name)
		case !dir:
			return fmt.Errorf("%w: %q appears twice", ErrDuplicate, name)
		}
		return nil
	}
	for i := range files {
		p := files[i].Path
		for j := 0; j < len(p); j++ {
			if p[j] == '/' {
				if err := add(p[:j], true); err != nil {
					return err
				}
			}
		}
		if err := add(p, false); err != nil {
			return err
		}
	}
	return nil
}

// Meta is what a package's SKILL.md declares.
type Meta struct {
	// Name is the frontmatter name, the package's name.
	Name string `json:"name"`
	// Description is the frontmatter description.
	Description string `json:"description"`
	// Frontmatter is the whole frontmatter as JSON, keys in source order.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Problems are the validator's non-fatal problems (fatal ones refuse
	// the package).
	Problems []skill.Problem `json:"-"`

	fm *skill.Frontmatter
}

// Meta parses and validates the tree's SKILL.md as the server does before
// serving a skill. Errors wrap [ErrNoSkill] and say what to fix.
func (t *Tree) Meta() (*Meta, error) {
	f := t.File(SkillFile)
	if f == nil {
		for i := range t.Files {
			if strings.EqualFold(t.Files[i].Path, SkillFile) {
				return nil, fmt.Errorf("%w: found %q; the file must be named exactly SKILL.md", ErrNoSkill, t.Files[i].Path)
			}
		}
		if p := nestedSkill(t.Files); p != "" {
			return nil, fmt.Errorf("%w: found %q; install its folder as the package (its path)", ErrNoSkill, p)
		}
		return nil, fmt.Errorf("%w: the package has no SKILL.md at its root", ErrNoSkill)
	}
	if f.Size > maxSkillMDBytes {
		return nil, fmt.Errorf("%w: SKILL.md is %d bytes, over the %d-byte limit for a skill file", ErrNoSkill, f.Size, maxSkillMDBytes)
	}
	doc, err := skill.Parse(f.Data)
	if err != nil {
		return nil, fmt.Errorf("%w: SKILL.md: %s", ErrNoSkill, strings.TrimPrefix(err.Error(), "skill: "))
	}
	m := &Meta{fm: doc.Frontmatter, Name: doc.Frontmatter.Name(), Description: doc.Frontmatter.Description(), Frontmatter: doc.Frontmatter.JSON()}
	for _, p := range skill.Validate(doc.Frontmatter, nil) {
		if p.Fatal {
			return nil, fmt.Errorf("%w: SKILL.md: %s (%s)", ErrNoSkill, p.Message, p.Rule)
		}
		m.Problems = append(m.Problems, p)
	}
	return m, nil
}

// nestedSkill returns the shallowest SKILL.md below the root, or "".
func nestedSkill(files []File) string {
	best := ""
	for i := range files {
		p := files[i].Path
		if strings.HasSuffix(p, "/"+SkillFile) && (best == "" || strings.Count(p, "/") < strings.Count(best, "/")) {
			best = p
		}
	}
	return best
}

// cleanDir checks a package directory inside a source: "" and "." mean the
// root; otherwise a relative "/"-separated path without "." or ".."
// segments, which could escape the source. Leading and trailing slashes
// are not accepted either, so that a path means one thing.
func cleanDir(dir string) (string, error) {
	d := strings.TrimSuffix(dir, "/")
	if d == "" || d == "." {
		return "", nil
	}
	if reason := pathProblem(d); reason != "" {
		return "", fmt.Errorf("%w: package path %q: %s", ErrPath, dir, reason)
	}
	return d, nil
}

// isLicenseName reports whether a repository's top-level file name is a
// licence or notice, which a nested package keeps under .origin/.
func isLicenseName(name string) bool {
	u := strings.ToUpper(name)
	for _, p := range []string{"LICENSE", "LICENCE", "NOTICE", "COPYING", "UNLICENSE"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// OriginDir is the folder under which a package installed from a
// subdirectory of a repository keeps the repository's top-level LICENSE*,
// NOTICE* and COPYING* files.
const OriginDir = ".origin"
