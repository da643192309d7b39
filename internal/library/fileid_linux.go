package library

import (
	"fmt"
	"io/fs"
	"syscall"
	"time"
)

// fileID identifies a file's content without reading it: device, inode,
// size, and modification and change times. The change time cannot be set
// back by a user, so an edit that restores the modification time and size
// still changes the identity. It also returns the change time.
func fileID(fi fs.FileInfo) (string, time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", time.Time{}, false
	}
	id := fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
	return id, time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true // int32 fields on 32-bit systems
}
