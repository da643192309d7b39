package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// MaxNoteBytes bounds a playbook note or value-chain file. A bigger one is
// skipped with a warning: it cannot be a note a person wrote.
const MaxNoteBytes = 1 << 20

// maxPlaybookDepth is how many folder levels below PlaybooksDir are read.
const maxPlaybookDepth = 4

// Options says what Load reads.
type Options struct {
	// Playbooks and ValueChains turn the two kinds of content on.
	Playbooks, ValueChains bool
	// SkillsDir is the skills folder relative to the vault root, if it is
	// inside it; the search for a value-chain file does not enter it.
	SkillsDir string
	// MaxFileBytes bounds an attachment; a bigger one is skipped with a
	// warning. If zero, MaxNoteBytes.
	MaxFileBytes int64
	// NoScripts drops attachments that are scripts.
	NoScripts bool
	// OnFolder, if set, hears of every folder Load lists, so that a watcher
	// can watch it.
	OnFolder func(dir string)
}

// Raw is what Load read from a vault, before it is joined with the skills
// the server serves.
type Raw struct {
	// Notes are the notes of PlaybooksDir whose frontmatter says
	// type: playbook, every status, sorted by path.
	Notes []*Note
	// Private counts the notes of PrivatePlaybookDirs. They are counted
	// from their folder listings; not one byte of them is read.
	Private int
	// ChainFile is the value-chain file used, relative to the vault root,
	// and ChainText its content; both empty when there is none.
	ChainFile, ChainText string
	// Warnings say what was skipped and why.
	Warnings []Warning
}

// Note is one playbook note as read.
type Note struct {
	// Stem is the file name without ".md": the playbook's name.
	Stem string
	// Path is the note's path relative to the vault root.
	Path string
	// Misplaced notes sit in a subfolder of PlaybooksDir.
	Misplaced bool
	// Text is the whole note, Body the part after the frontmatter.
	Text, Body  string
	Frontmatter *skill.Frontmatter
	// Attachments are the files the note embeds that may be served.
	Attachments []*Attachment
}

// Status returns the note's frontmatter status, lower-cased; a note without
// one is active.
func (n *Note) Status() string {
	if s, ok := n.Frontmatter.String("status"); ok && strings.TrimSpace(s) != "" {
		return strings.ToLower(strings.TrimSpace(s))
	}
	return "active"
}

// Attachment is a file a playbook embeds with ![[name]], read from the
// note's own folder.
type Attachment struct {
	// Name is the file name; Path the path relative to the vault root.
	Name, Path string
	Size       int64
	// Digest is "sha256:" and the hex digest of the content.
	Digest string
	// Text reports whether the content is UTF-8 text without NUL bytes.
	Text bool
}

// Warning is a problem found in a vault. Path is relative to the vault
// root.
type Warning struct {
	Path, Reason, Message string
}

// loader carries one Load.
type loader struct {
	fsys      fs.FS
	opts      Options
	raw       *Raw
	notesRead int
}

// Load reads the playbooks and the value-chain file of the vault in fsys.
// It reads only PlaybooksDir, the listings of PrivatePlaybookDirs and one
// value-chain file; symlinks are never followed. Every problem is a
// warning.
func Load(fsys fs.FS, opts Options) *Raw {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = MaxNoteBytes
	}
	l := &loader{fsys: fsys, opts: opts, raw: &Raw{}}
	if opts.Playbooks {
		if isDir(fsys, PlaybooksDir) {
			l.notes(PlaybooksDir, 0)
		}
		for _, d := range PrivatePlaybookDirs {
			if isDir(fsys, d) {
				l.raw.Private += l.countNotes(d, 0)
			}
		}
		l.dedupe()
	}
	if opts.ValueChains {
		l.chainFile()
	}
	return l.raw
}

func (l *loader) warn(p, reason, format string, args ...any) {
	l.raw.Warnings = append(l.raw.Warnings, Warning{Path: p, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

func (l *loader) list(dir string) []fs.DirEntry {
	if l.opts.OnFolder != nil {
		l.opts.OnFolder(dir)
	}
	des, err := fs.ReadDir(l.fsys, dir)
	if err != nil {
		l.warn(dir, "unreadable", "folder cannot be read: %v", err)
		return nil
	}
	return des
}

// ignoredNote reports whether a file of a playbook folder is a manifest or
// a local file rather than a note.
func ignoredNote(name string) bool {
	switch name {
	case "AGENTS.md", "CLAUDE.md", "_local.md", "README.md":
		return true
	}
	return false
}

// notes reads the playbook notes of dir and, depth permitting, of its
// subfolders.
func (l *loader) notes(dir string, depth int) {
	for _, de := range l.list(dir) {
		name, p := de.Name(), path.Join(dir, de.Name())
		switch {
		case hiddenName(name):
		case de.Type()&fs.ModeSymlink != 0:
			if strings.HasSuffix(name, ".md") || depth < maxPlaybookDepth {
				l.warn(p, "symlink", "symlink not followed")
			}
		case de.IsDir():
			if depth < maxPlaybookDepth {
				l.notes(p, depth+1)
			}
		case de.Type().IsRegular() && strings.EqualFold(path.Ext(name), ".md") && !ignoredNote(name):
			l.note(p, depth > 0)
		}
	}
}

// MaxNotes bounds the notes read from a vault's playbook folder; a vault
// ships tens or hundreds.
const MaxNotes = 10000

// note reads one note and keeps it when it is a playbook.
func (l *loader) note(p string, misplaced bool) {
	if l.notesRead == MaxNotes {
		l.warn(PlaybooksDir, "note", "more than %d notes; the rest are not read", MaxNotes)
	}
	l.notesRead++
	if l.notesRead > MaxNotes {
		return
	}
	data, err := l.read(p, MaxNoteBytes)
	if err != nil {
		l.warn(p, "note", "%v", err)
		return
	}
	doc, err := skill.Parse(data)
	if err != nil {
		if !errors.Is(err, skill.ErrNoFrontmatter) {
			l.warn(p, "frontmatter", "note skipped: its frontmatter cannot be read: %v", err)
		}
		return
	}
	if t, _ := doc.Frontmatter.String("type"); !strings.EqualFold(strings.TrimSpace(t), "playbook") {
		return
	}
	text := string(data)
	n := &Note{
		Stem:        strings.TrimSuffix(path.Base(p), path.Ext(p)),
		Path:        p,
		Misplaced:   misplaced,
		Text:        text,
		Body:        text[doc.BodyOffset:],
		Frontmatter: doc.Frontmatter,
	}
	n.Attachments = l.attachments(n)
	l.raw.Notes = append(l.raw.Notes, n)
}

// Bounds on what one note's embeds may cost: a note of a megabyte could
// otherwise name a hundred thousand files.
const (
	maxAttachments        = 64
	maxAttachmentWarnings = 16
)

// attachments reads the files n embeds that may be served: plain file
// names in the note's own folder, regular files, within the size limit.
func (l *loader) attachments(n *Note) []*Attachment {
	dir := path.Dir(n.Path)
	var out []*Attachment
	var entries map[string]fs.DirEntry
	warned, unwarned := 0, 0
	warn := func(format string, args ...any) {
		if warned == maxAttachmentWarnings {
			unwarned++
			return
		}
		warned++
		l.warn(n.Path, "attachment", format, args...)
	}
	for _, target := range Embeds(n.Body) {
		if len(out) == maxAttachments {
			l.warn(n.Path, "attachment", "more than %d embedded files; the rest are not served", maxAttachments)
			break
		}
		if !plainFileName(target) {
			warn("embed %q not served: only files of the note's own folder are", target)
			continue
		}
		if entries == nil {
			des, _ := fs.ReadDir(l.fsys, dir)
			entries = make(map[string]fs.DirEntry, len(des))
			for _, de := range des {
				entries[de.Name()] = de
			}
		}
		de, ok := entries[target]
		if !ok {
			warn("embedded file %q does not exist", target)
			continue
		}
		if !de.Type().IsRegular() {
			warn("embedded file %q is not a regular file (a symlink or a folder); not served", target)
			continue
		}
		p := path.Join(dir, target)
		data, err := l.read(p, l.opts.MaxFileBytes)
		if err != nil {
			warn("embedded file %q: %v", target, err)
			continue
		}
		if _, script := skill.SniffScript(target, data); script && l.opts.NoScripts {
			continue
		}
		out = append(out, &Attachment{Name: target, Path: p, Size: int64(len(data)), Digest: digest(data), Text: isText(data)})
	}
	if unwarned > 0 {
		l.warn(n.Path, "attachment", "%d more embeds not served", unwarned)
	}
	return out
}

// plainFileName reports whether an embed target names a file of the
// note's folder that may be served: no folder part, no dotfile, no
// archive.
func plainFileName(s string) bool {
	if s == "" || strings.ContainsAny(s, `/\`) || strings.HasPrefix(s, ".") || strings.ContainsRune(s, 0) {
		return false
	}
	switch strings.ToLower(path.Ext(s)) {
	case ".zip", ".tar", ".gz", ".tgz", ".7z", ".rar", ".xz", ".bz2", ".skill":
		return false
	}
	return true
}

// countNotes counts the .md files below dir without reading them.
func (l *loader) countNotes(dir string, depth int) int {
	n := 0
	for _, de := range l.list(dir) {
		switch {
		case hiddenName(de.Name()):
		case de.IsDir() && depth < maxPlaybookDepth:
			n += l.countNotes(path.Join(dir, de.Name()), depth+1)
		case de.Type().IsRegular() && strings.EqualFold(path.Ext(de.Name()), ".md") && !ignoredNote(de.Name()):
			n++
		}
	}
	return n
}

// dedupe keeps the first note of each stem, by path, and warns about the
// others: a playbook is named by its stem.
func (l *loader) dedupe() {
	slices.SortFunc(l.raw.Notes, func(a, b *Note) int {
		// Notes of the playbook folder itself come before misplaced ones.
		if a.Misplaced != b.Misplaced {
			if a.Misplaced {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Path, b.Path)
	})
	seen := map[string]string{}
	kept := l.raw.Notes[:0]
	for _, n := range l.raw.Notes {
		key := strings.ToLower(n.Stem)
		if first, ok := seen[key]; ok {
			l.warn(n.Path, "duplicate-playbook", "playbook %q is also %s; not served", n.Stem, first)
			continue
		}
		seen[key] = n.Path
		kept = append(kept, n)
	}
	l.raw.Notes = kept
}

// chainFile finds the value-chain file: the canonical one, the one at the
// root, else the first value-chains.md found within 4 levels. The first
// that declares a chain wins.
func (l *loader) chainFile() {
	candidates := []string{ChainsFile, RootChainsFile}
	if found := findChainsFile(l.fsys, ".", l.opts.SkillsDir); found != "" && !slices.Contains(candidates, found) {
		candidates = append(candidates, found)
	}
	for _, p := range candidates {
		if !isFile(l.fsys, p) {
			continue
		}
		if l.opts.OnFolder != nil {
			l.opts.OnFolder(path.Dir(p))
		}
		data, err := l.read(p, MaxNoteBytes)
		if err != nil {
			l.warn(p, "value-chains", "%v", err)
			continue
		}
		if defs, _ := ParseChainFile(string(data)); len(defs) == 0 {
			l.warn(p, "value-chains", "value-chain file declares no chain; ignored")
			continue
		}
		l.raw.ChainFile, l.raw.ChainText = p, string(data)
		return
	}
}

// read reads a regular file of at most limit bytes.
func (l *loader) read(p string, limit int64) ([]byte, error) {
	f, err := l.fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%d bytes, over the limit of %d; skipped", info.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("grew over the limit of %d bytes while read; skipped", limit)
	}
	return data, nil
}

// digest returns the "sha256:<hex>" digest of data, as skill files carry.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// isText reports whether data is UTF-8 text without NUL bytes.
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}
