//go:build !linux

package cli

// lowerPriority does nothing here: thread priorities are Linux's.
func lowerPriority() {}
