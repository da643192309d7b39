package pkgtree

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/library"
)

// ZipOptions configures [FromZip]. A nil *ZipOptions means all defaults.
type ZipOptions struct {
	// Path is the package directory inside the archive. If empty, SKILL.md
	// must be at the archive root.
	Path string
	// Limits bound the package; zero fields mean the defaults.
	Limits Limits
	// Progress, if not nil, is called after each file is read, from the
	// calling goroutine.
	Progress func(Progress)
}

// maxArchiveEntries bounds the entries (files and folders) of an uploaded
// archive, of which at most Limits.MaxFiles may be in the package.
const maxArchiveEntries = 8192

// FromZip reads the package in the ZIP archive r (size bytes) into memory.
//
// The archive is checked by the hardened rules the server applies to zip
// libraries (internal/library) before any entry is inflated: traversal,
// absolute names, links, special files, encryption, unknown methods,
// duplicate and case-folded duplicate names, lying or overlapping headers
// and declared compression ratios over 200:1 are refused for every entry,
// inside the package or not. The package's files are then counted and
// their declared sizes summed against the limits, and only then inflated,
// each checked against its declared size and CRC-32 as it is read. Nothing
// is returned unless all of it passed; errors wrap [ErrArchive] (and the
// library's sentinel), [ErrTooLarge], [ErrPath], [ErrDuplicate] or
// [ErrNoSkill].
func FromZip(r io.ReaderAt, size int64, opts *ZipOptions) (*Tree, error) {
	if opts == nil {
		opts = &ZipOptions{}
	}
	lim := opts.Limits.withDefaults()
	dir, err := cleanDir(opts.Path)
	if err != nil {
		return nil, err
	}
	alim := library.Limits{
		MaxEntries:    maxArchiveEntries,
		MaxEntryBytes: lim.MaxFileBytes,
		MaxTotalBytes: lim.MaxPackageBytes,
	}
	if dir != "" {
		// Entries outside the package are never inflated; their declared
		// sizes may add up to more than a package.
		alim.MaxTotalBytes = max(lim.MaxPackageBytes, library.DefaultLimits().MaxTotalBytes)
	}
	a, err := library.OpenArchive(r, size, alim)
	if err != nil {
		return nil, zipError(err)
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var (
		pick  []int
		total int64
		all   = a.Files()
	)
	for i, f := range all {
		if !strings.HasPrefix(f.Name, prefix) {
			continue
		}
		pick = append(pick, i)
		total += f.Size
	}
	switch {
	case dir != "" && len(pick) == 0:
		return nil, fmt.Errorf("%w: the archive has no folder %q", ErrNotFound, dir)
	case len(pick) > lim.MaxFiles:
		return nil, fmt.Errorf("%w: the package has %d files, the limit is %d", ErrTooLarge, len(pick), lim.MaxFiles)
	case total > lim.MaxPackageBytes:
		return nil, fmt.Errorf("%w: the package's files declare %d bytes, the limit is %d", ErrTooLarge, total, lim.MaxPackageBytes)
	}
	files := make([]File, 0, len(pick))
	buf := make([]byte, 64<<10)
	pr := Progress{Stage: StageReading, TotalFiles: len(pick), TotalBytes: total}
	for _, i := range pick {
		data, sum, err := a.ReadFile(i, buf)
		if err != nil {
			return nil, zipError(err)
		}
		f := all[i]
		files = append(files, File{Path: f.Name[len(prefix):], Mode: uint32(f.Mode), Size: int64(len(data)), Digest: sum, Data: data})
		if opts.Progress != nil {
			pr.Files++
			pr.Bytes += int64(len(data))
			opts.Progress(pr)
		}
	}
	return build(files, lim)
}

// zipError turns the library's archive error into this package's: the
// same reason, under ErrArchive (or ErrTooLarge for sizes), without the
// library's wording about zip libraries.
func zipError(err error) error {
	var ae *library.ArchiveError
	if !errors.As(err, &ae) {
		return fmt.Errorf("%w: %w", ErrArchive, err)
	}
	kind := ErrArchive
	switch {
	case errors.Is(err, library.ErrTooLarge), errors.Is(err, library.ErrTooManyEntries):
		kind = ErrTooLarge
	case errors.Is(err, library.ErrLink):
		kind = ErrLink
	case errors.Is(err, library.ErrSpecialFile):
		kind = ErrSpecial
	case errors.Is(err, library.ErrDuplicate):
		kind = ErrDuplicate
	case errors.Is(err, library.ErrInsecurePath):
		kind = ErrPath
	}
	if ae.Entry == "" {
		return &archiveError{kind: kind, err: ae.Err}
	}
	return &archiveError{kind: kind, entry: ae.Entry, err: ae.Err}
}

// archiveError is a refused archive: kind is this package's sentinel, err
// the library's detailed reason (which wraps the library's sentinel).
type archiveError struct {
	kind  error
	entry string
	err   error
}

func (e *archiveError) Error() string {
	msg := e.err.Error()
	if e.entry == "" {
		return fmt.Sprintf("%v: %s", e.kind, msg)
	}
	return fmt.Sprintf("%v: entry %q: %s", e.kind, e.entry, msg)
}

func (e *archiveError) Unwrap() []error { return []error{e.kind, e.err} }
