package server

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// This file serves the legacy index (Options.LegacyIndex): skill://index.json
// and a .tar.gz and a .zip archive of every skill, in the shape of the
// superseded SEP-2640 draft that older hosts still read. The stable methods
// do not change; resources/list gains skill://index.json on its first page.
//
// Archives are byte-reproducible across restarts and machines: entries are
// sorted, every time is legacyModTime, files are 0644 and directories 0755,
// owners are 0 with empty names, the gzip header has no name and no time,
// and the compression level is fixed. Only the catalog's bytes and paths
// go in. (A Go release that changes its deflate encoder changes the
// compressed bytes, so reproducibility holds per build of skills-mcp.)

const (
	legacyIndexURI = "skill://index.json"
	mimeGzip       = "application/gzip"
	mimeZip        = "application/zip"
	// legacyHeldBytes bounds the built archives kept per snapshot; past it
	// an archive is rebuilt on every read (its digest is always kept).
	legacyHeldBytes = 64 << 20
)

// legacyModTime is the modification time of every archive entry.
var legacyModTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// legacyFormats are the archive forms of every skill, in index order.
var legacyFormats = []struct {
	ext, mime string
	write     func(io.Writer, []legacyFile) error
}{
	{".tar.gz", mimeGzip, writeTarGz},
	{".zip", mimeZip, writeZip},
}

// legacy serves the legacy index of one server from the store's current
// snapshot, building it once per snapshot.
type legacy struct {
	s   *server
	cur atomic.Pointer[legacyCache]
}

// addLegacyIndex registers skill://index.json and the archive templates.
// Exact resources and these templates are matched before the catalog's
// skill://{+path} template, so they see their URIs first; an archive URI
// that names no skill falls through to the catalog.
func (s *server) addLegacyIndex(ms *mcp.Server) {
	l := &legacy{s: s}
	ms.AddResource(legacyIndexResource(), l.readIndex)
	for _, f := range legacyFormats {
		ms.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: "skill://{+archive}" + f.ext,
			Name:        "skill-archive" + strings.ReplaceAll(f.ext, ".", "-"),
			Title:       "Skill archive (" + f.ext + ")",
			Description: "Every file of the skill at skill://<skill-path>, as one " + f.ext + " archive (superseded SEP-2640 draft; listed in " + legacyIndexURI + ").",
			MIMEType:    f.mime,
		}, l.readArchive)
	}
	ms.AddReceivingMiddleware(l.listMiddleware)
}

func legacyIndexResource() *mcp.Resource {
	return &mcp.Resource{
		URI: legacyIndexURI, Name: "index.json", Title: "Skill index (legacy)", MIMEType: "application/json",
		Description: "The skills in the shape of the superseded SEP-2640 draft: url, digest, frontmatter and .tar.gz and .zip archives. " +
			"Hosts with the Skills extension use skills/list instead.",
	}
}

// legacyCache is what was built for one snapshot.
type legacyCache struct {
	snap *catalog.Snapshot

	mu       sync.Mutex
	index    []byte
	archives map[string]*legacyArchive // by archive URI
	held     int64
}

type legacyArchive struct {
	mu     sync.Mutex
	digest string
	data   []byte // nil when not kept
}

// cache returns the cache of the current snapshot.
func (l *legacy) cache() *legacyCache {
	snap := l.s.store.Snapshot()
	for {
		old := l.cur.Load()
		if old != nil && old.snap == snap {
			return old
		}
		c := &legacyCache{snap: snap, archives: map[string]*legacyArchive{}}
		if l.cur.CompareAndSwap(old, c) {
			return c
		}
	}
}

// archive returns the bytes and digest of the archive of sk in format f,
// building it unless it is kept.
func (c *legacyCache) archive(sk *catalog.Skill, f int) ([]byte, string, error) {
	uri := skillsext.RootURI(sk.Path) + legacyFormats[f].ext
	c.mu.Lock()
	a, ok := c.archives[uri]
	if !ok {
		a = &legacyArchive{}
		c.archives[uri] = a
	}
	c.mu.Unlock()

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.data != nil {
		return a.data, a.digest, nil
	}
	files, err := legacyFiles(sk)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	if err := legacyFormats[f].write(&buf, files); err != nil {
		return nil, "", err
	}
	data := buf.Bytes()
	sum := sha256.Sum256(data)
	a.digest = "sha256:" + hex.EncodeToString(sum[:])
	c.mu.Lock()
	if c.held+int64(len(data)) <= legacyHeldBytes {
		c.held += int64(len(data))
		a.data = data
	}
	c.mu.Unlock()
	return data, a.digest, nil
}

// legacyEntry is one skill of skill://index.json.
type legacyEntry struct {
	URL         string          `json:"url"`
	Digest      string          `json:"digest"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Archives    []legacyRef     `json:"archives"`
}

type legacyRef struct {
	URL      string `json:"url"`
	MIMEType string `json:"mimeType"`
	Digest   string `json:"digest"`
}

// indexJSON returns skill://index.json for the snapshot: every listed
// skill, sorted by URI. Building it builds every archive, since it carries
// their digests.
func (c *legacyCache) indexJSON() ([]byte, error) {
	c.mu.Lock()
	index := c.index
	c.mu.Unlock()
	if index != nil {
		return index, nil
	}
	var doc struct {
		Skills []legacyEntry `json:"skills"`
	}
	doc.Skills = []legacyEntry{}
	for _, sk := range c.snap.Skills() {
		e := legacyEntry{URL: sk.URI, Digest: sk.Files[fileIndex(sk)].Digest.String(), Frontmatter: sk.Frontmatter}
		for f, form := range legacyFormats {
			_, digest, err := c.archive(sk, f)
			if err != nil {
				return nil, err
			}
			e.Archives = append(e.Archives, legacyRef{URL: skillsext.RootURI(sk.Path) + form.ext, MIMEType: form.mime, Digest: digest})
		}
		doc.Skills = append(doc.Skills, e)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	c.mu.Lock()
	c.index = b
	c.mu.Unlock()
	return b, nil
}

func (l *legacy) readIndex(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	data, err := l.cache().indexJSON()
	if err != nil {
		return nil, l.failure(req.Params.URI, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(data)}}}, nil
}

// readArchive answers skill://<skill-path>.tar.gz and .zip; any other URI
// the templates match goes to the catalog.
func (l *legacy) readArchive(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	c := l.cache()
	for f, form := range legacyFormats {
		p, ok := strings.CutSuffix(strings.TrimPrefix(uri, "skill://"), form.ext)
		if !ok || !strings.HasPrefix(uri, "skill://") {
			continue
		}
		p, err := skillsext.UnescapePath(p)
		if err != nil {
			continue
		}
		sk, ok := c.snap.Skill(skillsext.SkillURI(p))
		if !ok {
			break
		}
		var size int64
		for _, file := range sk.Files {
			size += file.Size
		}
		hold, err := l.s.answers.hold(ctx, size)
		if err != nil {
			return nil, err
		}
		defer hold.release()
		data, _, err := c.archive(sk, f)
		if err != nil {
			return nil, l.failure(uri, err)
		}
		hold.answer()
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: form.mime, Blob: data}}}, nil
	}
	return l.s.readResource(ctx, req)
}

func (l *legacy) failure(uri string, err error) error {
	if errors.Is(err, catalog.ErrChanged) {
		l.s.log.Warn("file changed on disk since the last scan", "uri", uri)
		return skillsext.Internal("%s cannot be built: a file changed on the server since the catalog was built; retry shortly", uri)
	}
	l.s.log.Error("building legacy index", "uri", uri, "err", err)
	return skillsext.Internal("%s cannot be built on the server right now", uri)
}

// listMiddleware puts skill://index.json first on the first page of
// resources/list, so that hosts browsing resources find it.
func (l *legacy) listMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "resources/list" {
			return res, err
		}
		if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil && p.Cursor != "" {
			return res, err
		}
		if r, ok := res.(*mcp.ListResourcesResult); ok {
			r.Resources = append([]*mcp.Resource{legacyIndexResource()}, r.Resources...)
		}
		return res, err
	}
}

// legacyFile is one entry of a skill archive: a directory (data nil, name
// ending in "/") or a file.
type legacyFile struct {
	name string
	data []byte
}

// legacyFiles returns the entries of a skill's archive in name order, with
// every directory before what it holds. The skill's SKILL.md is at the
// archive root; nested skills' files are included, as in the manifest.
func legacyFiles(sk *catalog.Skill) ([]legacyFile, error) {
	root := skillsext.RootURI(sk.Path)
	dirs := map[string]bool{}
	var out []legacyFile
	for _, f := range sk.Files {
		rel, ok := skillsext.RelPath(f.URI, root)
		if !ok {
			continue
		}
		data, err := f.ReadFile()
		if err != nil {
			return nil, err
		}
		out = append(out, legacyFile{name: rel, data: data})
		for i := strings.IndexByte(rel, '/'); i >= 0; {
			dirs[rel[:i+1]] = true
			next := strings.IndexByte(rel[i+1:], '/')
			if next < 0 {
				break
			}
			i += next + 1
		}
	}
	for d := range dirs {
		out = append(out, legacyFile{name: d})
	}
	slices.SortFunc(out, func(a, b legacyFile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func writeTarGz(w io.Writer, files []legacyFile) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: f.name, ModTime: legacyModTime, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.data))}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), gz.Close())
}

func writeZip(w io.Writer, files []legacyFile) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: legacyModTime}
		h.SetMode(0o644)
		if strings.HasSuffix(f.name, "/") {
			h.Method = zip.Store
			h.SetMode(fs.ModeDir | 0o755)
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
