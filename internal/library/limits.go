package library

import "time"

// Limits bound what an archive or a download may cost. A zero field means
// its default (see [DefaultLimits]).
type Limits struct {
	// MaxEntries is the largest number of entries (files and directories)
	// in an archive. Default 8192.
	MaxEntries int
	// MaxTotalBytes bounds the inflated size of all entries together.
	// Default 256 MiB.
	MaxTotalBytes int64
	// MaxEntryBytes bounds the inflated size of one entry. Default 64 MiB.
	MaxEntryBytes int64
	// MaxDownloadBytes bounds a downloaded archive. Default 256 MiB.
	MaxDownloadBytes int64
	// MaxRatio bounds the declared compression ratio of an entry larger
	// than 1 MiB. Default 200.
	MaxRatio float64
}

// ratioFloor is the declared size below which the ratio is not checked:
// small text files routinely compress better than 200:1 (a run of spaces),
// and an entry this small cannot hurt.
const ratioFloor = 1 << 20

// DefaultFetchTimeout bounds each HTTP request (headers and body) of a fetch
// when Cache.Timeout is zero.
const DefaultFetchTimeout = 60 * time.Second

// DefaultLimits returns the limits used for zero fields.
func DefaultLimits() Limits {
	return Limits{
		MaxEntries:       8192,
		MaxTotalBytes:    256 << 20,
		MaxEntryBytes:    64 << 20,
		MaxDownloadBytes: 256 << 20,
		MaxRatio:         200,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = d.MaxEntryBytes
	}
	if l.MaxDownloadBytes <= 0 {
		l.MaxDownloadBytes = d.MaxDownloadBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = d.MaxRatio
	}
	return l
}
