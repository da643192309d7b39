// Package catalog turns libraries of Agent Skills into immutable snapshots:
// skill discovery, the file inventory of every skill, digests, warnings and
// the indexes the protocol surfaces need. Everything that serves reads a
// *Snapshot; a rescan builds a new one and swaps it into a Store.
//
// Reads are confined to their library: every file is reached through the
// library's fs.FS (an os.Root for directories), symlinks are never followed,
// and nothing outside a library root is ever opened.
package catalog

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/vault"
)

// Defaults for Options fields left zero.
const (
	DefaultDepth        = 8
	DefaultMaxFileBytes = 8 << 20
	// MaxSkillFiles and MaxSkillBytes are the SEP-2640 per-skill limits; a
	// skill over either is withheld unless Options.AllowOversize is set.
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
	// MaxSkillMDBytes bounds the SKILL.md we parse. A larger SKILL.md is
	// withheld: it cannot be a sensible instruction file and would be read
	// whole to parse it.
	MaxSkillMDBytes = 4 << 20
)

// Library is a named root of skills.
type Library struct {
	// Namespace prefixes every skill path ("" for a single un-namespaced
	// library).
	Namespace string
	// FS is the library content. Use os.Root.FS for directories so that no
	// read can leave the root; embedded libraries use an embed.FS.
	FS fs.FS
	// Origin says where the library comes from, for operators only (logs and
	// --stats): a directory path or "embedded example". It never reaches MCP
	// output.
	Origin string
	// Kind is "directory", "archive", "url" or "embedded".
	Kind string
	// Dir is the directory FS reads from, when it is one on disk; a
	// Watcher watches it. Empty for embedded libraries.
	Dir string
	// NoScripts withholds this library's scripts (see Options.NoScripts).
	NoScripts bool
	// Info describes the library to clients instead of its location.
	Info Info
	// Vault, if set, is the root of the library's vault, where playbooks
	// and value chains are read: the library itself, or a folder opened
	// with OpenDirectory that holds (or stands beside) its skills.
	Vault *Library
	// VaultSkills is the library's skills folder relative to Vault's root
	// when it lies inside it; the search for a value-chain file skips it.
	VaultSkills string
	// VaultProbe says that nothing at the fixed places of a vault showed
	// one: Vault is a vault only if vault.Probe finds a value-chains.md,
	// which the first scan checks (once, in the background).
	VaultProbe bool

	probeOnce sync.Once
	probed    bool

	tree  tree         // set by OpenDirectory on Linux
	close func() error // set by OpenDirectory
}

// Info is what clients are told about a library: never where it is.
type Info struct {
	Title    string            `json:"title,omitempty"`
	Source   string            `json:"source,omitempty"`
	Version  string            `json:"version,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// Digest is the sha256 of the archive a library was extracted from.
	Digest string `json:"digest,omitempty"`
}

// OpenDirectory opens the directory dir as a library. Every read stays
// below dir: through openat2 confined beneath the directory handle on
// Linux 5.6 and later, else through an os.Root. Close releases it.
func OpenDirectory(namespace, dir string) (*Library, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory")}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	lib := &Library{Namespace: namespace, FS: regfile.FS(root), Origin: dir, Kind: "directory", Dir: abs, close: root.Close}
	bt, err := openBeneathTree(abs)
	if err != nil {
		root.Close()
		return nil, err
	}
	if bt != nil {
		lib.tree = bt
		lib.close = func() error { return errors.Join(bt.close(), root.Close()) }
	}
	return lib, nil
}

// isVault reports whether the library's vault root holds a vault.
func (l *Library) isVault() bool {
	if l.Vault == nil {
		return false
	}
	if !l.VaultProbe {
		return true
	}
	l.probeOnce.Do(func() { l.probed = vault.Probe(l.Vault.FS, l.VaultSkills) })
	return l.probed
}

// Close releases a library opened with OpenDirectory. Snapshots that still
// hold its files can no longer read them.
func (l *Library) Close() error {
	if l.close == nil {
		return nil
	}
	return l.close()
}

// Options configures a scan. A nil *Options means defaults.
type Options struct {
	// Depth is how many directory levels below a library root are searched
	// for skills. If zero, DefaultDepth.
	Depth int
	// Exclude lists directory names never entered during discovery, on top
	// of the built-in tool folders.
	Exclude []string
	// MaxFileBytes is the largest file served; larger files are skipped with
	// a warning. If zero, DefaultMaxFileBytes.
	MaxFileBytes int64
	// AllowOversize serves skills over MaxSkillFiles or MaxSkillBytes.
	AllowOversize bool
	// Strict withholds a skill whose frontmatter name differs from its
	// folder instead of serving it under the frontmatter name.
	Strict bool
	// Workers bounds concurrent file reads. If zero, a value sized to the
	// machine.
	Workers int
	// Logger receives one line per warning. If nil, nothing is logged.
	Logger *slog.Logger
	// NoScripts withholds every executable from every manifest and read:
	// scripts by extension or shebang line and compiled programs by magic
	// bytes, as skill.SniffScript defines them. SKILL.md is always served.
	NoScripts bool
	// ExcludeTiers withholds skills whose frontmatter pricing-tier is listed
	// (case-insensitive); not even skills/get answers for them.
	ExcludeTiers []string
	// DevStatus, if non-empty, serves only skills whose frontmatter
	// dev-status is listed (case-insensitive); skills without the field
	// are served.
	DevStatus []string
	// DigestCache, if set, persists what scans learned across restarts, so
	// that a warm start of an unchanged library reads no file content.
	DigestCache *DigestCache
	// NoLint turns the risk linter off.
	NoLint bool
	// ShowDisabled lists skills with disable-model-invocation: true, which
	// are otherwise served but hidden from listings, search and tools.
	ShowDisabled bool
	// OnFolder, if set, is called for every folder a scan lists, just
	// before it is listed, from several goroutines; Watcher.Folder is
	// meant for it.
	OnFolder func(lib *Library, dir string)
	// NoPlaybooks and NoValueChains turn off the two kinds of vault
	// content (see Library.Vault).
	NoPlaybooks, NoValueChains bool
	// Previous, if set, is the snapshot this scan replaces: files whose
	// inode, size and timestamps are unchanged since it was built are not
	// read again.
	Previous *Snapshot
	// OnScanned, if set, is called at the end of every scan that completes,
	// with its duration; rescan is set when Previous was (metrics use it).
	OnScanned func(d time.Duration, rescan bool)
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Depth <= 0 {
		v.Depth = DefaultDepth
	}
	if v.MaxFileBytes <= 0 {
		v.MaxFileBytes = DefaultMaxFileBytes
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	return v
}

// Store holds the current snapshot. It is safe for concurrent use: readers
// call Snapshot and keep using what they got, however often Swap runs.
type Store struct {
	cur atomic.Pointer[Snapshot]
}

// NewStore returns a store serving s.
func NewStore(s *Snapshot) *Store {
	st := new(Store)
	st.Swap(s)
	return st
}

// NewPendingStore returns a store that serves an empty, pending catalog
// (Snapshot.Pending) until the first Swap, so that a server can answer
// before its first scan ends.
func NewPendingStore() *Store {
	st := new(Store)
	empty := &Snapshot{pending: true, searchReady: make(chan struct{})}
	empty.StartSearch()
	st.cur.Store(empty)
	return st
}

// Snapshot returns the current snapshot.
func (st *Store) Snapshot() *Snapshot { return st.cur.Load() }

// Swap installs s, starts its search index (updated from the replaced
// snapshot's when few skills changed), and returns the snapshot it
// replaced. Swaps are expected one at a time (a Reloader's).
func (st *Store) Swap(s *Snapshot) *Snapshot {
	s.startSearch(st.cur.Load())
	return st.cur.Swap(s)
}

// Install installs s as Swap does, but leaves its search index to the
// first search or to StartSearch: a server's first catalog is installed
// so, and its index loaded once the host has listed the catalog, rather
// than beside the listing.
func (st *Store) Install(s *Snapshot) *Snapshot { return st.cur.Swap(s) }
