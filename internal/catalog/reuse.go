package catalog

import (
	"io/fs"
	"syscall"
	"time"
)

// fileStat identifies a version of a file without reading it.
type fileStat struct {
	ok               bool // the file system gave us inode-level data
	dev, ino         uint64
	size             int64
	mtimeNs, ctimeNs int64
}

func statOf(info fs.FileInfo) fileStat {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}
	}
	return fileStat{
		ok: true, dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano(),
	}
}

// racyWindow is how close to a scan a file may have changed and still have
// its digest reused. A file modified within this window of the scan that
// read it could have changed again in the same timestamp tick after it was
// read, so it is hashed again: coarse timestamps (1 s on some file
// systems, 2 s on FAT) would otherwise hide the edit.
const racyWindow = 2 * time.Second

// reuse copies what the previous scan learned about f when the file is
// provably unchanged: same device, inode, size, mtime and ctime, and not
// modified within racyWindow of the previous scan. Anything else is read
// again.
func (sc *scanner) reuse(lib *Library, f *found) {
	if sc.prev == nil || !f.stat.ok {
		return
	}
	old, ok := sc.prev.reuse[libKey(lib)][f.name]
	if !ok || old.err != nil || old.stat != f.stat || old.linted != !sc.opts.NoLint {
		return
	}
	// A write updates mtime; ctime equality above catches an mtime set back
	// by hand.
	if f.stat.mtimeNs >= sc.prev.ScannedAt.Add(-racyWindow).UnixNano() {
		return
	}
	f.digest, f.text, f.archive, f.script = old.digest, old.text, old.archive, old.script
	f.md, f.findings, f.linted = old.md, old.findings, old.linted
	f.reused = true
}

// libKey identifies a library across rescans, whose Library values a config
// reload may replace.
func libKey(lib *Library) string {
	return lib.Kind + "\x00" + lib.Origin + "\x00" + lib.Namespace
}
