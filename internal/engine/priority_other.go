//go:build !linux

package engine

// lowerPriority does nothing here: thread priorities are Linux's.
func lowerPriority() {}
