package gvisor

import "syscall"

// supported is nil: runsc is a Linux program.
func supported() error { return nil }

// dieWithServer makes runsc run get SIGKILL when the server dies, so its
// container is not left without a supervisor (Running finds the rest by
// its cgroups).
func dieWithServer() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
