// Package library materialises archive and URL libraries of Agent Skills as
// read-only directories that the catalog opens with os.OpenRoot.
//
// A zip library is extracted once into a cache keyed by the sha256 of the
// archive ([Cache.Extract]); a URL library is downloaded over https, verified
// against a pinned sha256 or a "<url>.sha256" sidecar, cached by digest and
// then extracted the same way ([Cache.Fetch]).
//
// # Hostile archives
//
// Every archive is treated as hostile. Before any byte is written, its
// central directory is parsed by this package (independently of archive/zip)
// and refused for: a missing, truncated or multi-disk end record; an entry
// count, declared size, declared total or declared compression ratio over
// [Limits]; names that are empty, absolute, carry a drive letter, a
// backslash, NUL or another control character, a "." or ".." segment, or are
// not UTF-8; symlink, device, fifo or socket entries; encrypted entries;
// methods other than Store and Deflate; duplicate names, including names
// equal under Unicode case folding and a file that is also a directory;
// local headers that disagree with the central
// directory; entries whose data overlaps (the non-recursive zip bomb) or lies
// outside the file; and any disagreement between this parse and archive/zip's.
//
// While extracting, into a temporary directory inside the cache, the inflated
// stream of every entry is counted against the per-entry and total budgets
// (declared sizes are never trusted) and its CRC-32 is checked at EOF.
// Entries are never unpacked themselves: an archive inside the archive is a
// file like any other, and the catalog withholds the one skill that bundles
// it, as it does in a folder, rather than the whole library being refused.
// Files are written 0644 and directories 0755 whatever the archive
// says. On any error the temporary directory is removed, so a failed
// extraction leaves nothing behind; on success it is renamed into place
// atomically, with an integrity record beside the tree.
//
// # Cache layout
//
//	<Dir>/<sha256>/tree/            the extracted archive (returned by Extract)
//	<Dir>/<sha256>/integrity.json   archive digest, and size + sha256 of every file
//	<Dir>/downloads/<sha256>.zip    downloaded archives, by digest
//	<Dir>/downloads/url-<key>.json  last digest fetched for an unpinned URL
//	<Dir>/.tmp-*, <Dir>/.trash-*    work in progress (removed when stale)
//
// A cached extraction is verified against its integrity record (every file
// re-hashed) the first time a [Cache] uses it; a tree that fails is
// extracted again. The record detects corruption, partial writes after a
// crash and casual edits; it is no defence against someone who can write the
// cache directory, which is created 0700.
//
// # Sharing the cache between processes
//
// Several processes may share one cache directory. Extractions are renamed
// into place atomically, and a process that loses the race verifies and uses
// the winner's copy. Every process holds a shared lock (flock) on each
// extraction it uses; [Cache.Prune] removes an extraction only when it can
// take the lock exclusively, so an extraction in use by another process is
// never removed. On systems without flock, Prune never removes anything.
package library
