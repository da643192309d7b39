//go:build !unix

package regfile

// openFlags: opening a special file does not block where there are no
// FIFOs of the Unix kind; the fstat after it still refuses one.
const openFlags = 0
