// Package wellknown publishes a catalog as the Agent Skills well-known
// index, so that installers that never speak MCP (npx skills add URL) can
// install what a server serves.
//
// A [Handler] answers, below /.well-known/:
//
//	agent-skills/index.json    the 0.2.0 index: name, type, description,
//	                           url and digest of every listed skill
//	agent-skills/NAME.zip      a skill's archive (type "archive")
//	agent-skills/NAME/PATH     a skill's file; for a skill that is one
//	                           SKILL.md, NAME/SKILL.md is its artifact
//	                           (type "skill-md")
//	skills/index.json          the older index, each entry listing its files
//	skills/NAME/PATH           a skill's file, for that index
//
// The index is generated from the catalog's current snapshot when it is
// first asked for after the snapshot changed, so it follows every rescan;
// unchanged skills keep their archives. Only served files are listed or
// served: what the catalog withholds (symlinks, special files, files
// outside the skill's root, withheld scripts) is in no index and no
// archive. A skill is listed when its name is an Agent Skills name, it has
// a description, and it fits the installers' archive limits; the others are
// logged once per snapshot. Of two skills with one name, the first by URI
// is listed.
//
// An archive is a zip of the skill folder whose bytes depend on its
// content alone (see archiveOf), so its digest changes only when the skill
// does. Every answer carries an ETag and honours If-None-Match.
//
// The handler checks no Host, token or rate: it is mounted behind the same
// guards as /mcp (httpserve.Options.WellKnown).
package wellknown

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// Catalog is where the index comes from: the current snapshot.
type Catalog interface {
	Snapshot() *catalog.Snapshot
}

// Options configures a [Handler]. A nil *Options means defaults.
type Options struct {
	// MaxArchiveBytes bounds the files of a listed skill; a larger skill
	// is not listed. If zero or negative, defaults to
	// [DefaultMaxArchiveBytes].
	MaxArchiveBytes int64

	// CacheBytes bounds the archives kept in memory between requests;
	// past it an archive is built again for each request. If zero,
	// defaults to [DefaultCacheBytes]; if negative, none is kept.
	CacheBytes int64

	// MaxConns is how many connections the server accepts at once from one
	// client, if bounded (the least of the server's bound and one
	// address's share). The skills client fetches every artifact at once, one
	// connection each, and drops the ones refused without a word; an index
	// listing more skills than MaxConns (less a margin for other clients)
	// logs a Warn saying so. If zero, no such warning.
	MaxConns int

	// Private marks every answer for the client alone (Cache-Control:
	// private), for an index whose URL is a credential: no shared cache
	// keeps it. If false, a shared cache may keep answers, revalidating
	// each time.
	Private bool

	// Logger receives an Info record naming the skills an index leaves
	// out, and a Warn record for a file that cannot be read. If nil, do
	// not log.
	Logger *slog.Logger
}

// connMargin is the connections left to other clients when an index is
// fetched whole.
const connMargin = 16

// DefaultCacheBytes is the default of Options.CacheBytes.
const DefaultCacheBytes = 64 << 20

// maxBuilds bounds the archives built at once for requests, when the
// index did not keep them: each holds a whole skill in memory.
const maxBuilds = 4

// Handler serves the well-known index of a catalog. It is safe for
// concurrent use.
type Handler struct {
	cat        Catalog
	cache      string // the answers' Cache-Control
	maxConns   int
	maxArchive int64
	cacheBytes int64
	log        *slog.Logger

	cur    atomic.Pointer[Index]
	mu     sync.Mutex // held while an index is built
	builds chan struct{}
}

// New returns a handler publishing cat.
func New(cat Catalog, opts *Options) *Handler {
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{cat: cat, cache: "no-cache", maxConns: opts.MaxConns, maxArchive: opts.MaxArchiveBytes, cacheBytes: opts.CacheBytes, log: opts.Logger,
		builds: make(chan struct{}, maxBuilds)}
	if opts.Private {
		h.cache = "private, no-cache"
	}
	if h.maxArchive <= 0 {
		h.maxArchive = DefaultMaxArchiveBytes
	}
	switch {
	case h.cacheBytes == 0:
		h.cacheBytes = DefaultCacheBytes
	case h.cacheBytes < 0:
		h.cacheBytes = 0
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// Index returns the index of the catalog's current snapshot, building it
// if that snapshot has none yet; nil while the first scan is pending.
func (h *Handler) Index() *Index {
	snap := h.cat.Snapshot()
	if snap == nil || snap.Pending() {
		return nil
	}
	if ix := h.cur.Load(); ix != nil && ix.snap == snap {
		return ix
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	prev := h.cur.Load()
	if prev != nil && prev.snap == snap {
		return prev
	}
	ix := build(snap, prev, h.maxArchive, h.cacheBytes, h.log)
	if n := len(ix.skills); h.maxConns > 0 && n > h.maxConns-connMargin {
		h.log.Warn("npx skills add fetches every listed skill at once, one connection each, and silently skips those the connection limit refuses; raise --max-conns and --max-conns-per-address (one client address has a share of the connections) above the count",
			"listed", n, "max_conns", h.maxConns, "suggested", n+connMargin)
	}
	h.cur.Store(ix)
	return ix
}

// The two folders below /.well-known/ the handler answers.
const (
	prefixV2 = "/.well-known/agent-skills/"
	prefixV1 = "/.well-known/skills/"
)

// ServeHTTP answers GET and HEAD below /.well-known/.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "the well-known index is read with GET")
		return
	}
	p := r.URL.Path
	var rest string
	var v2 bool
	switch {
	case strings.HasPrefix(p, prefixV2):
		rest, v2 = p[len(prefixV2):], true
	case strings.HasPrefix(p, prefixV1):
		rest = p[len(prefixV1):]
	default:
		writeError(w, http.StatusNotFound, "not_found", "nothing here; the skill index is /.well-known/agent-skills/index.json")
		return
	}
	ix := h.Index()
	if ix == nil {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "loading", "the catalog is still loading; try again in a moment")
		return
	}
	if rest == "index.json" {
		body, tag := ix.v1, ix.v1Tag
		if v2 {
			body, tag = ix.v2, ix.v2Tag
		}
		h.serveBytes(w, r, "application/json", tag, body)
		return
	}
	if name, ok := strings.CutSuffix(rest, ".zip"); ok && v2 && !strings.Contains(name, "/") {
		h.serveArchive(w, r, ix, name)
		return
	}
	name, file, ok := strings.Cut(rest, "/")
	e := ix.skills[name]
	if !ok || e == nil {
		writeError(w, http.StatusNotFound, "not_found", "no skill of that name is listed; see index.json")
		return
	}
	f := e.files[file]
	if f == nil {
		writeError(w, http.StatusNotFound, "not_found", "the skill has no file at that path; see index.json")
		return
	}
	data, err := f.ReadFile()
	if err != nil {
		h.unreadable(w, e, err)
		return
	}
	typ := f.MIMEType
	if file == skillFile {
		typ = "text/markdown; charset=utf-8"
	}
	h.serveBytes(w, r, typ, `"`+f.Digest.String()+`"`, data)
}

// serveArchive answers a skill's archive.
func (h *Handler) serveArchive(w http.ResponseWriter, r *http.Request, ix *Index, name string) {
	e := ix.skills[name]
	if e == nil || e.typ != TypeArchive {
		writeError(w, http.StatusNotFound, "not_found", "no archive of that name is listed; see index.json")
		return
	}
	tag := `"` + e.digest + `"`
	data := e.archive
	if data == nil {
		if r.Header.Get("If-None-Match") == tag {
			w.Header().Set("ETag", tag)
			w.Header().Set("Cache-Control", h.cache)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		select {
		case h.builds <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		var err error
		data, err = archiveOf(e)
		<-h.builds
		if err == nil && digestOf(data) != e.digest {
			err = errChanged
		}
		if err != nil {
			h.unreadable(w, e, err)
			return
		}
	}
	h.serveBytes(w, r, "application/zip", tag, data)
}

// unreadable answers a file or archive that cannot be read as the index
// published it.
func (h *Handler) unreadable(w http.ResponseWriter, e *entry, err error) {
	if errors.Is(err, errChanged) || errors.Is(err, catalog.ErrChanged) {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "changed", "the skill changed since the index was made; fetch index.json again")
		return
	}
	h.log.Warn("well-known index: a file cannot be read", "skill", e.skill.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal", "the skill cannot be read; the server's log says why")
}

// serveBytes answers data with its type and ETag, honouring
// If-None-Match, HEAD and ranges (http.ServeContent). The catalog may
// change at any time, so a client revalidates before reusing an answer.
func (h *Handler) serveBytes(w http.ResponseWriter, r *http.Request, typ, tag string, data []byte) {
	hd := w.Header()
	hd.Set("Content-Type", typ)
	hd.Set("ETag", tag)
	hd.Set("Cache-Control", h.cache)
	hd.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// writeError answers {"error":{"code":...,"message":...}}, the shape of
// the hub's API errors.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": msg}})
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
