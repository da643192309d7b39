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
	"io/fs"
	"log/slog"
	"sync/atomic"
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
	// Kind is "directory" or "embedded".
	Kind string
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
	st.cur.Store(s)
	return st
}

// Snapshot returns the current snapshot.
func (st *Store) Snapshot() *Snapshot { return st.cur.Load() }

// Swap installs s and returns the snapshot it replaced.
func (st *Store) Swap(s *Snapshot) *Snapshot { return st.cur.Swap(s) }
