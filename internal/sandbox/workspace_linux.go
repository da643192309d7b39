package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MountWorkspace gives dir, an existing empty folder, a file system of its
// own with a hard size: a tmpfs of size bytes and at most files entries
// (files, folders and links), mode 0777, nosuid and nodev. Whatever the
// sandbox writes there (reserved blocks, sparse and unlinked-but-open
// files alike) counts, and a write past the size fails with ENOSPC inside
// the sandbox; nothing of it reaches the disk under dir. Its pages are
// memory, charged to the memory cgroup of the process that writes them
// (the sandbox's, for what the job writes). A sandbox backend binds the
// mount as it binds any folder. UnmountWorkspace removes it.
func MountWorkspace(dir string, size int64, files int) error {
	if size <= 0 || files <= 0 {
		return fmt.Errorf("sandbox: work folder %s: size %d and files %d must be positive", dir, size, files)
	}
	// The folder's own root counts as an inode.
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0777", size, files+1)
	if err := unix.Mount("skills-work", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		if errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%w (mounting %s: %v)", ErrNoWorkspace, dir, err)
		}
		return fmt.Errorf("sandbox: mounting the work folder %s: %w", dir, err)
	}
	return nil
}

// UnmountWorkspace unmounts every work-folder file system MountWorkspace
// put on dir (detached, so a process that still holds a file there keeps
// it until it lets go, but nothing new reaches it). A folder with none is
// left as it is; the folder itself is not removed.
func UnmountWorkspace(dir string) error {
	for range 8 {
		if !isMountPoint(dir) {
			return nil
		}
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("sandbox: unmounting the work folder %s: %w", dir, err)
		}
	}
	return fmt.Errorf("sandbox: %s is still a mount point after eight unmounts", dir)
}

// isMountPoint reports whether dir is the root of a file system of its own
// (its device differs from its parent's).
func isMountPoint(dir string) bool {
	var st, parent unix.Stat_t
	if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	if unix.Lstat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev || st.Ino == parent.Ino
}

// workspaceStat reads a work-folder file system's use: bytes used and
// entries (the root not counted); ok is false when dir is not one.
func workspaceStat(dir string) (used, free int64, files, freeFiles int64, ok bool) {
	if !isMountPoint(dir) {
		return 0, 0, 0, 0, false
	}
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) != nil || fs.Type != unix.TMPFS_MAGIC {
		return 0, 0, 0, 0, false
	}
	bs := int64(fs.Bsize)
	return (int64(fs.Blocks) - int64(fs.Bfree)) * bs, int64(fs.Bavail) * bs, int64(fs.Files) - int64(fs.Ffree) - 1, int64(fs.Ffree), true
}

// workspaceFull reports whether one of dirs is a work-folder file system
// with no room left for a byte or an entry.
func workspaceFull(dirs []string) bool {
	for _, d := range dirs {
		if _, free, _, freeFiles, ok := workspaceStat(d); ok && (free == 0 || freeFiles == 0) {
			return true
		}
	}
	return false
}

// WorkspaceSupported reports whether this process may mount work-folder
// file systems (it has CAP_SYS_ADMIN), for Enforced.
func WorkspaceSupported() bool {
	if os.Geteuid() != 0 {
		return false
	}
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_ADMIN) != 0
}
