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

// ValidUTF8Chunks runs the chunked UTF-8 check over chunks.
func ValidUTF8Chunks(chunks [][]byte) bool {
	var u utf8Checker
	for _, c := range chunks {
		u.write(c)
	}
	return u.valid()
}
