package check

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// directories walks every skill root with resources/directory/read and
// compares what it finds with the entry's manifest (S5, S17, S33, S34).
func (c *checker) directories(ctx context.Context, s *session, l *listing) {
	for _, e := range l.entries {
		if !e.valid {
			continue
		}
		w := c.walk(ctx, s, e)
		if w == nil || !w.complete || e.dynamic {
			continue
		}
		c.complete(s.version, e, w)
	}
}

// walked is what a directory walk of one skill found.
type walked struct {
	files    map[string]bool
	dirs     map[string]bool
	complete bool
}

// walk lists every directory below the skill root, breadth first. It
// returns nil when the root itself cannot be listed.
func (c *checker) walk(ctx context.Context, s *session, e *entry) *walked {
	v := s.version
	w := &walked{files: map[string]bool{}, dirs: map[string]bool{e.root: true}, complete: true}
	type dir struct {
		uri   string
		depth int
	}
	queue := []dir{{e.root, 0}}
	children := 0
	clean := true
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		cursor := ""
		seen := map[string]bool{}
		for page := 1; ; page++ {
			if page > maxPagesPerDirectory {
				c.rec.add(Fail, "directory-walk", v, d.uri, "still returned a nextCursor after %d pages", maxPagesPerDirectory)
				w.complete = false
				return w
			}
			raw, err := call(ctx, s, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: d.uri, Cursor: cursor})
			if err != nil {
				if d.uri == e.root && page == 1 {
					c.rec.add(Fail, "directory-implemented", v, e.root, "resources/directory/read of the skill root failed: %v; a server declaring directoryRead must list every skill directory", err)
					return nil
				}
				c.rec.add(Fail, "directory-walk", v, d.uri, "resources/directory/read failed: %v", err)
				w.complete = false
				return w
			}
			if d.uri == e.root && page == 1 {
				c.rec.ok("directory-implemented", v)
			}
			m, err := object(raw)
			var items []json.RawMessage
			if err == nil {
				err = json.Unmarshal(m["resources"], &items)
			}
			if err != nil || items == nil {
				c.rec.add(Fail, "directory-walk", v, d.uri, "the result has no resources array")
				w.complete = false
				return w
			}
			c.resultType(s, m, "resources/directory/read "+d.uri)
			for _, item := range items {
				cm, err := object(item)
				uri, _ := str(cm, "uri")
				name, hasName := str(cm, "name")
				if err != nil || uri == "" || !hasName || name == "" {
					c.rec.add(Fail, "directory-walk", v, d.uri, "a child lacks a uri or name: %s", truncate(string(item), 120))
					clean = false
					continue
				}
				rest, inside := strings.CutPrefix(uri, d.uri+"/")
				if !inside || rest == "" || rest == "." || rest == ".." || strings.Contains(rest, "/") {
					c.rec.add(Fail, "directory-walk", v, d.uri, "lists %s, which is not a direct child of the directory; a host must never read it under this skill (H20)", uri)
					clean = false
					continue
				}
				children++
				if children > c.opts.MaxDirEntries {
					c.rec.add(Fail, "directory-walk", v, e.root, "the skill's directories hold more than %d entries", c.opts.MaxDirEntries)
					w.complete = false
					return w
				}
				if mt, _ := str(cm, "mimeType"); mt == skillsext.DirectoryMIMEType {
					if d.depth+1 > maxDirectoryDepth {
						c.rec.add(Fail, "directory-walk", v, uri, "directories nest deeper than %d levels", maxDirectoryDepth)
						w.complete = false
						return w
					}
					if !w.dirs[uri] {
						w.dirs[uri] = true
						queue = append(queue, dir{uri, d.depth + 1})
					}
				} else {
					w.files[uri] = true
				}
			}
			next, _ := str(m, "nextCursor")
			if next == "" {
				break
			}
			if seen[next] {
				c.rec.add(Fail, "directory-walk", v, d.uri, "page %d returned a cursor already returned: the listing loops", page)
				w.complete = false
				return w
			}
			seen[next] = true
			cursor = next
		}
	}
	if clean {
		c.rec.ok("directory-walk", v)
	}
	return w
}

// complete compares a finished walk with the manifest (S17, S34).
func (c *checker) complete(v string, e *entry, w *walked) {
	listed := map[string]bool{}
	for _, r := range e.files {
		listed[r.uri] = true
	}
	ok := true
	for _, f := range sortedKeys(w.files) {
		if !listed[f] {
			c.rec.add(Fail, "resources-complete", v, e.uri, "%s is served in the skill's folder but missing from resources, so it has no digest a host can verify", f)
			ok = false
		}
	}
	for _, r := range e.files {
		switch {
		case w.dirs[r.uri]:
			c.rec.add(Fail, "resources-complete", v, e.uri, "resources lists %s, which is a directory", r.uri)
			ok = false
		case !w.files[r.uri]:
			c.rec.add(Fail, "resources-complete", v, e.uri, "resources lists %s, which no directory listing of the skill shows", r.uri)
			ok = false
		}
	}
	if ok {
		c.rec.ok("resources-complete", v)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
