package pull

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// Bounds on walking the folders of a dynamic skill.
const (
	maxDirPages = 1000
	maxDirDepth = 32
)

// discover finds the files of a skill whose manifest is "dynamic": its
// SKILL.md and, when the server declared directoryRead (and only then,
// SEP-2640 H1), every file below its root. The files carry no size or
// digest, so only the frontmatter of SKILL.md can be verified.
func (c *Client) discover(ctx context.Context, e *Entry, o *PullOptions) ([]File, error) {
	files := []File{{URI: e.URI, Rel: skillsext.SkillFile, Size: -1}}
	if !c.dirRead {
		c.opts.Logger.Warn("dynamic skill: the server has no directoryRead, so only its SKILL.md can be found", "skill", e.Path)
		return files, nil
	}
	limit := skillsext.MaxResources
	if o.AllowOversize {
		limit = 100 * skillsext.MaxResources
	}
	root := e.Scheme + "://" + e.uriPath
	type dir struct {
		uri   string
		depth int
	}
	queue := []dir{{root, 0}}
	seen := map[string]bool{e.URI: true}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if d.depth > maxDirDepth {
			return nil, &VerifyError{URI: d.uri, Reason: fmt.Sprintf("the dynamic skill nests folders deeper than %d", maxDirDepth)}
		}
		cursor := ""
		cursors := map[string]bool{}
		for page := 1; ; page++ {
			if page > maxDirPages {
				return nil, &VerifyError{URI: d.uri, Reason: fmt.Sprintf("the folder listing did not end after %d pages", maxDirPages)}
			}
			rctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
			res, err := mcp.CallCustomMethod[*skillsext.ReadDirectoryParams, *skillsext.ReadDirectoryResult](rctx, c.cs, skillsext.MethodReadDirectory, &skillsext.ReadDirectoryParams{URI: d.uri, Cursor: cursor})
			cancel()
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", d.uri, err)
			}
			if err := checkResultType(skillsext.MethodReadDirectory, res.ResultType); err != nil {
				return nil, err
			}
			for _, r := range res.Resources {
				if r == nil {
					continue
				}
				rel, err := relOf(r.URI, e.Scheme, e.uriPath)
				if err != nil {
					return nil, &VerifyError{URI: r.URI, Reason: err.Error()}
				}
				if rel == "" {
					return nil, &VerifyError{URI: r.URI, Reason: "the folder listing names a resource outside the skill " + root}
				}
				if err := checkFileRel(rel); err != nil {
					return nil, &VerifyError{URI: r.URI, Reason: err.Error()}
				}
				if seen[r.URI] {
					continue
				}
				seen[r.URI] = true
				if r.MIMEType == skillsext.DirectoryMIMEType {
					queue = append(queue, dir{r.URI, d.depth + 1})
					continue
				}
				files = append(files, File{URI: r.URI, Rel: rel, Size: -1})
				if len(files) > limit {
					return nil, &EntryError{URI: e.URI, Reason: fmt.Sprintf("the dynamic skill serves more than %d files; pass --allow-oversize to pull it", limit)}
				}
			}
			if res.NextCursor == "" {
				break
			}
			if res.NextCursor == cursor || cursors[res.NextCursor] {
				return nil, &VerifyError{URI: d.uri, Reason: fmt.Sprintf("server repeats cursor %q", truncate(res.NextCursor, 64))}
			}
			cursors[res.NextCursor] = true
			cursor = res.NextCursor
		}
	}
	return files, nil
}
