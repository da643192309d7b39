package library

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is. Every refusal of an archive
// wraps one of them in an [*ArchiveError] that names the archive and, when
// one entry is at fault, the entry.
var (
	// ErrNotZip: the file has no end-of-central-directory record.
	ErrNotZip = errors.New("not a zip archive")
	// ErrCorrupt: the archive's structure is truncated, inconsistent or
	// lying (sizes, offsets, names or counts that disagree, overlapping
	// entries, data outside the file, several disks).
	ErrCorrupt = errors.New("corrupt or inconsistent archive")
	// ErrInsecurePath: an entry name that could escape the extraction
	// directory or mean different files on different systems.
	ErrInsecurePath = errors.New("insecure entry name")
	// ErrLink: a symbolic link (or Windows reparse point) entry.
	ErrLink = errors.New("link entry")
	// ErrSpecialFile: a device, fifo or socket entry.
	ErrSpecialFile = errors.New("special file entry")
	// ErrEncrypted: an encrypted entry.
	ErrEncrypted = errors.New("encrypted entry")
	// ErrMethod: a compression method other than Store and Deflate.
	ErrMethod = errors.New("unsupported compression method")
	// ErrDuplicate: two entries for the same path, also under case folding,
	// or a path that is both a file and a directory.
	ErrDuplicate = errors.New("duplicate entry")
	// ErrTooManyEntries: more entries than Limits.MaxEntries.
	ErrTooManyEntries = errors.New("too many entries")
	// ErrTooLarge: a declared or inflated size, or a download, over its
	// limit.
	ErrTooLarge = errors.New("over the size limit")
	// ErrRatio: a declared compression ratio over Limits.MaxRatio.
	ErrRatio = errors.New("compression ratio over the limit")
	// ErrChecksum: inflated content that does not match its CRC-32.
	ErrChecksum = errors.New("checksum mismatch")

	// ErrInsecureURL: a URL (or redirect target) that is not https, or
	// carries credentials.
	ErrInsecureURL = errors.New("insecure URL")
	// ErrRedirect: a redirect loop, or more than five redirects.
	ErrRedirect = errors.New("refused redirect")
	// ErrUnverified: a download with neither a pinned sha256 nor a sidecar,
	// and AllowUnverified not set.
	ErrUnverified = errors.New("archive cannot be verified")
	// ErrDigestMismatch: a download whose sha256 differs from the pin or
	// the sidecar.
	ErrDigestMismatch = errors.New("sha256 mismatch")
)

// ArchiveError reports an archive that was refused or could not be read.
type ArchiveError struct {
	// Archive names the archive: its path, or the redacted URL it came
	// from.
	Archive string
	// Entry is the offending entry name as stored in the archive, or ""
	// when the problem concerns the whole archive. Error quotes it, so a
	// hostile name cannot forge log lines.
	Entry string
	// Err wraps one of the ErrX sentinels with details.
	Err error
}

func (e *ArchiveError) Error() string {
	if e.Entry == "" {
		return fmt.Sprintf("zip library %s: %v", e.Archive, e.Err)
	}
	return fmt.Sprintf("zip library %s: entry %q: %v", e.Archive, e.Entry, e.Err)
}

func (e *ArchiveError) Unwrap() error { return e.Err }

// entryErr builds an ArchiveError for one entry; the caller fills Archive.
func entryErr(entry string, sentinel error, format string, args ...any) *ArchiveError {
	return &ArchiveError{Entry: entry, Err: detail(sentinel, format, args...)}
}

// archiveErr builds an ArchiveError for the whole archive.
func archiveErr(sentinel error, format string, args ...any) *ArchiveError {
	return &ArchiveError{Err: detail(sentinel, format, args...)}
}

func detail(sentinel error, format string, args ...any) error {
	if format == "" {
		return sentinel
	}
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// named sets the archive name on an *ArchiveError, or wraps any other error
// with it.
func named(err error, archive string) error {
	if err == nil {
		return nil
	}
	var ae *ArchiveError
	if errors.As(err, &ae) && ae.Archive == "" {
		ae.Archive = archive
		return err
	}
	if ae != nil {
		return err
	}
	return fmt.Errorf("zip library %s: %w", archive, err)
}

// FetchError is a library URL that could not be fetched: the network, the
// server or the download failed, not the way the library was named. The
// command line reports it as a failure at run time, not as bad usage.
type FetchError struct{ Err error }

func (e *FetchError) Error() string { return e.Err.Error() }
func (e *FetchError) Unwrap() error { return e.Err }
