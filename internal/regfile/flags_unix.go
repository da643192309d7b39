//go:build unix

package regfile

import "syscall"

// openFlags open a FIFO without waiting for a writer, and a terminal
// without making it the process's controlling terminal.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
