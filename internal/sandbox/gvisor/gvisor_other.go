//go:build !linux

package gvisor

import (
	"fmt"
	"runtime"
	"syscall"
)

// supported says why there is no gVisor sandbox here: Check and Run
// report it, so the backend is unavailable with the reason.
func supported() error {
	return fmt.Errorf("gVisor (runsc) needs Linux; this is %s: run the hub's jobs on a Linux host", runtime.GOOS)
}

// dieWithServer is never used where Run refuses.
func dieWithServer() *syscall.SysProcAttr { return nil }
