package check

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// declared is what the server's capabilities promise.
type declared struct {
	extension     bool
	directoryRead bool
}

// capabilities checks the declaration of the extension (S1, S2).
func (c *checker) capabilities(s *session) declared {
	v := s.version
	var d declared
	ir := s.cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		c.rec.add(Fail, "capability-declared", v, "", "the server declared no capabilities")
		return d
	}
	caps := ir.Capabilities
	if caps.Resources == nil {
		c.rec.add(Fail, "capability-resources", v, "", "the resources capability is missing; skill files are served through resources/read")
	} else {
		c.rec.ok("capability-resources", v)
	}
	settings, ok := caps.Extensions[skillsext.ExtensionID]
	if !ok {
		c.rec.add(Fail, "capability-declared", v, "", "capabilities.extensions has no %q", skillsext.ExtensionID)
		return d
	}
	d.extension = true
	c.rec.ok("capability-declared", v)
	m, isObject := settings.(map[string]any)
	if !isObject {
		c.rec.add(Fail, "capability-inline", v, "", "the settings of %s are %s; want a JSON object such as {} or {\"directoryRead\":true}", skillsext.ExtensionID, jsonKind(settings))
		return d
	}
	bad := false
	for k, val := range m {
		switch {
		case k == "directoryRead":
			b, isBool := val.(bool)
			if !isBool {
				c.rec.add(Fail, "capability-inline", v, "", "directoryRead is %s; want a boolean", jsonKind(val))
				bad = true
			}
			d.directoryRead = b
		case isMap(val):
			c.rec.add(Fail, "capability-inline", v, "", "the settings hold an object under %q; settings sit directly under the identifier, with no envelope", k)
			bad = true
		}
	}
	if !bad {
		c.rec.ok("capability-inline", v)
	}
	return d
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// listing is one complete (or capped) walk of skills/list.
type listing struct {
	entries  []*entry
	complete bool
	// cursors are the nextCursor values in the order received.
	cursors []string
	// pages holds the entry URIs of each page, for the cursor probe.
	pages [][]string
}

// entry is one skills/list entry as the checks see it.
type entry struct {
	uri   string
	raw   json.RawMessage
	valid bool // uri, frontmatter and resources have the right types
	// root is the skill root: uri without "/SKILL.md" (or uri itself when
	// it does not end so).
	root        string
	scheme      string
	frontmatter map[string]json.RawMessage
	fmRaw       json.RawMessage
	name        string
	description string
	dynamic     bool
	files       []resource
	meta        map[string]json.RawMessage
	fixture     *oracle.Fixture
	// skillMD holds the SKILL.md bytes of the first read, when read.
	skillMD []byte
}

// resource is one element of an entry's resources.
type resource struct {
	uri    string
	digest string
	size   int64
	ok     bool // well formed
}

// list pages through skills/list and returns what it collected. Only the
// first connection reports the entries' shape.
func (c *checker) list(ctx context.Context, s *session) *listing {
	v := s.version
	first := c.rec.conn == 0
	l := &listing{}
	seenCursor := map[string]int{}
	seenURI := map[string]int{}
	scope := ""
	cursor := ""
	for page := 1; ; page++ {
		if page > c.opts.MaxPages {
			c.rec.add(Fail, "list-terminates", v, "skills/list", "still returned a nextCursor after %d pages (%d entries; last: %s); hosts stop far earlier and drop the listing",
				c.opts.MaxPages, len(l.entries), lastURIs(l.entries, 2))
			break
		}
		raw, err := call(ctx, s, skillsext.MethodList, &skillsext.ListSkillsParams{Cursor: cursor})
		if err != nil {
			switch {
			case page == 1 && code(err) == -32601:
				c.rec.add(Fail, "list-implemented", v, "skills/list", "the method is not implemented (-32601), though the extension is declared")
			case page == 1:
				c.rec.add(Fail, "list-implemented", v, "skills/list", "the first page failed: %v", err)
			default:
				c.rec.add(Fail, "list-terminates", v, "skills/list", "page %d (cursor %s) failed: %v", page, truncate(cursor, 40), err)
			}
			return l
		}
		m, err := object(raw)
		if err != nil {
			c.rec.add(Fail, "list-implemented", v, "skills/list", "page %d: %v", page, err)
			return l
		}
		var items []json.RawMessage
		if err := json.Unmarshal(m["skills"], &items); err != nil || items == nil {
			c.rec.add(Fail, "list-implemented", v, "skills/list", "page %d has no skills array (skills is %s)", page, kind(m["skills"]))
			return l
		}
		c.resultType(s, m, fmt.Sprintf("skills/list page %d", page))
		if sc := c.cacheFields(s, m, fmt.Sprintf("skills/list page %d", page)); sc != "" {
			if scope != "" && sc != scope {
				c.rec.add(Fail, "cache-fields", v, "skills/list", "page %d has cacheScope %q, page 1 had %q; one listing has one scope", page, sc, scope)
			}
			scope = sc
		}
		var uris []string
		for _, item := range items {
			if len(l.entries) >= c.opts.MaxEntries {
				c.rec.add(Skip, "list-terminates", v, "skills/list", "stopped after %d entries; the rest of the listing is not checked", c.opts.MaxEntries)
				return l
			}
			e := c.parseEntry(item, v, first)
			if p, dup := seenURI[e.uri]; dup && e.uri != "" {
				c.rec.add(Fail, "list-entry-atomic", v, e.uri, "listed twice, on page %d and page %d", p, page)
				continue
			}
			seenURI[e.uri] = page
			l.entries = append(l.entries, e)
			uris = append(uris, e.uri)
		}
		l.pages = append(l.pages, uris)
		next, isStr := str(m, "nextCursor")
		if raw, present := m["nextCursor"]; present && !isStr && string(raw) != "null" {
			c.rec.add(Fail, "list-terminates", v, "skills/list", "page %d has nextCursor %s; want a string", page, kind(raw))
			return l
		}
		if next == "" {
			l.complete = true
			break
		}
		if p, again := seenCursor[next]; again {
			c.rec.add(Fail, "list-terminates", v, "skills/list", "page %d returned the cursor page %d returned: the listing loops", page, p)
			return l
		}
		seenCursor[next] = page
		l.cursors = append(l.cursors, next)
		cursor = next
	}
	if l.complete {
		c.rec.ok("list-implemented", v)
		c.rec.ok("list-terminates", v)
		c.rec.ok("list-entry-atomic", v)
	} else if len(l.entries) > maxVerifiedWhenEndless {
		c.rec.add(Skip, "list-terminates", v, "skills/list", "the listing did not end; only its first %d entries are checked", maxVerifiedWhenEndless)
		l.entries = l.entries[:maxVerifiedWhenEndless]
	}
	return l
}

func lastURIs(es []*entry, n int) string {
	var out []string
	for i := max(0, len(es)-n); i < len(es); i++ {
		out = append(out, es[i].uri)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// parseEntry decodes one entry and, when report is set, reports its shape
// (S15, S19, S20).
func (c *checker) parseEntry(raw json.RawMessage, v string, report bool) *entry {
	e := &entry{raw: raw}
	fail := func(id, format string, args ...any) {
		if report {
			c.rec.add(Fail, id, v, e.uri, format, args...)
		}
	}
	m, err := object(raw)
	if err != nil {
		fail("entry-shape", "an entry is not an object: %v", err)
		return e
	}
	var problems []string
	uri, ok := str(m, "uri")
	if !ok || uri == "" {
		problems = append(problems, "uri is missing or not a string")
	}
	e.uri = uri
	e.root, _ = strings.CutSuffix(uri, "/"+skillsext.SkillFile)
	if i := strings.Index(uri, ":"); i > 0 {
		e.scheme = strings.ToLower(uri[:i])
	}
	fm, err := object(m["frontmatter"])
	if err != nil {
		problems = append(problems, "frontmatter: "+err.Error())
	}
	e.frontmatter, e.fmRaw = fm, m["frontmatter"]
	e.name, _ = str(fm, "name")
	e.description, _ = str(fm, "description")
	if mm, err := object(m["_meta"]); err == nil {
		e.meta = mm
		if fxRaw, ok := mm[oracle.MetaKey]; ok {
			var fx oracle.Fixture
			if json.Unmarshal(fxRaw, &fx) == nil && fx.ID != "" {
				e.fixture = &fx
			}
		}
	}
	resRaw, present := m["resources"]
	var list []json.RawMessage
	switch {
	case !present:
		problems = append(problems, "resources is missing")
	case string(resRaw) == `"dynamic"`:
		e.dynamic = true
	case json.Unmarshal(resRaw, &list) != nil || list == nil:
		problems = append(problems, fmt.Sprintf(`resources is %s; want an array or "dynamic"`, kind(resRaw)))
	case len(list) == 0:
		problems = append(problems, "resources is empty; it must at least list SKILL.md")
	}
	if len(problems) > 0 {
		fail("entry-shape", "%s", strings.Join(problems, "; "))
		return e
	}
	e.valid = true
	if report {
		if e.dynamic {
			c.rec.add(Warn, "entry-shape", v, e.uri, `resources is "dynamic": nothing can be verified (S20), and hosts may decline the skill (H9)`)
		} else {
			c.rec.ok("entry-shape", v)
		}
	}
	for i, r := range list {
		rm, err := object(r)
		res := resource{}
		if err == nil {
			res.uri, _ = str(rm, "uri")
			res.digest, _ = str(rm, "digest")
			var size json.Number
			if json.Unmarshal(rm["size"], &size) == nil {
				if n, err := size.Int64(); err == nil && n >= 0 {
					res.size, res.ok = n, true
				}
			}
		}
		if res.uri == "" || !digestRE().MatchString(res.digest) || !res.ok {
			res.ok = false
			if report {
				c.rec.add(Fail, "resources-digest-format", v, e.uri, "resources[%d] (%s) needs a uri, a digest sha256:<64 lowercase hex> and an integer size ≥ 0; got %s",
					i, cmp.Or(res.uri, "no uri"), truncate(string(r), 160))
			}
		} else if report {
			c.rec.ok("resources-digest-format", v)
		}
		e.files = append(e.files, res)
	}
	return e
}

var (
	digestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })
	// regName is an RFC 3986 reg-name: unreserved characters,
	// sub-delimiters and percent-escapes.
	regName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})+$`) })
)

// entryChecks runs the checks that need only the listing.
func (c *checker) entryChecks(l *listing, v string) {
	names := map[string][]string{}
	for _, e := range l.entries {
		if !e.valid {
			continue
		}
		c.uriChecks(e, v)
		c.nameChecks(e, v)
		names[e.name] = append(names[e.name], e.uri)
		if !e.dynamic {
			c.manifestChecks(e, v)
		}
	}
	for _, e := range l.entries {
		if uris := names[e.name]; e.valid && e.name != "" && len(uris) > 1 {
			if uris[0] == e.uri {
				c.rec.add(Warn, "names-unique", v, e.uri, "%d entries are named %q (%s); hosts must disambiguate them by URI (H6)", len(uris), e.name, strings.Join(uris, ", "))
			}
			continue
		}
		if e.valid {
			c.rec.ok("names-unique", v)
		}
	}
}

func (c *checker) uriChecks(e *entry, v string) {
	switch e.scheme {
	case skillsext.Scheme:
		c.rec.ok("entry-uri-scheme", v)
	case "file":
		c.rec.add(Fail, "entry-uri-scheme", v, e.uri, "the entry names the host's own file system (file: URI); hosts must reject it by its scheme")
	default:
		c.rec.add(Warn, "entry-uri-scheme", v, e.uri, "the scheme %q is not skill:// (S8 SHOULD)", e.scheme)
	}
	var problems []string
	if !strings.HasSuffix(e.uri, "/"+skillsext.SkillFile) {
		problems = append(problems, "it does not end in /SKILL.md")
	}
	if e.scheme == skillsext.Scheme {
		if u, err := skillsext.ParseURI(e.uri); err != nil {
			problems = append(problems, err.Error())
		} else if u.SkillPath() == "" {
			problems = append(problems, "it has no skill path before /SKILL.md")
		} else if auth, _, _ := strings.Cut(u.Path, "/"); !regName().MatchString(auth) {
			c.rec.add(Warn, "authority-reg-name", v, e.uri, "the authority %q is not an RFC 3986 reg-name (S10 SHOULD)", auth)
		} else {
			c.rec.ok("authority-reg-name", v)
		}
	} else if strings.ContainsAny(e.uri, "?#") {
		problems = append(problems, "it has a query or fragment")
	}
	if len(problems) > 0 {
		c.rec.add(Fail, "entry-uri-grammar", v, e.uri, "%s", strings.Join(problems, "; "))
	} else {
		c.rec.ok("entry-uri-grammar", v)
	}
}

func (c *checker) nameChecks(e *entry, v string) {
	name, ok := str(e.frontmatter, "name")
	switch {
	case !ok:
		c.rec.add(Fail, "entry-name", v, e.uri, "frontmatter name is missing or not a string")
	case skill.CheckName(name) != nil:
		c.rec.add(Fail, "entry-name", v, e.uri, "frontmatter name %q: %v", name, skill.CheckName(name))
	case e.root[strings.LastIndexByte(e.root, '/')+1:] != name:
		c.rec.add(Fail, "entry-name", v, e.uri, "the final skill-path segment is %q, the frontmatter name %q; they must be equal", e.root[strings.LastIndexByte(e.root, '/')+1:], name)
	default:
		c.rec.ok("entry-name", v)
	}
	desc, ok := str(e.frontmatter, "description")
	switch {
	case !ok:
		c.rec.add(Fail, "entry-description", v, e.uri, "frontmatter description is missing or not a string")
	case strings.TrimSpace(desc) == "":
		c.rec.add(Fail, "entry-description", v, e.uri, "frontmatter description is blank")
	case utf8.RuneCountInString(desc) > 1024:
		c.rec.add(Fail, "entry-description", v, e.uri, "frontmatter description has %d characters; at most 1024", utf8.RuneCountInString(desc))
	default:
		c.rec.ok("entry-description", v)
	}
	if md, err := object(e.frontmatter["metadata"]); err == nil {
		for k := range md {
			if strings.HasPrefix(k, "io.modelcontextprotocol/") {
				c.rec.add(Warn, "metadata-reserved-prefix", v, e.uri, "frontmatter metadata key %q uses the prefix reserved for MCP extensions", k)
				return
			}
		}
	}
	c.rec.ok("metadata-reserved-prefix", v)
}

func (c *checker) manifestChecks(e *entry, v string) {
	self, seen := 0, map[string]bool{}
	var total int64
	for _, r := range e.files {
		if r.uri == e.uri {
			self++
		}
		if r.uri != "" && seen[r.uri] {
			c.rec.add(Fail, "resources-unique", v, e.uri, "%s is listed more than once", r.uri)
		}
		seen[r.uri] = true
		if r.uri != "" && r.uri != e.uri && !strings.HasPrefix(r.uri, e.root+"/") {
			c.rec.add(Fail, "resources-within", v, e.uri, "%s lies outside the skill root %s", r.uri, e.root)
		} else {
			c.rec.ok("resources-within", v)
		}
		total += r.size
	}
	if self != 1 {
		c.rec.add(Fail, "resources-self", v, e.uri, "resources has %d elements equal to the entry uri; want exactly 1 (SKILL.md)", self)
	} else {
		c.rec.ok("resources-self", v)
	}
	c.rec.ok("resources-unique", v)
	switch {
	case len(e.files) > skillsext.MaxResources:
		c.rec.add(Warn, "limits", v, e.uri, "%d files, over the %d a skill should not exceed; hosts may decline it (H16)", len(e.files), skillsext.MaxResources)
	case total > skillsext.MaxTotalBytes:
		c.rec.add(Warn, "limits", v, e.uri, "%d bytes, over the 16 MiB (%d bytes) a skill should not exceed; hosts may decline it (H16)", total, skillsext.MaxTotalBytes)
	default:
		c.rec.ok("limits", v)
	}
}

// bytes returns the declared size of the entry's files.
func (e *entry) bytes() int64 {
	var n int64
	for _, r := range e.files {
		n += r.size
	}
	return n
}
