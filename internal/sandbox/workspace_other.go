//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// MountWorkspace refuses: a work folder with a hard size is a Linux tmpfs.
// The error matches ErrNoWorkspace, so the folder is measured instead.
func MountWorkspace(dir string, size int64, files int) error {
	return fmt.Errorf("%w (this is %s)", ErrNoWorkspace, runtime.GOOS)
}

// UnmountWorkspace has nothing to undo where MountWorkspace mounts nothing.
func UnmountWorkspace(dir string) error { return nil }

// WorkspaceSupported is false: work folders are measured, not mounted.
func WorkspaceSupported() bool { return false }

func workspaceStat(dir string) (used, free int64, files, freeFiles int64, ok bool) {
	return 0, 0, 0, 0, false
}

func workspaceFull(dirs []string) bool { return false }
