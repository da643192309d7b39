package catalog

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WatchedFolders returns the folders w watches, sorted.
func (w *Watcher) WatchedFolders() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for lib, dirs := range w.watched {
		for d := range dirs {
			out = append(out, filepath.Join(lib.Dir, filepath.FromSlash(d)))
		}
	}
	for d := range w.fileDirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// NotifySynced makes w send on ch after each post-rescan Sync. Call it
// before Start.
func (w *Watcher) NotifySynced(ch chan<- struct{}) { w.synced = ch }

// ReadOne does the per-file work of a scan on data, as if read from the
// file name: digest, UTF-8 check, sniffing, the risk linter and, for a
// SKILL.md, the parser. It returns the reusable buffer and the file's
// digest.
func ReadOne(name string, data, buf []byte) ([]byte, string, error) {
	f := &found{name: name, size: int64(len(data))}
	buf = readOne(bytes.NewReader(data), f, buf, true)
	return buf, f.digest.String(), f.err
}

// ListingsTrusted reports whether scans of lib walk unchanged folders from
// the listings of earlier scans.
func ListingsTrusted(lib *Library) bool {
	bt, ok := lib.tree.(*beneathTree)
	return ok && bt.listings
}

// Debounce and MaxDelay are the watcher's rescan delays.
const Debounce, MaxDelay = debounce, maxDelay

// DebounceLoop is the watcher's loop over kick, with rescan for its
// rescans.
func DebounceLoop(kick, stop <-chan struct{}, safety time.Duration, rescan func()) {
	debounceLoop(kick, stop, safety, func(bool) { rescan() })
}

// AfterListing makes scans of lib call fn with each folder just after
// listing it, before any file in it is read.
func AfterListing(lib *Library, fn func(dir string)) { lib.tree = afterListing{treeOf(lib), fn} }

type afterListing struct {
	tree
	fn func(string)
}

func (t afterListing) readDir(dir string) ([]entry, error) {
	entries, err := t.tree.readDir(dir)
	t.fn(dir)
	return entries, err
}

// ReadThroughRoot makes lib read through its os.Root, as where openat2 is
// missing.
func ReadThroughRoot(lib *Library) { lib.tree = nil }

// LastRescan returns how many folders r's last scan listed from the file
// system, and how many it walked.
func (r *Reloader) LastRescan() (listed, walked int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil {
		return 0, 0
	}
	for _, dirs := range r.state.walked {
		walked += len(dirs)
	}
	return r.state.listed, walked
}

// Describe renders everything a snapshot serves and reports, for tests
// that compare two scans: every skill with its entry, files, risks and
// dependencies, the warnings and the libraries' counts.
func Describe(s *Snapshot) string {
	var b strings.Builder
	for _, sk := range s.All() {
		fmt.Fprintf(&b, "skill %s hidden=%v folder=%s closure=%v missing=%v\n  %s\n", sk.URI, sk.Hidden, sk.Folder, sk.Closure, sk.Missing, sk.Entry())
		for _, f := range sk.Files {
			fmt.Fprintf(&b, "  file %s %d %s %s text=%v script=%v owner=%s\n", f.URI, f.Size, f.Digest, f.MIMEType, f.Text, f.Script != nil, f.Skill.URI)
		}
		for _, r := range sk.Risks {
			fmt.Fprintf(&b, "  risk %+v\n", r)
		}
	}
	for _, w := range s.Warnings() {
		fmt.Fprintf(&b, "warning %s %s\n", w.Reason, w)
	}
	st := s.Stats()
	for _, l := range st.Libraries {
		fmt.Fprintf(&b, "library %+v\n", l)
	}
	return b.String()
}

// RescanTrusting rescans libs as an incremental rescan after events that
// named no folder: every folder of prev (a snapshot Scan returned) is
// walked from its listing.
func RescanTrusting(ctx context.Context, libs []*Library, prev *Snapshot, opts *Options) (*Snapshot, error) {
	prev.scanned.proven.Store(true)
	snap, _, err := scan(ctx, libs, 2, opts, prev.scanned, true, func(*Library, string, bool) bool { return true })
	return snap, err
}
