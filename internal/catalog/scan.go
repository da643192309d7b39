package catalog

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// maxWalkDepth bounds recursion below a library root, whatever the
// discovery depth: deeper trees are reported, not walked, so a hostile tree
// cannot exhaust the stack.
const maxWalkDepth = 64

// Scan walks the libraries and returns a new snapshot with generation gen.
// It fails only when ctx is cancelled: every problem with the content is a
// warning, and a library whose every skill is broken serves nothing.
//
// The snapshot keeps what the scan learned for a later Scan given it as
// Options.Previous, and for Unchanged and Watcher.Sync; a Reloader keeps
// that of its own rescans itself, and their snapshots hold none.
func Scan(ctx context.Context, libs []*Library, gen uint64, opts *Options) (*Snapshot, error) {
	var prev *scanState
	rescan := opts != nil && opts.Previous != nil
	if rescan {
		prev = opts.Previous.scanned
	}
	snap, st, err := scan(ctx, libs, gen, opts, prev, rescan, nil)
	if err != nil {
		return nil, err
	}
	snap.scanned = st // before the snapshot is returned, so never written after
	return snap, nil
}

// scan walks libs, reusing what prev learned (nil: nothing, or at start
// the digest cache), and returns the snapshot and the state the next scan
// starts from. trust, if set, names the folders walked from prev's
// listings rather than listed again (an incremental rescan); it is ignored
// unless prev's listings can be trusted and were walked from the same
// libraries with the same options.
func scan(ctx context.Context, libs []*Library, gen uint64, opts *Options, prev *scanState, rescan bool, trust trustFunc) (*Snapshot, *scanState, error) {
	o := opts.withDefaults()
	start := time.Now()
	key := walkKey(&o)
	if trust != nil && (prev == nil || !prev.trustworthy() || !sameLibs(prev.libs, libs) || prev.optsKey != key) {
		trust = nil
	}
	sc := &scanner{opts: o, exclude: map[string]bool{}, start: start, prev: prev, trust: trust}
	if trust != nil {
		sc.lateOK = prev.proven.Load()
	}
	for _, e := range o.Exclude {
		sc.exclude[e] = true
	}
	if o.DigestCache != nil {
		sc.keepListings = true
		if prev == nil {
			sc.cached = o.DigestCache.load(libs)
		}
	}
	// Readers start first and take files as the walk finds them, so that
	// walking (one core) and reading (the others) overlap.
	done := sc.startReaders(ctx)
	for _, lib := range libs {
		if lib.VaultProbe && !(o.NoPlaybooks && o.NoValueChains) {
			go lib.isVault() // the probe runs beside the walk; buildVaults waits for it
		}
	}
	for li, lib := range libs {
		w := &walk{sc: sc, lib: lib, tree: treeOf(lib), libIndex: li, prior: sc.priorOf(lib)}
		w.listings = newTableBuilder(cmp.Or(w.prior.dirs, w.prior.records))
		w.visitRoot()
		sc.walks = append(sc.walks, w)
	}
	if err := done(); err != nil {
		return nil, nil, err
	}
	snap, st := sc.build()
	st.libs, st.optsKey, st.first, st.watched = libs, key, !rescan, o.OnFolder != nil
	st.listed = snap.foldersListed
	snap.libs = libs
	snap.cache, snap.log = o.DigestCache, o.Logger
	snap.buildVaults(libs, o, st)
	// Saved when it learned something: a file read, or at start a folder
	// the cache did not know as it is. Not after an incremental rescan:
	// writing the record is a pass over the library, on every edit, and
	// what it would add is a few files a start reads again; the next full
	// scan saves it.
	learned := snap.reads > 0 || (!rescan && snap.relisted > 0) || (prev != nil && prev.unsaved)
	if o.DigestCache != nil && learned && trust != nil {
		st.unsaved = true
	} else if o.DigestCache != nil && learned {
		if err := o.DigestCache.save(libs, st); err != nil {
			o.Logger.Warn("digest cache not saved; the next start reads every file", "err", err)
		}
	}
	// The skills hold their bodies until their search index is built; what
	// the next scan reuses does not need them. Only files read by this
	// scan hold one: the others are shared with earlier states.
	for _, w := range sc.walks {
		for _, f := range w.files {
			if f.md != nil && sc.readHere(f) {
				f.md.body = ""
			}
		}
	}
	snap.Generation = gen
	snap.ScannedAt = start
	snap.ScanDuration = time.Since(start)
	if o.OnScanned != nil {
		o.OnScanned(snap.ScanDuration, rescan)
	}
	for _, w := range snap.warnings {
		o.Logger.Warn(w.Message, "library", w.Library, "path", w.Path, "reason", w.Reason)
	}
	return snap, st, nil
}

// readHere reports whether f was read by this scan, rather than reused
// from an earlier one (whose found values are shared, and never written).
func (sc *scanner) readHere(f *found) bool { return f.hashedAt == sc.start.UnixNano() }

type scanner struct {
	opts    Options
	exclude map[string]bool
	walks   []*walk
	start   time.Time
	// prev is what the previous scan learned, if any; trust, if set, says
	// which of its folder listings to walk without listing the folder.
	prev   *scanState
	trust  trustFunc
	lateOK bool // prev was proven (see trustFunc)
	// cached is what the persistent digest cache knew at start, per library.
	cached map[string]cachedLib
	// keepListings says to record each folder's listing, for the digest
	// cache.
	keepListings bool
	// read hands a file to the readers; set by startReaders. Only the
	// walking goroutine calls it.
	read      func(*found, tree)
	cancelled atomic.Bool
}

// found is a file discovered inside at least one skill folder. Scan states
// keep one per file for the next scan, and share it with later states
// while the file is unchanged, so it is never written once its scan ends;
// its flags sit together: 152 bytes, where interleaved they took 176.
type found struct {
	name string // below the library root
	size int64
	stat fileStat
	// Filled by readAll, or copied from the previous scan when the file is
	// unchanged.
	digest   Digest
	script   *skill.Script
	findings []lint.Finding // paths relative to the library root
	hashedAt int64          // UnixNano of the scan that read the file
	md       *skillMD       // SKILL.md only
	err      error
	text     bool
	archive  bool
	linted   bool
}

// rawSkill is a folder holding a SKILL.md.
type rawSkill struct {
	folder     string // below the library root, "." for the root
	depth      int
	start, end int // range of walk.files: the folder's subtree in DFS order
	skipped    map[string][]string
	findings   []lint.Finding // about the folder itself (symlinks), paths relative to it
}

type walk struct {
	sc       *scanner
	lib      *Library
	tree     tree
	libIndex int
	files    []*found
	skills   []*rawSkill
	warnings []Warning
	dirs     []string // every folder walked, for watchers
	reads    int      // files read (the rest were reused)
	stats    struct{ scriptsWithheld int }
	// listings are the listings of the folders walked, for the next scan
	// and the digest cache: one builder for the library, shared with the
	// walks visitRoot fans out to.
	listings *tableBuilder
	// foldersListed counts the folders listed from the file system, rather
	// than walked from a listing; relisted those among them whose listing
	// the digest cache can keep.
	foldersListed, relisted int
	// fanout, while the root is walked, takes its subfolders to walk them
	// concurrently.
	fanout func(dir string)
	prior  prior
}

// prior is what an earlier scan knew of one library: the previous scan's
// files and listings, or at start the digest cache's.
type prior struct {
	files   *fileIndex
	dirs    *folderTable // the previous scan's
	records *folderTable // the digest cache's, checked against the folder
}

func (sc *scanner) priorOf(lib *Library) prior {
	key := libKey(lib)
	if sc.prev != nil {
		return prior{files: sc.prev.files[key], dirs: sc.prev.dirs[key]}
	}
	if sc.cached != nil {
		c := sc.cached[key]
		return prior{files: c.files, records: c.dirs}
	}
	return prior{}
}

// visitRoot walks the library. The subfolders of a root that is not itself
// a skill are walked concurrently, each into a walk of its own, and merged
// in order: listing folders and statting files is most of a scan once
// digests are cached.
func (w *walk) visitRoot() {
	var subs []*walk
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	w.fanout = func(dir string) {
		sub := &walk{sc: w.sc, lib: w.lib, tree: w.tree, libIndex: w.libIndex, prior: w.prior, listings: w.listings}
		subs = append(subs, sub)
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			sub.visit(dir, 1, nil)
		})
	}
	w.visit(".", 0, nil)
	w.fanout = nil
	wg.Wait()
	for _, sub := range subs {
		offset := len(w.files)
		w.files = append(w.files, sub.files...)
		for _, rs := range sub.skills {
			rs.start += offset
			rs.end += offset
			w.skills = append(w.skills, rs)
		}
		w.warnings = append(w.warnings, sub.warnings...)
		w.dirs = append(w.dirs, sub.dirs...)
		w.foldersListed += sub.foldersListed
		w.relisted += sub.relisted
		w.reads += sub.reads
	}
}

func (w *walk) warn(p, reason, format string, args ...any) {
	w.warnings = append(w.warnings, Warning{Library: w.lib.Namespace, Path: p, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// skip records a file of a skill that is not served, by cause, for one
// warning per skill.
func (s *rawSkill) skip(cause, name string) {
	if s.skipped == nil {
		s.skipped = map[string][]string{}
	}
	s.skipped[cause] = append(s.skipped[cause], name)
}

// visit walks dir (below the library root) depth-first. enclosing holds the
// skills whose folders contain dir, outermost first.
func (w *walk) visit(dir string, depth int, enclosing []*rawSkill) {
	// Trusted as the previous scan listed it only if watched since before
	// that listing, with no event since: asked before OnFolder watches it.
	trusted := w.sc.trust != nil && w.sc.trust(w.lib, dir, w.sc.lateOK)
	// Watched before it is listed: an edit from here on raises an event,
	// and one before is in the listing.
	if w.sc.opts.OnFolder != nil {
		w.sc.opts.OnFolder(w.lib, dir)
	}
	entries, err := w.readDir(dir, trusted)
	w.dirs = append(w.dirs, dir)
	if err != nil {
		w.warn(dir, "unreadable", "cannot read folder: %v", unwrapPath(err))
		return
	}
	if depth <= w.sc.opts.Depth {
		for _, e := range entries {
			if e.name != skillsext.SkillFile {
				continue
			}
			if e.typ.IsRegular() {
				s := &rawSkill{folder: dir, depth: depth, start: len(w.files)}
				enclosing = append(slices.Clip(enclosing), s)
				w.skills = append(w.skills, s)
				defer func() { s.end = len(w.files) }()
			} else {
				w.warn(path.Join(dir, e.name), "special-file", "SKILL.md is not a regular file (symlink or special file); folder not served as a skill")
			}
			break
		}
	}
	var inner *rawSkill
	if len(enclosing) > 0 {
		inner = enclosing[len(enclosing)-1]
	}
	for _, e := range entries {
		name := e.name
		p := path.Join(dir, name)
		rel := func() string { return relTo(inner.folder, p) }
		t := e.typ
		switch {
		case t&fs.ModeSymlink != 0:
			if inner != nil {
				inner.skip("symlink", rel())
				if !w.sc.opts.NoLint {
					if target, err := w.tree.readLink(p); err == nil {
						if f := lint.Symlink(rel(), target); f != nil {
							inner.findings = append(inner.findings, *f)
						}
					}
				}
			}
			w.warn(p, "symlink", "symlink not followed and not served")
		case t.IsDir():
			if skill.IsToolFolder(name) || w.sc.exclude[name] {
				continue
			}
			if inner != nil && strings.HasPrefix(name, ".") {
				inner.skip("dotfile", rel()+"/")
				continue
			}
			if inner == nil && depth+1 > w.sc.opts.Depth {
				continue // no skill can be found below the discovery depth
			}
			if err := skillsext.CheckName(name); err != nil {
				// No URI could name what is below it (see withheldName).
				if inner != nil {
					inner.skip(withheldName(err), quoteName(rel())+"/")
				} else {
					w.warn(p, "name", "folder %v; not walked: no skill below it could be served under a URI", err)
				}
				continue
			}
			if depth+1 > maxWalkDepth {
				w.warn(p, "depth", "folder is nested deeper than %d levels; not walked", maxWalkDepth)
				continue
			}
			if w.fanout != nil && inner == nil {
				w.fanout(p)
				continue
			}
			w.visit(p, depth+1, enclosing)
		case t.IsRegular():
			if inner == nil {
				continue // files outside skills are never served
			}
			if skill.IsBuildArtefact(name) { // silently not served
				continue
			}
			if strings.HasPrefix(name, ".") {
				inner.skip("dotfile", rel())
				continue
			}
			if err := skillsext.CheckName(name); err != nil {
				inner.skip(withheldName(err), quoteName(rel()))
				continue
			}
			if e.unknown {
				if f := w.prior.files.find(p); f != nil {
					e.size, e.stat, e.unknown = f.size, f.stat, false
				} else {
					e = w.statEntry(p, e)
				}
			}
			if e.err != nil {
				inner.skip("unreadable", rel())
				continue
			}
			if e.size > w.sc.opts.MaxFileBytes {
				inner.skip("over SKILLS_MAX_FILE_BYTES", rel())
				continue
			}
			f := w.reuse(&found{name: p, size: e.size, stat: e.stat, hashedAt: w.sc.start.UnixNano()})
			w.files = append(w.files, f)
			if w.sc.readHere(f) {
				w.reads++
				w.sc.read(f, w.tree)
			}
		default:
			if inner != nil {
				inner.skip("special file", rel())
			}
		}
	}
}

// withheldName is the skip cause of a file or folder whose name
// skillsext.CheckName refuses. Such a name would be listed under a URI
// that ParseURI, and so every reader of ours (pull, check, this server's
// own reads), refuses, or would show a reader something it is not; the
// rule is skillsext's, so that listing and parsing agree.
func withheldName(err error) string {
	if ne, ok := err.(*skillsext.NameError); ok {
		return "name " + ne.Rule
	}
	return err.Error()
}

// quoteName returns a path for a warning about its name: quoted, in ASCII,
// so that a control or bidirectional character shows as an escape.
func quoteName(p string) string { return strconv.QuoteToASCII(p) }

// relTo returns p relative to the folder dir (both below the library root).
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

// unwrapPath drops the path from a *fs.PathError so that messages carry the
// cause once; the warning already names the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readAll reads every discovered file exactly once, on a worker pool: one
// read feeds the digest, the UTF-8 check, archive sniffing and, for SKILL.md,
// the parser.
func (sc *scanner) startReaders(ctx context.Context) (wait func() error) {
	workers := sc.opts.Workers
	if workers <= 0 {
		workers = max(4, 2*runtime.GOMAXPROCS(0))
	}
	jobs := make(chan readJob, 256)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 0, 64<<10)
			for j := range jobs {
				r, err := j.t.open(j.f.name)
				if err != nil {
					j.f.err = unwrapPath(err)
					continue
				}
				buf = readOne(r, j.f, buf, !sc.opts.NoLint)
				r.Close()
			}
		})
	}
	sc.read = func(f *found, t tree) {
		if sc.cancelled.Load() {
			return
		}
		select {
		case jobs <- readJob{f, t}:
		case <-ctx.Done():
			sc.cancelled.Store(true)
		}
	}
	return func() error {
		close(jobs)
		wg.Wait()
		return ctx.Err()
	}
}

type readJob struct {
	f *found
	t tree
}

// readOne reads one open file whole, once, and feeds the bytes to
// everything that needs them: the digest, the UTF-8 check, archive and
// script sniffing, the risk linter and, for a SKILL.md, the parser. buf is
// the worker's reusable buffer; it is returned, grown if the file needed
// more room (up to maxReuse).
func readOne(r io.Reader, f *found, buf []byte, lintFiles bool) []byte {
	isSkillMD := path.Base(f.name) == skillsext.SkillFile
	if isSkillMD && f.size > MaxSkillMDBytes {
		f.err = fmt.Errorf("SKILL.md is %d bytes, over the %d-byte limit", f.size, MaxSkillMDBytes)
		return buf
	}
	// Read one byte more than the walk saw, to notice growth.
	need := int(f.size) + 1
	data := buf[:0]
	if cap(buf) < need {
		data = make([]byte, 0, need)
		if need <= maxReuse {
			buf = data
		}
	}
	n, err := io.ReadFull(r, data[:need])
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		// Fewer bytes than room: expected, the file ended.
	case err != nil:
		f.err = err
		return buf
	}
	if int64(n) != f.size {
		f.err = fmt.Errorf("file changed size while being read (%d, then at least %d bytes)", f.size, n)
		return buf
	}
	data = data[:n]
	f.digest = sha256.Sum256(data)
	f.text = utf8.Valid(data)
	// The whole file: an office document is a zip told from an archive by
	// its entries.
	_, f.archive = skill.SniffArchive(f.name, data)
	if sc, ok := skill.SniffScript(f.name, data); ok {
		f.script = &sc
	}
	f.linted = lintFiles
	if lintFiles {
		f.findings = lint.File(f.name, data)
	}
	if isSkillMD {
		// Parse here, on the worker pool, rather than in the sequential
		// build. parseSkillMD copies what it keeps: data is reused.
		f.md = parseSkillMD(data)
	}
	return buf
}

// maxReuse bounds the read buffer a worker keeps between files; a larger
// file gets a buffer of its own, dropped after it.
const maxReuse = 1 << 20

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// build turns the walks into a snapshot: it parses and validates each
// skill, applies the limits, resolves URI collisions and builds the indexes.
func (sc *scanner) build() (*Snapshot, *scanState) {
	snap := &Snapshot{byURI: map[string]*Skill{}}
	st := &scanState{
		files:  map[string]*fileIndex{},
		dirs:   map[string]*folderTable{},
		walked: map[*Library][]string{},
	}
	claimed := map[string]string{} // skill URI → "namespace:folder" that claimed it
	for _, w := range sc.walks {
		st.walked[w.lib] = w.dirs
		for _, f := range w.files {
			if f.err != nil || !f.stat.ok {
				st.unprovable = true
			}
		}
		snap.foldersListed += w.foldersListed
		snap.relisted += w.relisted
		snap.reads += w.reads
		st.dirs[libKey(w.lib)] = w.listings.build()
		stats := LibraryStats{Namespace: w.lib.Namespace, Kind: w.lib.Kind, Origin: w.lib.Origin, Info: w.lib.Info}
		for _, rs := range w.skills {
			sk := w.makeSkill(rs)
			if sk == nil {
				stats.Withheld++
				continue
			}
			owner := w.lib.Namespace + ":" + rs.folder
			if prev, ok := claimed[sk.URI]; ok {
				stats.Withheld++
				w.warn(rs.folder, "duplicate-uri", "skill would be served at %s, which folder %s already claims; not served", sk.URI, strings.SplitN(prev, ":", 2)[1])
				continue
			}
			claimed[sk.URI] = owner
			snap.byURI[sk.URI] = sk
			snap.all = append(snap.all, sk)
			if sk.Hidden {
				stats.Hidden++
			} else {
				stats.Skills++
			}
			stats.Files += len(sk.Files)
			stats.Bytes += sk.Bytes
		}
		// After makeSkill, which gives served files names that share their
		// URI's bytes.
		ok := 0
		for _, f := range w.files {
			if f.err == nil {
				ok++
			}
		}
		reuse := make([]*found, 0, ok)
		for _, f := range w.files {
			if f.err == nil {
				reuse = append(reuse, f)
			}
		}
		st.files[libKey(w.lib)] = newFileIndex(reuse)
		stats.ScriptsWithheld = w.stats.scriptsWithheld
		snap.libraries = append(snap.libraries, stats)
		snap.warnings = append(snap.warnings, w.warnings...)
	}
	slices.SortFunc(snap.all, func(a, b *Skill) int { return cmp.Compare(a.URI, b.URI) })
	snap.indexFiles()
	for _, sk := range snap.all {
		if !sk.Hidden {
			snap.skills = append(snap.skills, sk)
		}
	}
	snap.indexNames()
	snap.searchReady = make(chan struct{})
	snap.warnings = append(snap.warnings, snap.resolveDependencies()...)
	return snap, st
}

// makeSkill validates one discovered skill; it returns nil, with a warning,
// when the skill must be withheld.
func (w *walk) makeSkill(rs *rawSkill) *Skill {
	o := w.sc.opts
	mdName := path.Join(rs.folder, skillsext.SkillFile)
	files := w.files[rs.start:rs.end]
	var md *found
	for _, f := range files {
		if f.name == mdName {
			md = f
			break
		}
	}
	if md == nil || md.err != nil {
		cause := "it is over SKILLS_MAX_FILE_BYTES"
		if md != nil {
			cause = md.err.Error()
		}
		w.warn(mdName, "unreadable", "SKILL.md cannot be read (%s); skill not served", cause)
		return nil
	}
	if md.size > MaxSkillMDBytes {
		w.warn(mdName, "oversize", "SKILL.md is %d bytes, over the %d-byte limit for a skill file; skill not served", md.size, MaxSkillMDBytes)
		return nil
	}
	m := md.md
	if m.err != nil {
		w.warn(mdName, "frontmatter", "frontmatter cannot be parsed (F2: %v); skill not served", m.err)
		return nil
	}
	for _, p := range m.problems {
		if p.Fatal {
			w.warn(mdName, "frontmatter", "%s (%s); skill not served", p.Message, p.Rule)
			return nil
		}
	}
	for _, p := range m.problems {
		w.warn(mdName, "frontmatter", "%s (%s); served anyway", p.Message, p.Rule)
	}
	name := m.name
	folderName := path.Base(rs.folder)
	parent := path.Dir(rs.folder)
	if rs.folder == "." {
		// The library root is itself a skill: its path is just its name.
		folderName, parent = name, "."
	}
	if name != folderName {
		if o.Strict {
			w.warn(mdName, "name-mismatch", "frontmatter name %q differs from folder %q (F8); skill not served (--strict)", name, folderName)
			return nil
		}
		w.warn(mdName, "name-mismatch", "frontmatter name %q differs from folder %q (F8); served under its frontmatter name", name, folderName)
	}
	sk := &Skill{
		Library:      w.lib.Namespace,
		Path:         skillPathJoin(w.lib.Namespace, parent, name),
		Folder:       rs.folder,
		Name:         name,
		Description:  m.description,
		Frontmatter:  m.frontmatter,
		bodyOffset:   int32(m.bodyOffset), // under MaxSkillMDBytes, checked above
		Category:     category(m.category, parent),
		Tags:         m.tags,
		Setup:        m.setup,
		ValueChains:  m.chains,
		ChainStage:   m.stage,
		Dependencies: m.deps,
	}
	if m.hasTier && containsFold(o.ExcludeTiers, m.tier) {
		w.warn(rs.folder, "tier-excluded", "pricing-tier %q is excluded (--exclude-tiers); skill not served", m.tier)
		return nil
	}
	if m.hasDev && len(o.DevStatus) > 0 && !containsFold(o.DevStatus, m.devStatus) {
		w.warn(rs.folder, "dev-status-excluded", "dev-status %q is not among %s (--dev-status); skill not served", m.devStatus, strings.Join(o.DevStatus, ", "))
		return nil
	}
	if m.disabled && !o.ShowDisabled {
		sk.Hidden = true
	}
	noScripts := o.NoScripts || w.lib.NoScripts
	var scriptsWithheld int
	if sk.Path == sk.Folder {
		sk.Path = sk.Folder // one copy of the bytes, as for file names below
	}
	sk.URI = skillsext.SkillURI(sk.Path)
	if len(sk.URI) > skillsext.MaxURILength {
		// ParseURI refuses it: no client could ask for the skill.
		w.warn(mdName, "name", "the skill's URI is %d bytes once escaped, over the %d-byte limit of a URI; skill not served", len(sk.URI), skillsext.MaxURILength)
		return nil
	}
	sk.tree = w.tree

	sk.Risks = append(sk.Risks, rs.findings...)
	var archives []string
	for _, f := range files {
		rel := relTo(rs.folder, f.name)
		if errors.Is(f.err, regfile.ErrNotRegular) {
			rs.skip("special file", rel) // swapped in since the listing
			continue
		}
		if f.err != nil {
			rs.skip("unreadable", rel)
			continue
		}
		if f.archive {
			archives = append(archives, rel)
			continue
		}
		if noScripts && f.script != nil && f.name != mdName {
			scriptsWithheld++
			continue
		}
		for _, fd := range f.findings {
			fd.Path = rel
			sk.Risks = append(sk.Risks, fd)
		}
		uri := sk.URI // the SKILL.md's, already made
		if f.name != mdName {
			uri = skillsext.FileURI(sk.Path, rel)
			if len(uri) > skillsext.MaxURILength {
				rs.skip(fmt.Sprintf("URI over %d bytes once escaped", skillsext.MaxURILength), rel)
				continue
			}
		}
		if tail := len(uri) - len(f.name); w.sc.readHere(f) && tail > 0 && uri[tail-1] == '/' && uri[tail:] == f.name {
			// The name below the library root is most often the URI's
			// tail: keep one copy of the bytes, not two (in a found this
			// scan made: the others are shared, and already share them).
			f.name = uri[tail:]
		}
		file := &File{
			URI:      uri,
			Size:     f.size,
			Digest:   f.digest,
			MIMEType: mimeType(f.name, f.text),
			Text:     f.text,
			Script:   f.script,
			Skill:    sk,
			name:     f.name,
		}
		file.plain = isPlainJSON(file.URI)
		if f.name == mdName {
			sk.md = file
		}
		sk.Files = append(sk.Files, file)
		sk.Bytes += f.size
	}
	if scriptsWithheld > 0 {
		w.stats.scriptsWithheld += scriptsWithheld
	}
	if len(rs.skipped) > 0 {
		w.warn(rs.folder, "skipped-files", "%s", skippedMessage(rs.skipped))
	}
	if len(archives) > 0 {
		w.warn(rs.folder, "archive", "bundles archive file(s) (%s); skills may not contain archives, skill not served", firstN(archives, 3))
		return nil
	}
	if !o.AllowOversize && (len(sk.Files) > MaxSkillFiles || sk.Bytes > MaxSkillBytes) {
		w.warn(rs.folder, "oversize", "%d files, %d bytes exceeds the SEP-2640 limit of %d files or %d bytes per skill; skill not served (--allow-oversize serves it)", len(sk.Files), sk.Bytes, MaxSkillFiles, MaxSkillBytes)
		return nil
	}
	slices.SortFunc(sk.Files, func(a, b *File) int { return cmp.Compare(a.URI, b.URI) })
	if m.body != "" {
		body := m.body
		sk.body.Store(&body)
	}
	return sk
}

// category is the frontmatter category, else the folder path between the
// library root and the skill folder, else "uncategorized".
func category(fromFrontmatter, parent string) string {
	if fromFrontmatter != "" {
		return fromFrontmatter
	}
	if parent != "." && parent != "" {
		return parent
	}
	return "uncategorized"
}

func containsFold(list []string, s string) bool {
	s = strings.TrimSpace(s)
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), s) {
			return true
		}
	}
	return false
}

func skippedMessage(skipped map[string][]string) string {
	causes := make([]string, 0, len(skipped))
	total := 0
	for c, names := range skipped {
		total += len(names)
		causes = append(causes, fmt.Sprintf("%d %s: %s", len(names), c, firstN(names, 3)))
	}
	slices.Sort(causes)
	return fmt.Sprintf("%d file(s) not served (%s)", total, strings.Join(causes, "; "))
}

func firstN(names []string, n int) string {
	s := strings.Join(names[:min(n, len(names))], ", ")
	if len(names) > n {
		s += fmt.Sprintf(", and %d more", len(names)-n)
	}
	return s
}

// indexFiles sorts every served file by URI. A URI that nested skills
// share (the inner skill's files are in the outer manifest too) is owned
// by the innermost skill. Directories are not stored: Directory derives
// them from this order.
func (snap *Snapshot) indexFiles() {
	n := 0
	for _, sk := range snap.all {
		n += len(sk.Files)
	}
	files := make([]*File, 0, n)
	for _, sk := range snap.all {
		files = append(files, sk.Files...)
	}
	// Stable: within one URI, files keep the order of snap.all, outer
	// skills first, as the ownership rule below expects.
	slices.SortStableFunc(files, func(a, b *File) int { return strings.Compare(a.URI, b.URI) })
	out := files[:0]
	for _, f := range files {
		if i := len(out) - 1; i >= 0 && out[i].URI == f.URI {
			if prev := out[i]; prev.name == f.name && len(f.Skill.Path) > len(prev.Skill.Path) {
				out[i] = f
			}
			continue
		}
		out = append(out, f)
	}
	clear(files[len(out):])
	snap.files = slices.Clip(out)
}
