package catalog

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// scanState is what one scan learned that the next one starts from: what
// it knew of each file, each folder's listing, and the folders it walked.
// It is immutable once the scan returns (the found values and listings in
// it are shared with later states, and never written), apart from proven.
// A Reloader keeps the state of its last scan; a snapshot never holds one
// it did not build, so that what a rescan carries over is never written
// into a snapshot being served.
type scanState struct {
	// libs are the libraries scanned, in order; an incremental rescan
	// needs the same values.
	libs []*Library
	// optsKey is what of the options shapes a walk (see walkKey): an
	// incremental rescan needs the same.
	optsKey string
	// files holds, per library key, what the scan learned of each file it
	// read or reused without error, by name below the library root.
	files map[string]*fileIndex
	// dirs holds, per library key, the listing of every folder walked and
	// listed without error, by folder below the library root. A listing
	// made without the folder's identity has folderRec.ok unset.
	dirs map[string]*folderTable
	// walked is every folder walked per library, vault roots included,
	// for watchers.
	walked map[*Library][]string
	// first says the scan was a process's first (Scan without Previous),
	// whose folders Unchanged can prove unchanged.
	first bool
	// unprovable records that some file has no identity or could not be
	// read, so that Unchanged cannot tell.
	unprovable bool
	// watched says that every folder was watched before the listing kept
	// here was made (the scan gave Options.OnFolder), so that a folder
	// with no event since can be trusted to be as listed.
	watched bool
	// unsaved says that a scan since the digest cache was last written
	// learned something it does not hold.
	unsaved bool
	// listed counts the folders listed from the file system rather than
	// walked from a listing.
	listed int
	// proven is set when Unchanged proved the first scan's folders and
	// files unchanged after they were watched: the listings are then as
	// good as watched ones.
	proven atomic.Bool
}

// trustworthy reports whether an incremental rescan may walk st's
// listings of folders without events.
func (st *scanState) trustworthy() bool { return st.watched || st.proven.Load() }

// walkKey renders the options that decide what a walk finds and keeps,
// so that an incremental rescan is only made over a state walked alike.
func walkKey(o *Options) string {
	var b strings.Builder
	b.WriteString(strings.Join([]string{
		strconv.Itoa(o.Depth), strconv.FormatInt(o.MaxFileBytes, 10), bit(o.AllowOversize), bit(o.Strict), bit(o.NoScripts),
		bit(o.NoLint), bit(o.ShowDisabled), bit(o.NoPlaybooks), bit(o.NoValueChains),
	}, ","))
	for _, list := range [][]string{o.Exclude, o.ExcludeTiers, o.DevStatus} {
		b.WriteString("\x00")
		b.WriteString(strings.Join(list, "\x01"))
	}
	return b.String()
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// sameLibs reports whether two scans read the same Library values, in the
// same order.
func sameLibs(a, b []*Library) bool { return slices.Equal(a, b) }

// trustFunc says which folders an incremental rescan walks from the
// previous listing: nil for a full rescan.
// lateOK says the previous listings were proved current after the
// watches were added (scanState.proven).
type trustFunc func(lib *Library, dir string, lateOK bool) bool
