//go:build !linux

package catalog

import "io"

// beneathTree exists on Linux only; elsewhere libraries are read through
// os.Root.
type beneathTree struct{}

func openBeneathTree(string) (*beneathTree, error)      { return nil, nil }
func (*beneathTree) readDir(string) ([]entry, error)    { panic("unreachable") }
func (*beneathTree) open(string) (io.ReadCloser, error) { panic("unreachable") }
func (*beneathTree) close() error                       { return nil }
