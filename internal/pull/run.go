package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// DefaultDest is the destination folder when PullOptions.Dest is empty.
const DefaultDest = "skills"

// DefaultConcurrency is the number of skills fetched at once when
// PullOptions.Concurrency is zero.
const DefaultConcurrency = 4

// PullOptions configures Pull. A nil *PullOptions means defaults.
type PullOptions struct {
	// Dest is the destination folder. If empty, DefaultDest. It is created
	// when missing (except in a dry run); it must not be a symbolic link.
	Dest string
	// KeepPath writes each skill to <Dest>/<skill path>/ instead of
	// <Dest>/<name>/. Skills under another URI scheme than skill:// go to
	// <Dest>/<scheme>/<skill path>/.
	KeepPath bool
	// Sync updates existing skill folders in place: files whose size and
	// sha256 already match are kept without a read from the server, changed
	// and missing ones are fetched, files no longer listed are deleted and
	// empty folders pruned.
	Sync bool
	// Force replaces existing skill folders with a fresh copy.
	Force bool
	// DryRun reads and verifies everything but writes nothing.
	DryRun bool
	// AllowDynamic pulls skills whose manifest is "dynamic": only their
	// frontmatter can be verified, and without directoryRead only SKILL.md
	// can be found.
	AllowDynamic bool
	// AllowOversize pulls skills over the SEP-2640 limits of 512 files or
	// 16 MiB.
	AllowOversize bool
	// NoScripts writes no executable: the files skill.SniffScript calls
	// scripts or compiled programs (what serve --no-scripts withholds) are
	// read and verified, listed in SkillReport.Scripts, and left out of
	// the local copy (removed from it with Sync). SKILL.md is always
	// written.
	NoScripts bool
	// Concurrency is the number of skills fetched at once. If zero,
	// DefaultConcurrency.
	Concurrency int
	// OnProgress, if set, is called after each file is verified (and from
	// several goroutines, one call at a time).
	OnProgress func(Progress)
}

// Progress counts the work done so far.
type Progress struct {
	Skills, SkillsDone int
	FilesDone          int
	// Bytes is the content read from the server so far.
	Bytes int64
}

// Action is what a pull did (or, in a dry run, would do) to a skill folder.
type Action string

// Actions.
const (
	// Created: the folder did not exist.
	Created Action = "created"
	// Updated: the folder existed and was replaced (--force) or changed (--sync).
	Updated Action = "updated"
	// Unchanged: --sync found the folder already matching.
	Unchanged Action = "unchanged"
	// Skipped: the folder exists and neither --sync nor --force was given.
	Skipped Action = "skipped"
	// Included: with KeepPath, the skill is nested in another pulled
	// skill's folder and was written as part of it.
	Included Action = "included"
)

// SkillReport says what happened to one skill.
type SkillReport struct {
	URI  string `json:"uri"`
	Path string `json:"path"`
	// Dir is the skill folder, relative to the destination, slash-separated.
	Dir    string `json:"dir"`
	Action Action `json:"action"`
	// Fetched counts files read from the server that had no local copy;
	// Updated files read to replace a different local copy; Kept local
	// files that already matched; Deleted local files no longer listed.
	Fetched int `json:"fetched"`
	Updated int `json:"updated"`
	Kept    int `json:"kept"`
	Deleted int `json:"deleted"`
	// Bytes is the content read from the server for this skill.
	Bytes int64 `json:"bytes"`
	// Dynamic reports a skill pulled from a "dynamic" manifest, unverified
	// except for its frontmatter.
	Dynamic bool `json:"dynamic,omitempty"`
	// Scripts lists the skill's executables (scripts and compiled
	// programs, by skill.SniffScript), relative to the skill folder: what
	// a host must not run without approval. With NoScripts they are not
	// written, and Withheld is true.
	Scripts  []string `json:"scripts,omitempty"`
	Withheld bool     `json:"scriptsWithheld,omitempty"`
}

// Report is the outcome of a pull.
type Report struct {
	Server Server `json:"server"`
	// Dest is the destination folder as given.
	Dest   string        `json:"dest"`
	DryRun bool          `json:"dryRun"`
	Skills []SkillReport `json:"skills"`
	// Deps lists the skills added as runtime dependencies (set by callers
	// that use Closure).
	Deps []Dep `json:"dependencies,omitempty"`
	// Files and Bytes total the files and content read from the server.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Reads counts resources/read requests; WireBytes the bytes received
	// from the server during the whole session (-1 when not measured).
	Reads     int64 `json:"reads"`
	WireBytes int64 `json:"wireBytes"`
	// Millis is the wall time of the pull, listing excluded.
	Millis int64 `json:"ms"`
	// Error is the failure, for machine output; empty on success.
	Error string `json:"error,omitempty"`
}

// ConflictError reports skills that would be written to the same folder.
type ConflictError struct {
	// Dir is the folder, relative to the destination.
	Dir string
	// Paths are the skill paths that collide.
	Paths []string
	// Hint says how to avoid the collision.
	Hint string
}

// Error names the skills, the folder and the way out.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("skills %s would all be written to %s; %s", strings.Join(e.Paths, " and "), e.Dir, e.Hint)
}

// plan is one skill on its way to disk.
type plan struct {
	entry    *Entry
	files    []File // manifest, SKILL.md first
	dir      string // output folder, relative to the destination
	exists   bool
	included *plan  // the enclosing skill this one is written with, or nil
	staged   string // staged folder, relative to the destination root
	rep      SkillReport
}

// Pull verifies the selected skills and writes them below the destination.
//
// It works in phases, and writes nothing until every phase before the last
// has succeeded: (1) every manifest is checked without a read; (2) the
// destination is inspected, refusing links; (3) every file is read (or, with
// Sync, found matching locally), verified and staged in a hidden folder
// inside the destination; (4) the staged skills are renamed into place,
// each previous copy moved aside first and restored if any rename fails.
// Any failure leaves the destination as it was: no partial skill, no new
// folder. Verification failures are *VerifyError, manifest problems
// *EntryError, output collisions *ConflictError.
//
// The report is returned even on failure, with what is known.
func (c *Client) Pull(ctx context.Context, selected []*Entry, opts *PullOptions) (*Report, error) {
	var o PullOptions
	if opts != nil {
		o = *opts
	}
	if o.Dest == "" {
		o.Dest = DefaultDest
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	start := time.Now()
	rep := &Report{Server: c.Server(), Dest: o.Dest, DryRun: o.DryRun, Skills: []SkillReport{}}
	finish := func(err error) (*Report, error) {
		rep.Reads = c.Reads()
		rep.WireBytes = c.WireBytes()
		rep.Millis = time.Since(start).Milliseconds()
		if err != nil {
			rep.Error = err.Error()
		}
		return rep, err
	}

	// Phase 1: manifests, before any read.
	plans := make([]*plan, len(selected))
	for i, e := range selected {
		p, err := newPlan(e, &o)
		if err != nil {
			return finish(err)
		}
		plans[i] = p
	}
	if err := arrange(plans, o.KeepPath); err != nil {
		return finish(err)
	}

	// Phase 2: the destination.
	d, err := openDest(o.Dest, o.DryRun)
	if err != nil {
		return finish(err)
	}
	failed := true
	defer func() { d.close(failed) }()
	var work []*plan
	for _, p := range plans {
		if p.included != nil {
			continue
		}
		if p.exists, err = d.inspect(p.dir); err != nil {
			return finish(err)
		}
		if p.exists && !o.Sync && !o.Force {
			p.rep.Action = Skipped
			continue
		}
		if p.exists {
			// Both replace the folder: never a repository's metadata.
			if err := d.refuseVCS(p.dir); err != nil {
				return finish(err)
			}
		}
		work = append(work, p)
	}
	for _, p := range plans {
		if p.included != nil && p.included.rep.Action == Skipped {
			p.rep.Action = Skipped
		}
	}
	if !o.DryRun && len(work) > 0 {
		if err := d.newStage(); err != nil {
			return finish(err)
		}
	}

	// Phase 3: fetch, verify, stage.
	if err := c.stageAll(ctx, d, work, &o); err != nil {
		return finish(err)
	}

	// Phase 4: swap in.
	if !o.DryRun {
		if err := d.commit(work); err != nil {
			return finish(err)
		}
	}
	failed = false
	for _, p := range plans {
		rep.Skills = append(rep.Skills, p.rep)
		rep.Files += p.rep.Fetched + p.rep.Updated
		rep.Bytes += p.rep.Bytes
	}
	return finish(d.close(false))
}

// newPlan checks what can be checked of an entry before any read.
func newPlan(e *Entry, o *PullOptions) (*plan, error) {
	if e.Err != nil {
		return nil, e.Err
	}
	p := &plan{entry: e, rep: SkillReport{URI: e.URI, Path: e.Path, Dynamic: e.Dynamic}}
	if e.Dynamic {
		if !o.AllowDynamic {
			return nil, &EntryError{URI: e.URI, Reason: `the manifest is "dynamic": the server publishes no sizes or digests, so nothing but the frontmatter could be verified; pass --allow-dynamic to pull it anyway`}
		}
	} else {
		if !o.AllowOversize {
			if n := len(e.Files); n > skillsext.MaxResources {
				return nil, &EntryError{URI: e.URI, Reason: fmt.Sprintf("the manifest lists %d files, over the limit of %d; pass --allow-oversize to pull it", n, skillsext.MaxResources)}
			}
			if n := e.Bytes(); n > skillsext.MaxTotalBytes {
				return nil, &EntryError{URI: e.URI, Reason: fmt.Sprintf("the manifest adds up to %d bytes, over the limit of 16 MiB; pass --allow-oversize to pull it", n)}
			}
		}
		p.files = slices.Clone(e.Files)
		// SKILL.md first: nothing else is read unless it verifies.
		slices.SortStableFunc(p.files, func(a, b File) int {
			return boolCmp(b.URI == e.URI, a.URI == e.URI)
		})
	}
	if o.KeepPath {
		p.dir = e.Path
		if e.Scheme != skillsext.Scheme {
			p.dir = e.Scheme + "/" + e.Path
		}
	} else {
		p.dir = e.Name
	}
	if err := checkDir(p.dir); err != nil {
		return nil, &EntryError{URI: e.URI, Reason: fmt.Sprintf("unusable as a folder: %v", err)}
	}
	p.rep.Dir = p.dir
	return p, nil
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// arrange finds skills that would share a folder. With KeepPath, a skill
// whose folder lies inside other pulled skills' folders is written as part
// of the outermost one, provided every enclosing manifest lists its
// SKILL.md.
func arrange(plans []*plan, keepPath bool) error {
	byDir := map[string]*plan{}
	for _, p := range plans {
		if other, ok := byDir[p.dir]; ok {
			hint := "pull them one at a time with different --to folders"
			if !keepPath {
				hint = "use --keep-path to write each under its skill path"
			}
			return &ConflictError{Dir: p.dir, Paths: []string{other.entry.Path, p.entry.Path}, Hint: hint}
		}
		byDir[p.dir] = p
	}
	if !keepPath {
		return nil
	}
	for _, p := range plans {
		for dir := p.dir; ; {
			i := strings.LastIndexByte(dir, '/')
			if i < 0 {
				break
			}
			dir = dir[:i]
			outer, ok := byDir[dir]
			if !ok {
				continue
			}
			if outer.entry.Dynamic || !slices.ContainsFunc(outer.entry.Files, func(f File) bool { return f.URI == p.entry.URI }) {
				return &ConflictError{Dir: p.dir, Paths: []string{outer.entry.Path, p.entry.Path},
					Hint: "the enclosing skill's manifest does not list the nested skill's files; pull the nested skill on its own"}
			}
			// Keep walking: the outermost enclosing skill is the one written.
			p.included = outer
			p.rep.Action = Included
		}
	}
	return nil
}

// stageAll runs stageSkill over plans, o.Concurrency at a time, and stops
// at the first failure.
func (c *Client) stageAll(ctx context.Context, d *dest, plans []*plan, o *PullOptions) error {
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		prog = Progress{Skills: len(plans)}
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make([]error, len(plans))
	)
	report := func(files int, bytes int64, skillDone bool) {
		if o.OnProgress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		prog.FilesDone += files
		prog.Bytes += bytes
		if skillDone {
			prog.SkillsDone++
		}
		o.OnProgress(prog)
	}
	for range min(o.Concurrency, len(plans)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(plans) || ctx.Err() != nil {
					return
				}
				if err := c.stageSkill(ctx, d, i, plans[i], o, report); err != nil {
					errs[i] = err
					cancel(err)
					return
				}
				report(0, 0, true)
			}
		})
	}
	wg.Wait()
	// The first failure is the cause; the others are its echo. When the
	// caller's context ended, a failure says what was under way.
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && parent.Err() == nil {
		return cause
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// stageSkill reads, verifies and (unless a dry run) stages one skill.
func (c *Client) stageSkill(ctx context.Context, d *dest, i int, p *plan, o *PullOptions, report func(int, int64, bool)) error {
	e := p.entry
	files := p.files
	if e.Dynamic {
		var err error
		if files, err = c.discover(ctx, e, o); err != nil {
			return err
		}
	}

	// With Sync, find what the local copy already has right.
	var (
		local  map[string]localFile
		keep   = map[string]bool{}
		pruned int
	)
	if p.exists && o.Sync {
		var dirs []string
		var err error
		if local, dirs, err = d.scan(p.dir); err != nil {
			return err
		}
		for _, f := range files {
			lf, ok := local[f.Rel]
			if !ok || !lf.regular || e.Dynamic || lf.size != f.Size {
				continue
			}
			data, digest, err := d.readLocal(p.dir, f.Rel, f.Size)
			if err != nil {
				return fmt.Errorf("reading the local copy: %w", err)
			}
			if digest != f.Digest {
				continue
			}
			if f.URI == e.URI {
				// The local SKILL.md is the listed one byte for byte, but
				// the listing's frontmatter must still agree with it.
				if err := checkFrontmatter(e.URI, e.Frontmatter, data); err != nil {
					return err
				}
			}
			keep[f.Rel] = true
			if f.URI != e.URI && isScript(f.Rel, data) {
				p.rep.Scripts = append(p.rep.Scripts, f.Rel)
			}
		}
		listed := map[string]bool{}
		needed := map[string]bool{}
		for _, f := range files {
			listed[f.Rel] = true
			for dir := path.Dir(f.Rel); dir != "."; dir = path.Dir(dir) {
				needed[dir] = true
			}
		}
		for rel := range local {
			if !listed[rel] {
				p.rep.Deleted++
			}
		}
		for _, dir := range dirs {
			if !needed[dir] {
				pruned++
			}
		}
		p.rep.Kept = len(keep)
		// Under NoScripts a local copy holding a script is not right.
		if len(keep) == len(files) && p.rep.Deleted == 0 && pruned == 0 && (!o.NoScripts || len(p.rep.Scripts) == 0) {
			p.rep.Action = Unchanged
			return nil
		}
		p.rep.Scripts = nil // found again below, in manifest order
	}

	if !o.DryRun {
		p.staged = fmt.Sprintf("%s/%d", d.stage, i)
		if err := d.root.Mkdir(p.staged, 0o755); err != nil {
			return fmt.Errorf("staging %s: %w", e.Path, err)
		}
	}
	var total int64
	made := map[string]bool{}
	for _, f := range files {
		var data []byte
		if keep[f.Rel] {
			var digest string
			var err error
			if data, digest, err = d.readLocal(p.dir, f.Rel, f.Size); err != nil {
				return fmt.Errorf("reading the local copy: %w", err)
			}
			if digest != f.Digest {
				return fmt.Errorf("local file %s changed during the pull", path.Join(p.dir, f.Rel))
			}
		} else {
			var err error
			if data, err = c.read(ctx, f); err != nil {
				return err
			}
			if f.Digest != "" {
				if err := checkContent(f, data); err != nil {
					return err
				}
			}
			if f.URI == e.URI {
				if err := checkFrontmatter(e.URI, e.Frontmatter, data); err != nil {
					return err
				}
			}
			total += int64(len(data))
			if e.Dynamic && !o.AllowOversize && total > skillsext.MaxTotalBytes {
				return &EntryError{URI: e.URI, Reason: "the dynamic skill serves more than 16 MiB; pass --allow-oversize to pull it"}
			}
			if _, ok := local[f.Rel]; ok {
				p.rep.Updated++
			} else {
				p.rep.Fetched++
			}
			p.rep.Bytes += int64(len(data))
			report(1, int64(len(data)), false)
		}
		if f.URI != e.URI && isScript(f.Rel, data) {
			p.rep.Scripts = append(p.rep.Scripts, f.Rel)
			if o.NoScripts {
				p.rep.Withheld = true
				if keep[f.Rel] {
					p.rep.Kept--
				}
				continue
			}
		}
		if p.staged != "" {
			if err := d.writeFile(p.staged, f.Rel, data, made); err != nil {
				return fmt.Errorf("staging %s: %w", path.Join(p.dir, f.Rel), err)
			}
		}
	}
	if p.exists {
		p.rep.Action = Updated
	} else {
		p.rep.Action = Created
	}
	return nil
}

// isScript reports whether a file a host could run, by the detector the
// server's --no-scripts uses.
func isScript(rel string, data []byte) bool {
	_, ok := skill.SniffScript(rel, data)
	return ok
}

// read fetches one listed file with resources/read.
func (c *Client) read(ctx context.Context, f File) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	c.reads.Add(1)
	res, err := c.cs.ReadResource(rctx, &mcp.ReadResourceParams{URI: f.URI})
	if err != nil {
		if ctx.Err() == nil && rctx.Err() != nil {
			return nil, fmt.Errorf("reading %s: no answer within %s", f.URI, c.opts.RequestTimeout)
		}
		if lostConnection(err) {
			return nil, fmt.Errorf("reading %s: the connection to the server was lost: %w", f.URI, c.explain(err))
		}
		return nil, fmt.Errorf("reading %s: %w", f.URI, c.explain(err))
	}
	if len(res.Contents) != 1 || res.Contents[0] == nil {
		return nil, &VerifyError{URI: f.URI, Reason: fmt.Sprintf("resources/read returned %d contents; want exactly one", len(res.Contents))}
	}
	ct := res.Contents[0]
	if ct.URI != f.URI {
		return nil, &VerifyError{URI: f.URI, Reason: fmt.Sprintf("resources/read returned the content of %s", ct.URI)}
	}
	if ct.Blob != nil {
		return ct.Blob, nil
	}
	return []byte(ct.Text), nil
}

// lostConnection reports whether err means the server went away.
func lostConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, mcp.ErrConnectionClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// commit renames every staged skill into place. A previous copy is moved
// into the staging folder first (where closing the destination deletes
// it); if any rename fails, every skill committed so far is moved back out
// and every previous copy restored.
func (d *dest) commit(plans []*plan) error {
	type step struct {
		p       *plan
		backup  string
		created []string
	}
	var done []step
	rollback := func() {
		for i := len(done) - 1; i >= 0; i-- {
			s := done[i]
			d.root.Rename(s.p.dir, s.p.staged)
			if s.backup != "" {
				d.root.Rename(s.backup, s.p.dir)
			}
			for j := len(s.created) - 1; j >= 0; j-- {
				d.root.Remove(s.created[j])
			}
		}
	}
	for i, p := range plans {
		if p.staged == "" {
			continue // unchanged
		}
		s := step{p: p}
		var err error
		if s.created, err = d.mkParents(p.dir); err != nil {
			for j := len(s.created) - 1; j >= 0; j-- {
				d.root.Remove(s.created[j])
			}
			rollback()
			return fmt.Errorf("installing %s: %w", p.dir, err)
		}
		if p.exists {
			// Check again: the folder may have been swapped for a link
			// since it was inspected.
			if _, err := d.inspect(p.dir); err != nil {
				rollback()
				return err
			}
			s.backup = fmt.Sprintf("%s/old-%d", d.stage, i)
			if err := d.root.Rename(p.dir, s.backup); err != nil {
				rollback()
				return fmt.Errorf("installing %s: moving the previous copy aside: %w", p.dir, err)
			}
		}
		if err := d.root.Rename(p.staged, p.dir); err != nil {
			if s.backup != "" {
				d.root.Rename(s.backup, p.dir)
			}
			rollback()
			return fmt.Errorf("installing %s: %w", p.dir, err)
		}
		done = append(done, s)
	}
	return nil
}
