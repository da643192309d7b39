package catalog

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/skills-mcp/skills-mcp/internal/atomicfile"
	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// DigestCache persists, per directory library, what scans learned about
// each file: its identity (device, inode, size, mtime, ctime), digest, text
// or binary, archive and script sniffing, lint findings and, for SKILL.md,
// its parsed summary (not its body, which the catalog reads on demand). A
// warm start of an unchanged library then reads no file content but the
// SKILL.md bodies its search index needs.
//
// Each library's record is one file: a header, then the entries in batches,
// so that neither writing nor reading it holds a second copy of a large
// catalog in memory. It is written to a temporary file and renamed into
// place, so concurrent server processes sharing the folder
// never see a torn record; the last writer wins, and a reader of a stale
// record merely reads more files. Records are bounded (MaxDigestCacheFiles
// entries, MaxDigestCacheBytes on disk) and a damaged one is ignored.
//
// The cache folder is trusted like the rest of the user's cache: entries
// are reused only for files whose identity and timestamps match, and every
// byte served is still checked against its digest at read time.
type DigestCache struct {
	dir string
}

// Bounds of one library's record.
const (
	MaxDigestCacheFiles = 2_000_000
	MaxDigestCacheBytes = 512 << 20
)

// digestCacheVersion changes whenever the record format or what a scan
// computes per file changes (for example new lint rules), which
// invalidates every record.
const digestCacheVersion = "skills-mcp digest cache v5"

// cacheBatch is how many entries one gob value of a record holds.
const cacheBatch = 4096

// NewDigestCache returns a cache keeping its records in dir, created on
// first save.
func NewDigestCache(dir string) *DigestCache { return &DigestCache{dir: dir} }

// cacheHeader starts a record; Files entries follow, in batches of at most
// cacheBatch.
type cacheHeader struct {
	Version string
	Lint    string // the lint rule set, so that a new rule invalidates findings
	Files   int
}

type cacheFile struct {
	Name             string
	Dev, Ino         uint64
	Size             int64
	MtimeNs, CtimeNs int64
	HashedAt         int64
	Digest           string
	Text, Archive    bool
	Script           *skill.Script
	Findings         []lint.Finding
	Linted           bool
	MD               *cachedMD // SKILL.md only
}

// cachedMD is a parsed SKILL.md as the cache keeps it.
type cachedMD struct {
	Frontmatter       []byte
	Problems          []skill.Problem
	BodyOffset        int
	Name, Description string
	Category          string
	Tags, Setup       []string
	Chains            []string
	Stage             string
	Tier, DevStatus   string
	HasTier, HasDev   bool
	Disabled          bool
	Deps              skill.Dependencies
}

// lintFingerprint names the rule set findings were computed with.
func lintFingerprint() string {
	h := sha256.New()
	for _, r := range lint.Rules() {
		fmt.Fprintf(h, "%s\x00%s\x00%d\n", r.ID, r.Title, r.Severity)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func (c *DigestCache) path(lib *Library) string {
	sum := sha256.Sum256([]byte(libKey(lib)))
	return filepath.Join(c.dir, "digests", hex.EncodeToString(sum[:12])+".gob")
}

// load reads the records of the directory libraries among libs. A missing
// or damaged record gives an empty map for that library.
func (c *DigestCache) load(libs []*Library) map[string]map[string]*found {
	out := map[string]map[string]*found{}
	fp := lintFingerprint()
	for _, lib := range libs {
		if lib.Dir == "" {
			continue
		}
		files, err := c.read(c.path(lib), fp)
		if err != nil {
			continue
		}
		m := make(map[string]*found, len(files))
		for _, cf := range files {
			m[cf.Name] = &found{
				name: cf.Name, size: cf.Size,
				stat:   fileStat{ok: true, dev: cf.Dev, ino: cf.Ino, size: cf.Size, mtimeNs: cf.MtimeNs, ctimeNs: cf.CtimeNs},
				digest: cf.Digest, text: cf.Text, archive: cf.Archive, script: cf.Script,
				findings: cf.Findings, linted: cf.Linted, hashedAt: cf.HashedAt,
			}
			if c := cf.MD; c != nil {
				m[cf.Name].md = &skillMD{
					frontmatter: c.Frontmatter, problems: c.Problems, bodyOffset: c.BodyOffset,
					name: c.Name, description: c.Description, category: c.Category,
					tags: c.Tags, setup: c.Setup, chains: c.Chains, stage: c.Stage, tier: c.Tier, devStatus: c.DevStatus,
					hasTier: c.HasTier, hasDev: c.HasDev, disabled: c.Disabled, deps: c.Deps,
				}
			}
		}
		out[libKey(lib)] = m
	}
	return out
}

// read returns the entries of the record at p, if it was written by this
// version with the rule set fp.
func (c *DigestCache) read(p, fp string) ([]cacheFile, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := gob.NewDecoder(bufio.NewReader(io.LimitReader(f, MaxDigestCacheBytes)))
	var h cacheHeader
	if err := dec.Decode(&h); err != nil {
		return nil, err
	}
	if h.Version != digestCacheVersion || h.Lint != fp {
		return nil, errors.New("digest cache record of another version")
	}
	if h.Files < 0 || h.Files > MaxDigestCacheFiles {
		return nil, errors.New("digest cache record too large")
	}
	files := make([]cacheFile, 0, min(h.Files, cacheBatch))
	for len(files) < h.Files {
		var batch []cacheFile
		if err := dec.Decode(&batch); err != nil {
			return nil, err
		}
		if len(batch) == 0 || len(batch) > cacheBatch || len(files)+len(batch) > h.Files {
			return nil, errors.New("digest cache record damaged")
		}
		files = append(files, batch...)
	}
	return files, nil
}

// save writes the records of snap's directory libraries.
func (c *DigestCache) save(libs []*Library, snap *Snapshot) error {
	fp := lintFingerprint()
	var errs []error
	for _, lib := range libs {
		if lib.Dir == "" {
			continue
		}
		files := snap.reuse[libKey(lib)]
		if len(files) > MaxDigestCacheFiles {
			continue
		}
		entries := make([]cacheFile, 0, len(files))
		for _, f := range files {
			if !f.stat.ok || f.err != nil || (f.md != nil && f.md.err != nil) {
				continue // a SKILL.md that does not parse is read again, to report it
			}
			var md *cachedMD
			if m := f.md; m != nil {
				md = &cachedMD{
					Frontmatter: m.frontmatter, Problems: m.problems, BodyOffset: m.bodyOffset,
					Name: m.name, Description: m.description, Category: m.category,
					Tags: m.tags, Setup: m.setup, Chains: m.chains, Stage: m.stage, Tier: m.tier, DevStatus: m.devStatus,
					HasTier: m.hasTier, HasDev: m.hasDev, Disabled: m.disabled, Deps: m.deps,
				}
			}
			entries = append(entries, cacheFile{
				MD:   md,
				Name: f.name, Dev: f.stat.dev, Ino: f.stat.ino, Size: f.size,
				MtimeNs: f.stat.mtimeNs, CtimeNs: f.stat.ctimeNs, HashedAt: f.hashedAt,
				Digest: f.digest, Text: f.text, Archive: f.archive, Script: f.script,
				Findings: f.findings, Linted: f.linted,
			})
		}
		errs = append(errs, c.write(c.path(lib), fp, entries))
	}
	return errors.Join(errs...)
}

func (c *DigestCache) write(p, fp string, entries []cacheFile) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	// No fsync: the record is a cache. After a crash a torn record fails
	// to decode and is ignored, which costs one full read, while syncing
	// would cost a disk flush after every edit of a watched library.
	return atomicfile.Write(p, 0o600, false, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		enc := gob.NewEncoder(w)
		err := enc.Encode(cacheHeader{Version: digestCacheVersion, Lint: fp, Files: len(entries)})
		for i := 0; err == nil && i < len(entries); i += cacheBatch {
			err = enc.Encode(entries[i:min(i+cacheBatch, len(entries))])
		}
		if err != nil {
			return err
		}
		return w.Flush()
	})
}
