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

// NotifySynced makes w send on ch after each post-rescan Sync. Call it
// before Start.
func (w *Watcher) NotifySynced(ch chan<- struct{}) { w.synced = ch }
