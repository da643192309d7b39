// Package lintcmd is the work of skills-mcp lint: it reads folders of
// skills and zip archives, lints every skill with package lint, and writes
// the text, JSON or SARIF report. The command line (flags, exit statuses)
// stays in package cli.
//
// Folders and zips are read the same way, as an fs.FS walked by one
// function: a folder through an os.Root (nothing outside it is opened,
// symlinks are listed and never followed), a zip through the library's
// hardened reader ([library.OpenArchive]), in memory and never extracted.
// A zip the server would refuse is reported as the server's refusal, one
// finding naming the entry and the reason, since the server serves none of
// its skills. lint never writes to disk and runs nothing.
package lintcmd

import (
	"cmp"
	"context"
	"errors"
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

	"github.com/skills-mcp/skills-mcp/internal/library"
	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// Bounds on what lint reads.
const (
	// DiscoveryDepth is how many folder levels below a PATH are searched
	// for SKILL.md (the catalog's default depth).
	DiscoveryDepth = 8
	// maxWalkDepth bounds recursion, whatever the discovery depth.
	maxWalkDepth = 64
	// maxFileRead is how much of one file is read and linted; a larger
	// file breaks the skill size limit anyway.
	maxFileRead = lint.MaxSkillBytes
)

// Skill is one skill found below a PATH, with its findings.
type Skill struct {
	Path     string         `json:"path"` // display path of the skill folder
	Name     string         `json:"name,omitempty"`
	Files    int            `json:"files"` // files counted toward the SEP-2640 limit
	Bytes    int64          `json:"bytes"`
	Findings []lint.Finding `json:"findings"`
	// Scripts lists the files a host could run (scripts and compiled
	// programs, as skill.SniffScript says), which serve --no-scripts
	// withholds; relative to the skill folder, in the order linted.
	Scripts []string `json:"scripts,omitempty"`
	// Archive marks the findings about a zip itself (the server's refusal),
	// which belong to no skill.
	Archive bool `json:"archive,omitempty"`

	src    *source
	folder string  // below the source root, "." for the root
	owned  []entry // the files linted under this skill (innermost owner)
}

// Summary counts a run.
type Summary struct {
	Skills     int `json:"skills"`
	Files      int `json:"files"`
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Infos      int `json:"infos"`
	Suppressed int `json:"suppressed"`
	// Flagged counts skills with an unsuppressed finding at warning or above.
	Flagged int `json:"flaggedSkills"`
}

// Report is the result of a run, and the --format json document.
type Report struct {
	Skills  []*Skill `json:"skills"`
	Summary Summary  `json:"summary"`
	// Errors lists PATHs that could not be read.
	Errors []string `json:"errors,omitempty"`
}

// Lint reads every PATH (a folder of skills, a skill, a SKILL.md or a
// .zip) and lints the skills it holds. A PATH that cannot be read is
// listed in Report.Errors; the error is ctx's, when it ends first.
func Lint(ctx context.Context, paths []string) (*Report, error) {
	report := &Report{}
	for _, p := range paths {
		src, err := openSource(p)
		if err != nil {
			report.Errors = append(report.Errors, fmt.Sprintf("%s: %v", filepath.ToSlash(p), unwrapPathErr(err)))
			continue
		}
		defer src.close()
		skills := discoverSkills(src)
		if len(skills) == 0 && len(src.findings) == 0 {
			report.Errors = append(report.Errors, fmt.Sprintf("%s: no SKILL.md found within %d folder levels", src.display, DiscoveryDepth))
		}
		if len(src.findings) > 0 {
			report.Skills = append(report.Skills, &Skill{Path: src.display, Findings: src.findings, Archive: true, src: src, folder: "."})
		}
		report.Skills = append(report.Skills, skills...)
	}
	if err := lintSkills(ctx, report.Skills); err != nil {
		return nil, err
	}
	report.summarize()
	return report, nil
}

// Failing counts the unsuppressed findings at sev or above.
func (r *Report) Failing(sev lint.Severity) int {
	n := 0
	for _, sk := range r.Skills {
		for _, f := range sk.Findings {
			if !f.Suppressed && f.Severity >= sev {
				n++
			}
		}
	}
	return n
}

// entry is one file of a source: a regular file, a symlink or something
// else (a device, a pipe), never followed.
type entry struct {
	name string // slash path below the source root
	mode fs.FileMode
	size int64
}

// source is a PATH made into a list of files over an fs.FS.
type source struct {
	display  string // the PATH as given, slash-separated
	zip      bool
	rootName string // the folder name of a skill at the root
	fsys     fs.FS
	entries  []entry
	// findings about the source itself (a zip the server refuses).
	findings []lint.Finding
	// close releases the source (the os.Root of a folder).
	close func() error
}

// displayPath renders a path below the source for reports.
func (s *source) displayPath(rel string) string {
	if s.zip {
		if rel == "." || rel == "" {
			return s.display
		}
		return s.display + "!/" + rel
	}
	return path.Join(s.display, rel)
}

// openSource reads the file list of a PATH.
func openSource(p string) (*source, error) {
	display := filepath.ToSlash(p)
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() && filepath.Base(p) == "SKILL.md" {
		p = filepath.Dir(p)
		display = filepath.ToSlash(p)
		if info, err = os.Stat(p); err != nil {
			return nil, err
		}
	}
	if info.IsDir() {
		return openDir(p, display)
	}
	return openZip(p, display)
}

// openDir lists a folder through an os.Root, so that nothing outside it is
// ever opened; symlinks are listed, never followed.
func openDir(p, display string) (*source, error) {
	root, err := os.OpenRoot(p)
	if err != nil {
		return nil, err
	}
	// The root stays open until the report is done: files are read later,
	// on the worker pool.
	abs, _ := filepath.Abs(p)
	src := &source{display: display, rootName: filepath.Base(abs), fsys: regfile.FS(root), close: root.Close}
	if err := src.walk(); err != nil {
		root.Close()
		return nil, err
	}
	return src, nil
}

// openZip opens a zip with the checks the server makes before it extracts
// a zip library, and lists it as an fs.FS in memory. An archive the server
// would refuse becomes one finding, the refusal, and no entries: none of
// its skills would be served.
func openZip(p, display string) (*source, error) {
	f, err := regfile.Open(p)
	if err != nil {
		return nil, err
	}
	src := &source{display: display, zip: true, rootName: strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)), close: f.Close}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	a, err := library.OpenArchive(f, info.Size(), library.DefaultLimits())
	var ae *library.ArchiveError
	switch {
	case errors.As(err, &ae):
		reason := ae.Err.Error()
		src.findings = append(src.findings, lint.RefusedZip(ae.Entry, reason, errors.Is(err, library.ErrInsecurePath)))
		return src, nil
	case err != nil:
		f.Close()
		return nil, err
	}
	src.fsys = a.FS()
	if err := src.walk(); err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// walk lists the source's files, skipping tool folders (node_modules,
// .git, …) as the catalog does.
func (s *source) walk() error {
	return fs.WalkDir(s.fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			return nil // an unreadable folder is skipped
		}
		if d.IsDir() {
			if name != "." && (skill.IsToolFolder(d.Name()) || strings.Count(name, "/")+1 > maxWalkDepth) {
				return fs.SkipDir
			}
			return nil
		}
		e := entry{name: name, mode: d.Type()}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				e.size = info.Size()
			}
		}
		s.entries = append(s.entries, e)
		return nil
	})
}

// discoverSkills finds the folders holding a regular SKILL.md, at most
// DiscoveryDepth levels below the source root, and gives each file to its
// innermost skill.
func discoverSkills(src *source) []*Skill {
	byFolder := map[string]*Skill{}
	for _, e := range src.entries {
		if path.Base(e.name) != "SKILL.md" || !e.mode.IsRegular() {
			continue
		}
		folder := path.Dir(e.name)
		depth := 0
		if folder != "." {
			depth = strings.Count(folder, "/") + 1
		}
		if depth > DiscoveryDepth {
			continue
		}
		byFolder[folder] = &Skill{Path: src.displayPath(folder), src: src, folder: folder}
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
	skills := make([]*Skill, 0, len(byFolder))
	for _, sk := range byFolder {
		skills = append(skills, sk)
	}
	slices.SortFunc(skills, func(a, b *Skill) int { return strings.Compare(a.folder, b.folder) })
	return skills
}

// lintSkills lints every skill on a worker pool; reports keep their order.
// It returns once every worker has stopped.
func lintSkills(ctx context.Context, skills []*Skill) error {
	next := make(chan *Skill)
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
func (sk *Skill) lint(ctx context.Context) {
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
		case e.mode&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(sk.src.fsys, e.name)
			if err != nil {
				continue
			}
			if f := lint.Symlink(r, target); f != nil {
				sk.Findings = append(sk.Findings, *f)
			}
		case e.mode.IsRegular():
			data, err := readBounded(sk.src.fsys, e.name)
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

// readBounded reads at most maxFileRead bytes of a file.
func readBounded(fsys fs.FS, name string) ([]byte, error) {
	r, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, maxFileRead))
	return data, errors.Join(err, r.Close())
}

func (r *Report) summarize() {
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

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
