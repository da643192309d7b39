package cli

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// lintCommand checks skills for their authors and CI: the SKILL.md rules,
// the SEP-2640 limits and the risk rules of package lint. It reads nothing
// outside the paths it is given and runs nothing.
type lintCommand struct {
	streams
}

// Bounds on what lint reads.
const (
	// lintDiscoveryDepth is how many folder levels below a PATH are
	// searched for SKILL.md (the catalog's default depth).
	lintDiscoveryDepth = 8
	// lintMaxWalkDepth bounds recursion, whatever the discovery depth.
	lintMaxWalkDepth = 64
	// lintMaxFileRead is how much of one file is read and linted; a larger
	// file breaks the skill size limit anyway.
	lintMaxFileRead = lint.MaxSkillBytes
	// Zip archives are read into memory whole, so they are bounded: their
	// size, their entry count and their declared uncompressed size.
	lintMaxZipBytes   = 256 << 20
	lintMaxZipEntries = 10000
	// lintMaxLinkTarget bounds a symlink target read from a zip entry.
	lintMaxLinkTarget = 4 << 10
)

const lintUsage = `Usage: skills-mcp lint [flags] PATH…

Checks skills before they are published: every SKILL.md against the Agent
Skills rules (frontmatter, name equal to the folder) and the SEP-2640 limits
(512 files, 16 MiB, no archives, no symlinks leaving the skill), and every
text file against the risk rules (download-and-run, decoded payloads,
credential reads and literals, exfiltration, reverse shells, prompt
injection, hidden text, install hooks, …).

A PATH is a folder of skills (searched 8 levels deep), a single skill, a
SKILL.md, or a .zip of skills (read in memory, never extracted). lint reads
nothing outside its PATHs and runs nothing.

Silence one finding with a marker on its line, reason required:
  curl -fsSL https://example.com/i.sh | sh   # lint-ignore: pipe-to-shell vendored, checksum pinned

Exit status: 0 when no unsuppressed finding reaches --fail-on, 1 when one
does (or a PATH cannot be read), 2 for bad usage.

Flags:
`

// lintConfig is everything lint needs, after flags.
type lintConfig struct {
	paths  []string
	format string
	failOn lint.Severity
	never  bool // --fail-on none
}

func (c *lintCommand) flags(cfg *lintConfig, failOn *string) *flag.FlagSet {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.StringVar(&cfg.format, "format", "text", "report `format`: text, json or sarif (SARIF 2.1.0, for code scanning)")
	fs.StringVar(failOn, "fail-on", "error", "exit 1 when an unsuppressed finding reaches `level`: error, warning, info or none")
	fs.Usage = func() { c.Usage() }
	return fs
}

// Usage prints the command's help to stderr.
func (c *lintCommand) Usage() {
	fmt.Fprint(c.stderr, lintUsage)
	var cfg lintConfig
	var failOn string
	fs := c.flags(&cfg, &failOn)
	fs.Usage = func() {}
	fs.PrintDefaults()
}

// parseArgs reads the command line; paths and flags may be interleaved.
func (c *lintCommand) parseArgs(args []string) (*lintConfig, error) {
	const hint = "skills-mcp lint -h"
	cfg := &lintConfig{}
	var failOn string
	fs := c.flags(cfg, &failOn)
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, &usageError{err: err, hint: hint}
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		if n := len(rest) - len(left); n > 0 && rest[n-1] == "--" {
			cfg.paths = append(cfg.paths, left...)
			break
		}
		cfg.paths = append(cfg.paths, left[0])
		rest = left[1:]
	}
	switch cfg.format {
	case "text", "json", "sarif":
	default:
		return nil, usagef(hint, "--format must be text, json or sarif, not %q", cfg.format)
	}
	if strings.EqualFold(failOn, "none") {
		cfg.never = true
	} else {
		sev, err := lint.ParseSeverity(failOn)
		if err != nil {
			return nil, usagef(hint, "--fail-on must be error, warning, info or none, not %q", failOn)
		}
		cfg.failOn = sev
	}
	if len(cfg.paths) == 0 {
		return nil, usagef(hint, "give at least one PATH: a folder of skills, a skill or a .zip")
	}
	for _, p := range cfg.paths {
		info, err := os.Stat(p)
		switch {
		case err != nil:
			return nil, usagef(hint, "PATH %s: %v", p, unwrapPathErr(err))
		case info.IsDir(), strings.EqualFold(filepath.Ext(p), ".zip"), filepath.Base(p) == "SKILL.md":
		default:
			return nil, usagef(hint, "PATH %s is not a folder, a SKILL.md or a .zip", p)
		}
	}
	return cfg, nil
}

// lintEntry is one file of a source: a regular file, a symlink or
// something else (a device, a pipe), never followed.
type lintEntry struct {
	name string // slash path below the source root
	mode fs.FileMode
	size int64
	// open reads a regular file; readLink reads a symlink's target.
	open     func() (io.ReadCloser, error)
	readLink func() (string, error)
}

// lintSource is a PATH made into a list of files.
type lintSource struct {
	display  string // the PATH as given, slash-separated
	zip      bool
	rootName string // the folder name of a skill at the root
	entries  []lintEntry
	// findings about the source itself (unsafe zip entry names).
	findings []lint.Finding
	// close releases the source (the os.Root of a folder).
	close func() error
}

// displayPath renders a path below the source for reports.
func (s *lintSource) displayPath(rel string) string {
	if s.zip {
		if rel == "." || rel == "" {
			return s.display
		}
		return s.display + "!/" + rel
	}
	return path.Join(s.display, rel)
}

// openSource reads the file list of a PATH.
func openSource(p string) (*lintSource, error) {
	display := filepath.ToSlash(p)
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() && filepath.Base(p) == "SKILL.md" {
		p = filepath.Dir(p)
		display = filepath.ToSlash(p)
		info, err = os.Stat(p)
		if err != nil {
			return nil, err
		}
	}
	if info.IsDir() {
		return openDirSource(p, display)
	}
	return openZipSource(p, display, info.Size())
}

// openDirSource lists a folder through an os.Root, so that nothing outside
// it is ever opened; symlinks are listed, never followed.
func openDirSource(p, display string) (*lintSource, error) {
	root, err := os.OpenRoot(p)
	if err != nil {
		return nil, err
	}
	// The root stays open until the report is done: files are read later,
	// on the worker pool.
	fsys := regfile.FS(root)
	abs, _ := filepath.Abs(p)
	src := &lintSource{display: display, rootName: filepath.Base(abs), close: root.Close}
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			return nil // an unreadable folder is skipped
		}
		if d.IsDir() {
			if name != "." && (skill.IsToolFolder(d.Name()) || strings.Count(name, "/")+1 > lintMaxWalkDepth) {
				return fs.SkipDir
			}
			return nil
		}
		e := lintEntry{name: name, mode: d.Type()}
		switch {
		case d.Type().IsRegular():
			if info, err := d.Info(); err == nil {
				e.size = info.Size()
			}
			e.open = func() (io.ReadCloser, error) { return fsys.Open(name) }
		case d.Type()&fs.ModeSymlink != 0:
			e.readLink = func() (string, error) { return fs.ReadLink(fsys, name) }
		}
		src.entries = append(src.entries, e)
		return nil
	})
	if err != nil {
		root.Close()
		return nil, err
	}
	return src, nil
}

// openZipSource reads a zip into memory, bounded, and lists its entries.
// Nothing is written to disk; entries with unsafe names are reported and
// not linted.
func openZipSource(p, display string, size int64) (*lintSource, error) {
	if size > lintMaxZipBytes {
		return nil, fmt.Errorf("%d MiB is over the %d MiB limit for zips", size>>20, lintMaxZipBytes>>20)
	}
	f, err := regfile.Open(p)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, lintMaxZipBytes+1))
	f.Close()
	if err != nil {
		return nil, err
	}
	if len(data) > lintMaxZipBytes {
		return nil, fmt.Errorf("over the %d MiB limit for zips", lintMaxZipBytes>>20)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, err
	}
	if len(zr.File) > lintMaxZipEntries {
		return nil, fmt.Errorf("%d entries is over the limit of %d", len(zr.File), lintMaxZipEntries)
	}
	var total uint64
	for _, zf := range zr.File {
		total += zf.UncompressedSize64
	}
	if total > lintMaxZipBytes {
		return nil, fmt.Errorf("its files add up to %d MiB, over the %d MiB limit", total>>20, lintMaxZipBytes>>20)
	}
	src := &lintSource{display: display, zip: true, rootName: strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)), close: func() error { return nil }}
	for _, zf := range zr.File {
		if strings.HasSuffix(zf.Name, "/") {
			continue // a folder
		}
		if f := lint.ArchivePath(zf.Name); f != nil {
			src.findings = append(src.findings, *f)
			continue
		}
		if name := path.Clean(zf.Name); name != zf.Name || !fs.ValidPath(name) || inToolDir(name) {
			if !inToolDir(name) {
				f := lint.Finding{Rule: lint.RuleZipPath, Severity: lint.Error, Path: zf.Name,
					Message: fmt.Sprintf("zip entry %q is not a clean relative path", zf.Name)}
				src.findings = append(src.findings, f)
			}
			continue
		}
		zf := zf
		e := lintEntry{name: zf.Name, mode: zf.Mode().Type(), size: int64(zf.UncompressedSize64)}
		switch {
		case e.mode.IsRegular():
			e.open = zf.Open
		case e.mode&fs.ModeSymlink != 0:
			e.readLink = func() (string, error) {
				r, err := zf.Open()
				if err != nil {
					return "", err
				}
				defer r.Close()
				b, err := io.ReadAll(io.LimitReader(r, lintMaxLinkTarget))
				return string(b), err
			}
		}
		src.entries = append(src.entries, e)
	}
	return src, nil
}

// inToolDir reports whether a path lies in a tool folder.
func inToolDir(name string) bool {
	for seg := range strings.SplitSeq(path.Dir(name), "/") {
		if skill.IsToolFolder(seg) {
			return true
		}
	}
	return false
}

// lintSkill is one skill found in a source, with its report.
type lintSkill struct {
	Path     string         `json:"path"` // display path of the skill folder
	Name     string         `json:"name,omitempty"`
	Files    int            `json:"files"` // files counted toward the SEP-2640 limit
	Bytes    int64          `json:"bytes"`
	Findings []lint.Finding `json:"findings"`
	// Scripts lists the files a host could run (scripts and compiled
	// programs, as skill.SniffScript says), which serve --no-scripts
	// withholds; relative to the skill folder, in the order linted.
	Scripts []string `json:"scripts,omitempty"`
	// Archive marks the findings about a zip itself (unsafe entry names),
	// which belong to no skill.
	Archive bool `json:"archive,omitempty"`

	src    *lintSource
	folder string      // below the source root, "." for the root
	owned  []lintEntry // the files linted under this skill (innermost owner)
}

// lintSummary counts a run.
type lintSummary struct {
	Skills     int `json:"skills"`
	Files      int `json:"files"`
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Infos      int `json:"infos"`
	Suppressed int `json:"suppressed"`
	// Flagged counts skills with an unsuppressed finding at warning or above.
	Flagged int `json:"flaggedSkills"`
}

// lintReport is the --format json document.
type lintReport struct {
	Skills  []*lintSkill `json:"skills"`
	Summary lintSummary  `json:"summary"`
	// Errors lists PATHs that could not be read.
	Errors []string `json:"errors,omitempty"`
}

// Run implements command.
func (c *lintCommand) Run(ctx context.Context, args []string) error {
	cfg, err := c.parseArgs(args)
	if err != nil {
		return err
	}
	report := &lintReport{}
	for _, p := range cfg.paths {
		src, err := openSource(p)
		if err != nil {
			report.Errors = append(report.Errors, fmt.Sprintf("%s: %v", filepath.ToSlash(p), unwrapPathErr(err)))
			continue
		}
		defer src.close()
		skills := discoverSkills(src)
		if len(skills) == 0 && len(src.findings) == 0 {
			report.Errors = append(report.Errors, fmt.Sprintf("%s: no SKILL.md found within %d folder levels", src.display, lintDiscoveryDepth))
		}
		if len(src.findings) > 0 {
			// Findings about the archive itself.
			report.Skills = append(report.Skills, &lintSkill{Path: src.display, Findings: src.findings, Archive: true, src: src, folder: "."})
		}
		report.Skills = append(report.Skills, skills...)
	}
	if err := lintSkills(ctx, report.Skills); err != nil {
		return err
	}
	report.summarize()

	switch cfg.format {
	case "json":
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	case "sarif":
		err = writeSARIF(c.stdout, report)
	default:
		err = writeLintText(c.stdout, report)
	}
	if err != nil {
		return err
	}
	for _, e := range report.Errors {
		fmt.Fprintf(c.stderr, "lint: %s\n", e)
	}
	failing := 0
	if !cfg.never {
		for _, sk := range report.Skills {
			for _, f := range sk.Findings {
				if !f.Suppressed && f.Severity >= cfg.failOn {
					failing++
				}
			}
		}
	}
	switch {
	case failing > 0:
		return fmt.Errorf("%d finding(s) at %s or above", failing, cfg.failOn)
	case len(report.Errors) > 0:
		return fmt.Errorf("%d PATH(s) could not be linted", len(report.Errors))
	}
	return nil
}

// discoverSkills finds the folders holding a regular SKILL.md, at most
// lintDiscoveryDepth levels below the source root, and gives each file to
// its innermost skill.
func discoverSkills(src *lintSource) []*lintSkill {
	byFolder := map[string]*lintSkill{}
	for _, e := range src.entries {
		if path.Base(e.name) != "SKILL.md" || !e.mode.IsRegular() {
			continue
		}
		folder := path.Dir(e.name)
		depth := 0
		if folder != "." {
			depth = strings.Count(folder, "/") + 1
		}
		if depth > lintDiscoveryDepth {
			continue
		}
		byFolder[folder] = &lintSkill{Path: src.displayPath(folder), src: src, folder: folder}
	}
	for _, e := range src.entries {
		for dir := path.Dir(e.name); ; dir = path.Dir(dir) {
			if sk := byFolder[dir]; sk != nil {
				sk.owned = append(sk.owned, e)
				break
			}
			if dir == "." {
				break
			}
		}
	}
	skills := make([]*lintSkill, 0, len(byFolder))
	for _, sk := range byFolder {
		skills = append(skills, sk)
	}
	slices.SortFunc(skills, func(a, b *lintSkill) int { return strings.Compare(a.folder, b.folder) })
	return skills
}

// lintSkills lints every skill on a worker pool; reports keep their order.
func lintSkills(ctx context.Context, skills []*lintSkill) error {
	next := make(chan *lintSkill)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for sk := range next {
				sk.lint(ctx)
			}
		})
	}
	var err error
feed:
	for _, sk := range skills {
		if sk.Archive {
			continue
		}
		select {
		case next <- sk:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	return err
}

// lint fills in the skill's findings: SKILL.md, limits, then each file it
// owns (symlinks, archives, risk rules).
func (sk *lintSkill) lint(ctx context.Context) {
	rel := func(name string) string {
		if sk.folder == "." {
			return name
		}
		return strings.TrimPrefix(name, sk.folder+"/")
	}
	folderName := path.Base(sk.folder)
	if sk.folder == "." {
		folderName = sk.src.rootName
	}
	// Limits count what the catalog would serve below the folder, nested
	// skills included: regular files, not dotfiles, not build artefacts.
	prefix := sk.folder + "/"
	for _, e := range sk.src.entries {
		if sk.folder != "." && !strings.HasPrefix(e.name, prefix) {
			continue
		}
		r := rel(e.name)
		if !e.mode.IsRegular() || skill.IsBuildArtefact(r) || strings.HasPrefix(r, ".") || strings.Contains(r, "/.") {
			continue
		}
		sk.Files++
		sk.Bytes += e.size
	}
	sk.Findings = append(sk.Findings, lint.Limits(sk.Files, sk.Bytes)...)

	for _, e := range sk.owned {
		if ctx.Err() != nil {
			return
		}
		r := rel(e.name)
		switch {
		case e.readLink != nil:
			target, err := e.readLink()
			if err != nil {
				continue
			}
			if f := lint.Symlink(r, target); f != nil {
				sk.Findings = append(sk.Findings, *f)
			}
		case e.open != nil:
			data, err := readBounded(e.open)
			if err != nil {
				sk.Findings = append(sk.Findings, lint.Finding{Rule: lint.RuleSkillLimits, Severity: lint.Error, Path: r,
					Message: "cannot read the file: " + unwrapPathErr(err).Error()})
				continue
			}
			if r == "SKILL.md" {
				sk.Findings = append(sk.Findings, lint.SkillMD(folderName, data)...)
				if doc, err := skill.Parse(data); err == nil {
					sk.Name = doc.Frontmatter.Name()
				}
			}
			if f := lint.Archive(r, data); f != nil {
				sk.Findings = append(sk.Findings, *f)
				continue
			}
			if _, ok := skill.SniffScript(r, data); ok && r != "SKILL.md" {
				sk.Scripts = append(sk.Scripts, r)
			}
			sk.Findings = append(sk.Findings, lint.File(r, data)...)
		}
	}
	slices.SortStableFunc(sk.Findings, func(a, b lint.Finding) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Rule, b.Rule))
	})
}

// readBounded reads at most lintMaxFileRead bytes of a file.
func readBounded(open func() (io.ReadCloser, error)) ([]byte, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, lintMaxFileRead))
	return data, errors.Join(err, r.Close())
}

func (r *lintReport) summarize() {
	for _, sk := range r.Skills {
		if !sk.Archive {
			r.Summary.Skills++
			r.Summary.Files += len(sk.owned)
		}
		flagged := false
		for _, f := range sk.Findings {
			switch {
			case f.Suppressed:
				r.Summary.Suppressed++
				continue
			case f.Severity == lint.Error:
				r.Summary.Errors++
			case f.Severity == lint.Warning:
				r.Summary.Warnings++
			default:
				r.Summary.Infos++
			}
			if f.Severity >= lint.Warning {
				flagged = true
			}
		}
		if flagged {
			r.Summary.Flagged++
		}
	}
}

// writeLintText prints findings grouped by skill, then a summary.
func writeLintText(w io.Writer, r *lintReport) error {
	var b strings.Builder
	for _, sk := range r.Skills {
		if len(sk.Findings) == 0 {
			continue
		}
		head := sk.Path
		if sk.Name != "" && sk.Name != path.Base(sk.Path) {
			head += " (" + sk.Name + ")"
		}
		b.WriteString(head + "\n")
		for _, f := range sk.Findings {
			loc := sk.src.displayPath(path.Join(sk.folder, f.Path))
			if f.Line > 0 {
				loc += fmt.Sprintf(":%d:%d", f.Line, f.Column)
			}
			fmt.Fprintf(&b, "  %s %s %s %s", loc, f.Severity, f.Rule, f.Message)
			if f.Suppressed {
				fmt.Fprintf(&b, " (suppressed: %s)", f.Reason)
			}
			if f.More > 0 {
				fmt.Fprintf(&b, " (+%d more in this file)", f.More)
			}
			b.WriteString("\n")
			if f.Excerpt != "" {
				b.WriteString("      | " + f.Excerpt + "\n")
			}
		}
	}
	s := r.Summary
	fmt.Fprintf(&b, "%d skill(s), %d file(s): %d error(s), %d warning(s), %d info, %d suppressed; %d skill(s) flagged\n",
		s.Skills, s.Files, s.Errors, s.Warnings, s.Infos, s.Suppressed, s.Flagged)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSARIF writes the report as a SARIF 2.1.0 log (lint.WriteSARIF).
func writeSARIF(w io.Writer, r *lintReport) error {
	var found []lint.Located
	for _, sk := range r.Skills {
		for _, f := range sk.Findings {
			found = append(found, lint.Located{Path: sk.src.displayPath(path.Join(sk.folder, f.Path)), Finding: f})
		}
	}
	return lint.WriteSARIF(w, version(), found)
}
