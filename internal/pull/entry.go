package pull

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Entry is one skill as the server listed it, with the parts a pull needs
// already taken apart. An entry that cannot be pulled has Err set and may
// lack every other field but Raw.
type Entry struct {
	// URI is the skill's SKILL.md URI.
	URI string `json:"uri"`
	// Scheme is the URI scheme, "skill" for skill:// URIs.
	Scheme string `json:"-"`
	// Path is the skill path: the URI path without /SKILL.md.
	Path string `json:"path"`
	// Name is the last segment of Path, which the specification makes equal
	// to the frontmatter name.
	Name string `json:"name"`
	// Description is the frontmatter description, for display.
	Description string `json:"description,omitempty"`
	// Frontmatter is the listed frontmatter object, as sent.
	Frontmatter json.RawMessage `json:"-"`
	// Files is the static manifest, nil when Dynamic.
	Files []File `json:"-"`
	// Dynamic reports a "dynamic" manifest: no sizes, no digests.
	Dynamic bool `json:"dynamic,omitempty"`
	// Required and Optional are the dependencies the entry's _meta declares.
	Required []string `json:"required,omitempty"`
	Optional []string `json:"optional,omitempty"`
	// Err says why the entry cannot be pulled, or is nil.
	Err error `json:"-"`

	// uriPath is Path as the skill's URIs spell it: percent-escaped, in
	// canonical form.
	uriPath string
}

// File is one file of a static manifest.
type File struct {
	URI    string
	Rel    string // path relative to the skill root, slash-separated
	Digest string
	Size   int64
}

// rootURI returns the URI of the skill's root.
func (e *Entry) rootURI() string {
	p := e.uriPath
	if p == "" {
		p = skillsext.EscapePath(e.Path)
	}
	return e.Scheme + "://" + p
}

// Bytes returns the total listed size of the entry's files.
func (e *Entry) Bytes() int64 {
	var n int64
	for _, f := range e.Files {
		n += f.Size
	}
	return n
}

// EntryError says why a listed entry cannot be pulled.
type EntryError struct {
	// URI is the entry's SKILL.md URI, when it has one.
	URI string
	// Reason says what is wrong.
	Reason string
}

// Error returns "invalid skill entry <uri>: <reason>".
func (e *EntryError) Error() string {
	if e.URI == "" {
		return "invalid skill entry: " + e.Reason
	}
	return fmt.Sprintf("invalid skill entry %s: %s", e.URI, e.Reason)
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// schemePattern is RFC 3986's scheme grammar, lowercase only.
var schemePattern = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)

// splitURI splits a skill URI under any scheme into scheme and path, with
// the grammar checks of skillsext.ParseURI applied to the path whatever the
// scheme: no query, fragment, userinfo, port, backslash, control
// character, empty, "." or ".." segment, or escape of one. The path comes
// back in ParseURI's canonical, escaped form.
func splitURI(uri string) (scheme, path string, err error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok || !schemePattern.MatchString(scheme) {
		return "", "", fmt.Errorf("%q is not a URI of the form scheme://path", truncate(uri, 200))
	}
	u, err := skillsext.ParseURI(skillsext.Scheme + "://" + rest)
	if err != nil {
		// ParseURI names the skill:// form; name the URI as sent.
		msg := strings.ReplaceAll(err.Error(), strconv.Quote(skillsext.Scheme+"://"+rest), strconv.Quote(uri))
		return "", "", errors.New(msg)
	}
	return scheme, u.Path, nil
}

// entryWire is the entry shape on the wire, with every field kept raw so
// that each problem is reported on its own.
type entryWire struct {
	URI         *string         `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
	Meta        json.RawMessage `json:"_meta"`
}

// parseEntry takes a listed entry apart and checks everything that can be
// checked without reading a file (SEP-2640 §1.4, H8). It never fails: a
// problem is recorded in Err.
func parseEntry(raw json.RawMessage) *Entry {
	e := &Entry{}
	fail := func(format string, args ...any) *Entry {
		e.Err = &EntryError{URI: e.URI, Reason: fmt.Sprintf(format, args...)}
		return e
	}
	var w entryWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return fail("not a JSON object: %v", err)
	}
	if w.URI == nil || *w.URI == "" {
		return fail("no uri")
	}
	e.URI = *w.URI
	scheme, p, err := splitURI(e.URI)
	if err != nil {
		return fail("%v", err)
	}
	uriPath, ok := strings.CutSuffix(p, "/"+skillsext.SkillFile)
	if !ok {
		return fail("the uri does not name a %s", skillsext.SkillFile)
	}
	skillPath, err := skillsext.UnescapePath(uriPath)
	if err != nil {
		return fail("%v", err)
	}
	e.Scheme, e.Path, e.uriPath = scheme, skillPath, uriPath
	e.Name = skillPath[strings.LastIndexByte(skillPath, '/')+1:]

	fm, err := decodeObject(w.Frontmatter)
	if err != nil {
		return fail("frontmatter: %v", err)
	}
	e.Frontmatter = w.Frontmatter
	if name, ok := fm.values["name"].(string); !ok {
		return fail("frontmatter has no string name")
	} else if name != e.Name {
		return fail("frontmatter name %q differs from the last segment of the skill path %q", name, e.Name)
	}
	e.Description, _ = fm.values["description"].(string)

	if err := e.parseMeta(w.Meta); err != nil {
		return fail("_meta: %v", err)
	}

	var res skillsext.Resources
	switch strings.TrimSpace(string(w.Resources)) {
	case "":
		return fail("no resources (want an array of files or \"dynamic\")")
	case "null":
		return fail("resources is null; want an array or \"dynamic\"")
	}
	if err := json.Unmarshal(w.Resources, &res); err != nil {
		return fail("%v", strings.TrimPrefix(err.Error(), "skillsext: "))
	}
	if res.Dynamic {
		e.Dynamic = true
		return e
	}
	if err := e.parseFiles(res.List); err != nil {
		return fail("%v", err)
	}
	return e
}

// parseFiles checks a static manifest: SKILL.md included exactly once, each
// URI once, every URI a file inside the skill, a safe relative path, a
// well-formed digest and a size.
func (e *Entry) parseFiles(list []skillsext.Resource) error {
	root := e.Scheme + "://" + e.uriPath
	e.Files = make([]File, 0, len(list))
	seen := make(map[string]bool, len(list))
	folded := make(map[string]string, len(list))
	var hasSkillMD bool
	for _, r := range list {
		if r.URI == "" {
			return errors.New("a resource has no uri")
		}
		if seen[r.URI] {
			return fmt.Errorf("resources list %s twice", r.URI)
		}
		seen[r.URI] = true
		rel, err := relOf(r.URI, e.Scheme, e.uriPath)
		if err != nil {
			return fmt.Errorf("resource %s: %v", r.URI, err)
		}
		if rel == "" {
			return fmt.Errorf("resource %s is outside the skill %s", r.URI, root)
		}
		if err := checkFileRel(rel); err != nil {
			return fmt.Errorf("resource %s: %v", r.URI, err)
		}
		if !digestPattern.MatchString(r.Digest) {
			return fmt.Errorf("resource %s: digest %q is not sha256:<64 lowercase hex>", r.URI, truncate(r.Digest, 80))
		}
		if r.Size < 0 {
			return fmt.Errorf("resource %s: negative size %d", r.URI, r.Size)
		}
		// Two names one case-insensitive filesystem would merge.
		key := strings.ToLower(rel)
		if other, ok := folded[key]; ok {
			return fmt.Errorf("resources %s and %s differ only in case", other, r.URI)
		}
		folded[key] = r.URI
		if r.URI == e.URI {
			hasSkillMD = true
		}
		e.Files = append(e.Files, File{URI: r.URI, Rel: rel, Digest: r.Digest, Size: r.Size})
	}
	if !hasSkillMD {
		return fmt.Errorf("resources do not include the skill's own %s", skillsext.SkillFile)
	}
	// A name cannot be both a file and a folder.
	for _, f := range e.Files {
		for dir := f.Rel; ; {
			i := strings.LastIndexByte(dir, '/')
			if i < 0 {
				break
			}
			dir = dir[:i]
			if other, ok := folded[strings.ToLower(dir)]; ok {
				return fmt.Errorf("%s is listed as a file and is also the folder of %s", other, f.URI)
			}
		}
	}
	return nil
}

// parseMeta reads the runtime dependencies a server publishes in the
// entry's _meta (skillsext.MetaDependencies, else the legacy key):
// {"required": [...], "optional": [...]}, each a skill name or "ns/name".
func (e *Entry) parseMeta(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &meta); err != nil {
		return errors.New("not an object")
	}
	d, ok := meta[skillsext.MetaDependencies]
	if !ok {
		d, ok = meta[skillsext.LegacyMetaDependencies]
	}
	if !ok {
		return nil
	}
	var deps struct {
		Required []string `json:"required"`
		Optional []string `json:"optional"`
	}
	if err := json.Unmarshal(d, &deps); err != nil {
		return fmt.Errorf("dependencies: %v", err)
	}
	for _, n := range append(append([]string(nil), deps.Required...), deps.Optional...) {
		if err := checkRel(n); err != nil {
			return fmt.Errorf("dependency %q: %v", truncate(n, 80), err)
		}
	}
	e.Required, e.Optional = deps.Required, deps.Optional
	return nil
}

// relOf returns the names of the path of uri below the skill root at
// uriPath (escaped) under scheme, unescaped, or "" when uri is not below
// it. The URI's escapes are compared in canonical form.
func relOf(uri, scheme, uriPath string) (string, error) {
	s, p, err := splitURI(uri)
	if err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(p, uriPath+"/")
	if s != scheme || !ok {
		return "", nil
	}
	return skillsext.UnescapePath(rest)
}

// checkRel checks a slash-separated relative path before any part of it
// becomes a file name: not empty, not absolute, no "." or ".." or empty
// segment, no backslash, NUL or other control character, no drive letter
// or other colon, and valid UTF-8.
func checkRel(rel string) error {
	switch {
	case rel == "":
		return errors.New("empty path")
	case !utf8.ValidString(rel):
		return errors.New("path is not valid UTF-8")
	case strings.HasPrefix(rel, "/"):
		return fmt.Errorf("absolute path %q", rel)
	case strings.ContainsRune(rel, '\\'):
		return fmt.Errorf("path %q contains a backslash", rel)
	case strings.ContainsRune(rel, ':'):
		return fmt.Errorf("path %q contains a colon (a drive letter or stream name)", rel)
	case len(rel) > skillsext.MaxURILength:
		return errors.New("path is too long")
	}
	for _, r := range rel {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("path %q contains a control character", rel)
		}
	}
	for seg := range strings.SplitSeq(rel, "/") {
		switch seg {
		case "":
			return fmt.Errorf("path %q has an empty segment", rel)
		case ".", "..":
			return fmt.Errorf("path %q has a %q segment", rel, seg)
		}
		if strings.HasPrefix(seg, stagePrefix) {
			return fmt.Errorf("path %q uses the reserved prefix %s", rel, stagePrefix)
		}
		// The URI grammar's name rule: a name our server would withhold
		// is never written either.
		if err := skillsext.CheckName(seg); err != nil {
			return fmt.Errorf("path %s: %v", strconv.QuoteToASCII(rel), err)
		}
	}
	return nil
}

// checkFileRel checks the path of a file below a skill's root: checkRel,
// and no segment that begins with a dot. A skills server never serves
// dotfiles or dot-folders (ours withholds them), and a hostile one could
// plant .git/config with an fsmonitor command that runs on the next git
// command in the folder, or a .envrc, or an editor's settings.
func checkFileRel(rel string) error {
	if err := checkRel(rel); err != nil {
		return err
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return fmt.Errorf("path %q holds the dot-name %q: pull never writes dotfiles or dot-folders, which a skills server never serves", rel, seg)
		}
	}
	return nil
}

// checkDir checks the folder a skill is written to, relative to the
// destination: checkRel, a skill name (the last segment) that does not
// begin with a dot, and no segment that is a version-control folder. The
// folders above a skill may be dot-folders (.claude/skills/…), as our
// catalog finds skills there, but never .git, .hg or .svn, which it never
// enters: a skill folder there would write into the repository's own
// metadata.
func checkDir(dir string) error {
	if err := checkRel(dir); err != nil {
		return err
	}
	if name := dir[strings.LastIndexByte(dir, '/')+1:]; strings.HasPrefix(name, ".") {
		return fmt.Errorf("the skill name %q begins with a dot: pull never writes dot-folders", name)
	}
	for seg := range strings.SplitSeq(dir, "/") {
		if isVCS(seg) {
			return fmt.Errorf("path %q goes through %q: pull never writes into version-control metadata", dir, seg)
		}
	}
	return nil
}

// vcsNames are the version-control metadata folders (or, for a git
// worktree or submodule, files) that pull never writes into, replaces or
// deletes.
var vcsNames = []string{".git", ".hg", ".svn", ".bzr", "_darcs"}

// isVCS reports whether name is a version-control folder, in any case and
// with trailing dots or spaces, which case-insensitive and Windows file
// systems ignore.
func isVCS(name string) bool {
	name = strings.TrimRight(name, ". ")
	for _, v := range vcsNames {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	return false
}

// object is a decoded JSON object that remembers its key order.
type object struct {
	keys   []string
	values map[string]any
}

// decodeObject decodes a JSON object strictly: duplicate keys, at any
// depth, are an error, since two readers could each believe a different
// copy. Numbers are kept as json.Number.
func decodeObject(raw json.RawMessage) (*object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("missing")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	obj, err := decodeMembers(dec, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the object")
	}
	return obj, nil
}

// maxDepth bounds nesting while decoding, so a hostile document cannot
// exhaust the stack.
const maxDepth = 64

func decodeMembers(dec *json.Decoder, depth int) (*object, error) {
	obj := &object{values: map[string]any{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		if _, dup := obj.values[k]; dup {
			return nil, fmt.Errorf("key %q appears twice", k)
		}
		v, err := decodeValue(dec, depth)
		if err != nil {
			return nil, err
		}
		obj.keys = append(obj.keys, k)
		obj.values[k] = v
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	return obj, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return decodeMembers(dec, depth+1)
	case json.Delim('['):
		var list []any
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		if list == nil {
			list = []any{}
		}
		return list, nil
	}
	return tok, nil // string, json.Number, bool or nil
}
