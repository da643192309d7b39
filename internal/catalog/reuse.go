package catalog

import (
	"path"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// fileStat identifies a version of a file without reading it.
type fileStat struct {
	ok               bool // the file system gave us inode-level data
	dev, ino         uint64
	size             int64
	mtimeNs, ctimeNs int64
}

// racyWindow is how close to a scan a file may have changed and still have
// its digest reused. A file modified within this window of the scan that
// read it could have changed again in the same timestamp tick after it was
// read, so it is hashed again: coarse timestamps (1 s on some file
// systems, 2 s on FAT) would otherwise hide the edit.
const racyWindow = 2 * time.Second

// reuse returns what an earlier scan learned about f when the file is
// provably unchanged: same device, inode, size, mtime and ctime, and not
// modified within racyWindow of the moment it was hashed. The earlier scan
// is the previous one, or at start the persistent digest cache. The found
// returned is the earlier one, shared (never written again); anything
// else returns f, to be read.
func (w *walk) reuse(f *found) *found {
	if !f.stat.ok {
		return f
	}
	old := w.prior.files.find(f.name)
	if old == nil || old.err != nil || old.stat != f.stat || old.linted != !w.sc.opts.NoLint || old.name != f.name {
		return f
	}
	if old.md == nil && path.Base(f.name) == skillsext.SkillFile {
		return f // no parsed form to reuse: read it
	}
	// A write updates mtime; ctime equality above catches an mtime set back
	// by hand.
	if f.stat.mtimeNs >= old.hashedAt-int64(racyWindow) {
		return f
	}
	return old
}

// libKey identifies a library across rescans, whose Library values a config
// reload may replace.
func libKey(lib *Library) string {
	return lib.Kind + "\x00" + lib.Origin + "\x00" + lib.Namespace
}
