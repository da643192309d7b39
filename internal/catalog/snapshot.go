package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/lint"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/search"
	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Snapshot is an immutable catalog: what one scan of the libraries found.
// All methods are safe for concurrent use.
type Snapshot struct {
	// Generation increases with every scan a Store has seen.
	Generation uint64
	// ScannedAt and ScanDuration say when the scan ran and how long it took.
	ScannedAt    time.Time
	ScanDuration time.Duration

	all         []*Skill          // served skills, sorted by URI
	skills      []*Skill          // the listed ones: all but hidden skills
	byURI       map[string]*Skill // every served skill, hidden ones too
	byPath      map[string]*Skill
	byName      map[string][]*Skill // frontmatter name → skills, across libraries
	reads       int                 // files read by the scan (the rest were reused)
	search      *search.Index
	searchOnce  sync.Once
	searchReady chan struct{} // closed once search is built
	// searchStarted says that searchOnce ran: searchReady will close.
	searchStarted atomic.Bool
	// searchWhole says that search indexed every body as the scan found
	// it, so that a later index may be updated from it.
	searchWhole bool
	cache       *DigestCache // where the search index is saved and loaded, if set
	log         *slog.Logger // set with cache
	files       []*File      // every served file, sorted by URI
	// foldersListed and relisted are the walks' counts (see walk).
	foldersListed, relisted int
	// libs are the libraries scanned.
	libs []*Library
	// scanned is what the scan learned, kept for a later Scan, Unchanged
	// and Watcher.Sync, in snapshots Scan returned; a Reloader keeps that
	// of its rescans itself. Set before the snapshot is returned, like
	// every field here but the search index, built once under searchOnce.
	scanned   *scanState
	warnings  []Warning
	libraries []LibraryStats
	vaults    []*Vault
	vaultURIs map[string]VaultResource // playbook:// and value-chain:// URI → what it names
	pending   bool                     // the empty catalog of a store whose first scan runs
	// merged says that the skills are the parts' of a Merge: their bodies
	// are theirs to drop, not this snapshot's.
	merged bool
}

// Pending reports whether s is the empty placeholder a store serves before
// its first scan ends.
func (s *Snapshot) Pending() bool { return s.pending }

// Skill is one served skill.
type Skill struct {
	// Library is the namespace of the library serving the skill.
	Library string
	// Path is the skill path: the URI path of the skill root, which ends in
	// the frontmatter name.
	Path string
	// Folder is the skill's folder below its library root (slash-separated,
	// "." for a library root that is itself a skill). Operators only.
	Folder string
	// URI is the skill's SKILL.md URI.
	URI         string
	Name        string
	Description string
	// Frontmatter is the SKILL.md frontmatter rendered as JSON, keys in
	// source order.
	Frontmatter json.RawMessage
	// body is the SKILL.md text after the frontmatter, held until the
	// snapshot's search index is built; Body reads it from the file after.
	body atomic.Pointer[string]
	md   *File // the SKILL.md
	tree tree  // how its library is read
	// Files is the complete manifest, sorted by URI: every served file below
	// the skill folder, SKILL.md and the files of nested skills included.
	Files []*File
	// Bytes is the total size of Files.
	Bytes int64
	// Category is the frontmatter category, else the folder path between
	// the library root and the skill folder, else "uncategorized".
	Category string
	// Tags are the frontmatter tags and trigger-phrases.
	Tags []string
	// Setup is the frontmatter requires list: external tools and keys,
	// not skills.
	Setup []string
	// ValueChains and ChainStage are the frontmatter value-chains and
	// chain-stage: where the skill sits in its vault's value chains.
	ValueChains []string
	ChainStage  string
	// Dependencies are the runtime dependencies the body declares.
	Dependencies skill.Dependencies
	// Closure holds the skill paths of the transitive required
	// dependencies within the skill's library, the skill itself excluded.
	Closure []string
	// Missing names required dependencies (direct or transitive) that the
	// library does not serve.
	Missing []string
	// Risks are the risk linter's findings in the skill's files, paths
	// relative to the skill folder. They label; they never withhold.
	Risks []lint.Finding
	// Hidden skills (disable-model-invocation: true) are served but not
	// listed: skills/get and resources/read answer for them, listings,
	// search and tools do not.
	Hidden bool
	// bodyOffset is where the body starts in SKILL.md (at most
	// MaxSkillMDBytes); beside Hidden, it fits the padding after it.
	bodyOffset int32
}

// Body returns the SKILL.md text after the frontmatter. A skill keeps it in
// memory only until its snapshot's search index is built (at 100,000
// skills the bodies are a fifth of the catalog); then it reads the file,
// verified against the digest it published (ErrChanged if it changed).
func (s *Skill) Body() (string, error) {
	if b := s.body.Load(); b != nil {
		return *b, nil
	}
	if s.md == nil {
		return "", nil
	}
	data, err := s.md.ReadFile()
	if err != nil {
		return "", err
	}
	if int(s.bodyOffset) > len(data) {
		return "", ErrChanged
	}
	return string(data[int(s.bodyOffset):]), nil
}

// RiskFlags returns the rule IDs of the skill's findings of warning
// severity or above, sorted, without duplicates. Findings an author marked
// lint-ignore count too: the marker is the word of the party being
// labelled, so serving keeps the label (and shows the reason in
// get_skill); the lint command honours the marker for authors' own CI.
func (s *Skill) RiskFlags() []string {
	var out []string
	for _, f := range s.Risks {
		if f.Severity >= lint.Warning && !slices.Contains(out, f.Rule) {
			out = append(out, f.Rule)
		}
	}
	slices.Sort(out)
	return out
}

// Entry returns the skill's skills/list entry as JSON. It is encoded on
// each call (about a microsecond): keeping every entry encoded would cost
// more memory than the listing saves in time.
func (s *Skill) Entry() json.RawMessage { return encodeEntry(s) }

// File is one served file.
type File struct {
	URI      string
	Size     int64
	Digest   Digest
	MIMEType string
	// Text reports whether the content is valid UTF-8 and is sent as text.
	Text bool
	// plain reports that URI needs no escape in JSON, so that a listing
	// copies it as it is.
	plain bool
	// Script says how the file is run when it is a script, else nil.
	Script *skill.Script
	// Skill is the innermost skill that owns the file; for the SKILL.md of
	// a skill it is that skill.
	Skill *Skill

	name string // path below the library root, read through Skill.tree
}

// Entry is one child in a directory listing.
type Entry struct {
	URI      string
	Name     string
	MIMEType string
	// Description is set for a SKILL.md: the skill's description.
	Description string
	Size        int64 // files only
	// File is set for files, nil for directories.
	File *File
}

// IsDir reports whether the entry is a directory.
func (e Entry) IsDir() bool { return e.File == nil }

// Warning is a problem found by a scan. Warnings never stop a scan.
type Warning struct {
	// Library is the namespace of the library ("" when un-namespaced).
	Library string
	// Path is the affected file or folder below the library root, or "".
	Path string
	// Reason is a short stable code: "frontmatter", "name-mismatch",
	// "duplicate-uri", "archive", "oversize", "skipped-files", "symlink",
	// "unreadable", "special-file", "depth", "name".
	Reason  string
	Message string
}

// String renders the warning for MCP output: the library root is shown as
// <namespace>, never as a path.
func (w Warning) String() string {
	where := "<" + w.Library + ">"
	if w.Library == "" {
		where = "<root>"
	}
	if w.Path != "" {
		where += "/" + w.Path
	}
	return where + ": " + w.Message
}

// LibraryStats counts what one library contributed.
type LibraryStats struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	// Origin is the operator-facing source (a directory path). It must not
	// be shown to MCP clients.
	Origin   string `json:"origin"`
	Info     Info   `json:"info"`
	Skills   int    `json:"skills"`
	Hidden   int    `json:"hidden"`
	Withheld int    `json:"withheld"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	// ScriptsWithheld counts script files not served (--no-scripts).
	ScriptsWithheld int `json:"scriptsWithheld"`
	// Vault reports whether the library has a vault; the fields after it
	// count what the vault serves and hides.
	Vault             bool   `json:"vault"`
	Playbooks         int    `json:"playbooks"`
	PlaybooksHidden   int    `json:"playbooksHidden"`
	PlaybooksPrivate  int    `json:"playbooksPrivate"`
	PlaybookRunner    string `json:"playbookRunner,omitempty"`
	ValueChains       int    `json:"valueChains"`
	ValueChainBuckets int    `json:"valueChainBuckets"`
	ValueChainSource  string `json:"valueChainSource,omitempty"`
}

// Stats summarises a snapshot for --stats and logs.
type Stats struct {
	Skills          int            `json:"skills"`
	Hidden          int            `json:"hidden"`
	Withheld        int            `json:"withheld"`
	ScriptsWithheld int            `json:"scriptsWithheld"`
	Files           int            `json:"files"`
	Bytes           int64          `json:"bytes"`
	Libraries       []LibraryStats `json:"libraries"`
	Warnings        []Warning      `json:"warnings"`
	ByReason        map[string]int `json:"warningsByReason"`
	ScanMillis      float64        `json:"scanMs"`
	Generation      uint64         `json:"generation"`
	// FlaggedSkills counts listed skills with risk flags.
	FlaggedSkills int `json:"flaggedSkills"`
	// FilesRead counts the files the scan read; the others were unchanged
	// since the previous scan and reused.
	FilesRead int `json:"filesRead"`
	// FoldersListed counts the folders the scan listed; the others were
	// unchanged since an earlier scan, whose listing the digest cache kept.
	FoldersListed int `json:"foldersListed"`
	// Playbooks and ValueChains count what the libraries' vaults serve.
	Playbooks   int `json:"playbooks"`
	ValueChains int `json:"valueChains"`
}

// Stats returns the snapshot's statistics.
func (s *Snapshot) Stats() Stats {
	st := Stats{
		Skills:        len(s.skills),
		Hidden:        len(s.all) - len(s.skills),
		Libraries:     append([]LibraryStats(nil), s.libraries...),
		Warnings:      append([]Warning{}, s.warnings...),
		ByReason:      map[string]int{},
		ScanMillis:    millis(s.ScanDuration),
		Generation:    s.Generation,
		FilesRead:     s.reads,
		FoldersListed: s.foldersListed,
	}
	for _, l := range s.libraries {
		st.Withheld += l.Withheld
		st.ScriptsWithheld += l.ScriptsWithheld
		st.Files += l.Files
		st.Bytes += l.Bytes
		st.Playbooks += l.Playbooks
		st.ValueChains += l.ValueChains
	}
	for _, w := range s.warnings {
		st.ByReason[w.Reason]++
	}
	for _, sk := range s.skills {
		if len(sk.RiskFlags()) > 0 {
			st.FlaggedSkills++
		}
	}
	return st
}

// Skills returns the listed skills sorted by URI: every served skill but
// the hidden ones. The slice must not be modified.
func (s *Snapshot) Skills() []*Skill { return s.skills }

// All returns every served skill sorted by URI, hidden ones included. The
// slice must not be modified.
func (s *Snapshot) All() []*Skill { return s.all }

// Len returns the number of listed skills.
func (s *Snapshot) Len() int { return len(s.skills) }

// Warnings returns the scan's warnings. The slice must not be modified.
func (s *Snapshot) Warnings() []Warning { return s.warnings }

// Skill returns the skill whose SKILL.md URI is uri, hidden or not.
func (s *Snapshot) Skill(uri string) (*Skill, bool) {
	sk, ok := s.byURI[uri]
	return sk, ok
}

// File returns the served file at uri.
func (s *Snapshot) File(uri string) (*File, bool) {
	i, ok := slices.BinarySearchFunc(s.files, uri, func(f *File, uri string) int { return strings.Compare(f.URI, uri) })
	if !ok {
		return nil, false
	}
	return s.files[i], true
}

// IsDirectory reports whether uri is a directory resource: the root of a
// served skill, or a folder below one that holds served files.
func (s *Snapshot) IsDirectory(uri string) bool {
	_, _, ok := s.dirRange(uri)
	return ok
}

// Directory returns the direct children of the directory resource at uri,
// sorted by URI: its files, and its folders as inode/directory entries.
// The listing is derived from the sorted files on each call; a folder's
// subtree is skipped with one binary search, so the cost grows with the
// number of children, not with the files below them.
func (s *Snapshot) Directory(uri string) ([]Entry, bool) {
	lo, hi, ok := s.dirRange(uri)
	if !ok {
		return nil, false
	}
	entries := []Entry{}
	for i := lo; i < hi; {
		f := s.files[i]
		rest := f.URI[len(uri)+1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			sub := f.URI[:len(uri)+1+j]
			entries = append(entries, Entry{URI: sub, Name: unescapeName(rest[:j]), MIMEType: skillsext.DirectoryMIMEType})
			i = s.after(sub+"/", i, hi)
			continue
		}
		e := Entry{URI: f.URI, Name: unescapeName(rest), MIMEType: f.MIMEType, Size: f.Size, File: f}
		if owner, ok := s.byURI[f.URI]; ok {
			e.Name, e.Description = owner.Name, owner.Description
		}
		entries = append(entries, e)
		i++
	}
	// A folder sorts by its own URI, before files that extend its name
	// with a byte below '/' ("ref" before "ref.md"), which the files'
	// order puts first.
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.URI, b.URI) })
	return entries, true
}

// dirRange returns the range of s.files below the URI dir, and whether dir
// is a directory resource.
func (s *Snapshot) dirRange(dir string) (lo, hi int, ok bool) {
	lo, hi = s.below(dir)
	if _, root := s.byURI[dir+"/"+skillsext.SkillFile]; root {
		return lo, hi, true
	}
	return lo, hi, lo < hi && s.insideSkill(dir)
}

// below returns the range of s.files under the directory URI dir.
func (s *Snapshot) below(dir string) (lo, hi int) {
	prefix := dir + "/"
	lo, _ = slices.BinarySearchFunc(s.files, prefix, func(f *File, p string) int { return strings.Compare(f.URI, p) })
	return lo, s.after(prefix, lo, len(s.files))
}

// after returns the first index in [lo, hi) of s.files whose URI does not
// start with prefix, given that the URIs from lo on that do come first.
func (s *Snapshot) after(prefix string, lo, hi int) int {
	return lo + sort.Search(hi-lo, func(i int) bool { return !strings.HasPrefix(s.files[lo+i].URI, prefix) })
}

// insideSkill reports whether the directory URI dir is at or below the
// root of a served skill.
func (s *Snapshot) insideSkill(dir string) bool {
	for {
		if _, ok := s.byURI[dir+"/"+skillsext.SkillFile]; ok {
			return true
		}
		i := strings.LastIndexByte(dir, '/')
		if i < 0 || strings.HasSuffix(dir[:i], ":/") {
			return false // the scheme's "//": no skill root above
		}
		dir = dir[:i]
	}
}

// SkillsAfter returns up to n listed skills whose URI sorts after key, and
// whether more follow.
func (s *Snapshot) SkillsAfter(key string, n int) ([]*Skill, bool) {
	i := sort.Search(len(s.skills), func(i int) bool { return s.skills[i].URI > key })
	end := min(i+n, len(s.skills))
	return s.skills[i:end], end < len(s.skills)
}

// ErrChanged is returned by ReadFile when a file no longer matches the size
// or digest the snapshot published for it.
var ErrChanged = errors.New("catalog: file changed on disk since the catalog was built")

// Name returns the file's path below its library root, slash-separated.
// It is for tools that copy a library, never for MCP output.
func (f *File) Name() string { return f.name }

// ReadFile returns the content of f. It verifies the bytes against the size
// and digest the snapshot published, so a client never receives bytes that
// contradict the manifest it holds; on a mismatch it returns ErrChanged.
func (f *File) ReadFile() ([]byte, error) {
	r, err := f.Skill.tree.open(f.name)
	return readVerified(r, err, f.URI, f.Size, f.Digest.String())
}

// readVerified reads r, just opened (with openErr), which must hold exactly
// size bytes with digest; ErrChanged otherwise. It reads one byte more than
// published, so that growth is detected. Errors name the file as what, and
// r is closed.
func readVerified(r io.ReadCloser, openErr error, what string, size int64, digest string) ([]byte, error) {
	if errors.Is(openErr, regfile.ErrNotRegular) {
		// Swapped for a FIFO, a device or a folder since the scan: what
		// the snapshot published is gone, and the next scan withholds it.
		return nil, fmt.Errorf("opening %s: %w: %w", what, openErr, ErrChanged)
	}
	if openErr != nil {
		return nil, fmt.Errorf("opening %s: %w", what, openErr)
	}
	defer r.Close()
	// One buffer of the published size (and the byte that shows growth):
	// io.ReadAll would grow one by doubling, leaving as much again of
	// garbage for every large file read.
	buf := make([]byte, size+1)
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	data := buf[:n:n]
	if int64(len(data)) != size || digestOf(data) != digest {
		return nil, ErrChanged
	}
	return data, nil
}

// skillPathJoin joins non-empty segments with "/".
func skillPathJoin(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" || p == "." {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(p)
	}
	return b.String()
}

// unescapeName returns the name of an escaped URI segment of a served
// file, which always unescapes.
func unescapeName(seg string) string {
	name, err := skillsext.UnescapePath(seg)
	if err != nil {
		return seg
	}
	return name
}
