//go:build !linux

package catalog

import (
	"io"
	"io/fs"
)

// statOf gives no identity here, so nothing is reused across scans.
func statOf(fs.FileInfo) fileStat { return fileStat{} }

// beneathTree exists on Linux only; elsewhere libraries are read through
// os.Root.
type beneathTree struct{}

func openBeneathTree(string) (*beneathTree, error)      { return nil, nil }
func (*beneathTree) readDir(string) ([]entry, error)    { panic("unreachable") }
func (*beneathTree) open(string) (io.ReadCloser, error) { panic("unreachable") }
func (*beneathTree) readLink(string) (string, error)    { panic("unreachable") }
func (*beneathTree) close() error                       { return nil }
