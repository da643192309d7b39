package catalog

import "slices"

// WatchedFolders returns the folders w watches, sorted.
func (w *Watcher) WatchedFolders() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for d := range w.watched {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
