package clawhub

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// release is one hub version as ClawHub sees it.
type release struct {
	semver string // without a leading v
	v      hub.Version
}

// releasesOf numbers a package's versions (oldest first, as hub.Versions
// lists them): the publisher's version when it is valid semver above the
// one before, else the one before a patch higher; the first is 0.0.1.
// The numbering follows creation order, so it never goes down.
func releasesOf(vs []hub.Version) []release {
	out := make([]release, 0, len(vs))
	prev := ""
	for _, v := range vs {
		next := ""
		if p := v.Origin.Version; v.Origin.Kind == pkgtree.OriginPublish && validVersion(p) && (prev == "" || semver.Compare("v"+p, "v"+prev) > 0) {
			next = p
		} else if prev == "" {
			next = "0.0.1"
		} else {
			next = bumpPatch(prev)
		}
		out = append(out, release{semver: next, v: v})
		prev = next
	}
	return out
}

// validVersion reports whether v is MAJOR.MINOR.PATCH with an optional
// pre-release, as the client's semver.valid takes it; x/mod's IsValid
// also takes "1.0", and build metadata would make two names of one
// version.
func validVersion(v string) bool {
	c := semver.Canonical("v" + v)
	return c != "" && c == "v"+v
}

// bumpPatch returns the next patch release of a valid semantic version.
func bumpPatch(v string) string {
	core := strings.TrimPrefix(semver.Canonical("v"+v), "v")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	n, _ := strconv.Atoi(parts[2])
	return parts[0] + "." + parts[1] + "." + strconv.Itoa(n+1)
}

// find returns the release named version ("" for the latest).
func find(rs []release, version string) (release, bool) {
	if len(rs) == 0 {
		return release{}, false
	}
	if version == "" || version == "latest" {
		return rs[len(rs)-1], true
	}
	version = strings.TrimPrefix(version, "v")
	for _, r := range rs {
		if r.semver == version || r.v.ID == version {
			return r, true
		}
	}
	return release{}, false
}

// releases loads a package's releases; ok is false once an error is
// answered.
func (r *Registry) releases(w http.ResponseWriter, req *http.Request, slug string) ([]release, bool) {
	if owner := req.URL.Query().Get("ownerHandle"); owner != "" && !strings.EqualFold(strings.TrimPrefix(owner, "@"), Owner) {
		fail(w, http.StatusNotFound, "Skill not found")
		return nil, false
	}
	vs, err := r.hub.Versions(req.Context(), slug)
	if err != nil {
		r.hubError(w, "to list the versions", err)
		return nil, false
	}
	return releasesOf(vs), true
}

// The answers' records, as the pinned client's schemas name them.
type (
	ownerJSON struct {
		Handle      string `json:"handle"`
		DisplayName string `json:"displayName"`
	}
	skillJSON struct {
		Slug        string            `json:"slug"`
		DisplayName string            `json:"displayName"`
		Summary     string            `json:"summary"`
		Description string            `json:"description"`
		Tags        map[string]string `json:"tags"`
		Stats       map[string]int    `json:"stats"`
		CreatedAt   int64             `json:"createdAt"`
		UpdatedAt   int64             `json:"updatedAt"`
	}
	versionJSON struct {
		Version    string  `json:"version"`
		CreatedAt  int64   `json:"createdAt"`
		Changelog  string  `json:"changelog"`
		License    *string `json:"license"`
		ID         string  `json:"id"`
		TreeDigest string  `json:"treeDigest"`
		Approved   bool    `json:"approved"`
	}
	fileJSON struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
)

func skillOf(rs []release) skillJSON {
	first, last := rs[0].v, rs[len(rs)-1].v
	return skillJSON{
		Slug: last.Package, DisplayName: last.Package, Summary: last.Description, Description: last.Description,
		Tags: map[string]string{"latest": rs[len(rs)-1].semver}, Stats: map[string]int{"versions": len(rs)},
		CreatedAt: first.CreatedAt.UnixMilli(), UpdatedAt: last.CreatedAt.UnixMilli(),
	}
}

func versionOf(rel release) versionJSON {
	return versionJSON{Version: rel.semver, CreatedAt: rel.v.CreatedAt.UnixMilli(), Changelog: rel.v.Origin.Changelog,
		ID: rel.v.ID, TreeDigest: rel.v.TreeDigest, Approved: rel.v.Approved}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func (r *Registry) discovery(w http.ResponseWriter, req *http.Request) {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, map[string]string{"apiBase": scheme + "://" + req.Host + "/"})
}

func (r *Registry) whoami(w http.ResponseWriter, _ *http.Request, tok store.Token) {
	role := "user"
	if tok.Scope == store.ScopeAdmin {
		role = "admin"
	}
	name := tok.Name
	if name == "" {
		name = "token " + tok.ID
	}
	writeJSON(w, map[string]any{"user": map[string]any{"handle": Owner, "displayName": name, "image": nil, "role": role}})
}

// limit reads a limit parameter, bounded by maxSearch.
func limit(req *http.Request, def int) int {
	n, err := strconv.Atoi(req.URL.Query().Get("limit"))
	if err != nil || n <= 0 {
		return def
	}
	return min(n, maxSearch)
}

// search scores every package: each query word found in the name counts
// three, in the description one; an exact name match ten more.
func (r *Registry) search(w http.ResponseWriter, req *http.Request, _ store.Token) {
	q := strings.ToLower(strings.TrimSpace(req.URL.Query().Get("q")))
	if q == "" || len(q) > 500 {
		fail(w, http.StatusBadRequest, "give a query of 1 to 500 characters in q")
		return
	}
	pkgs, err := r.hub.List(req.Context())
	if err != nil {
		r.hubError(w, "to search", err)
		return
	}
	exact := req.URL.Query().Get("mode") == "exact"
	type result struct {
		Slug        string    `json:"slug"`
		DisplayName string    `json:"displayName"`
		Summary     string    `json:"summary"`
		Version     *string   `json:"version"`
		Score       float64   `json:"score"`
		UpdatedAt   int64     `json:"updatedAt"`
		OwnerHandle string    `json:"ownerHandle"`
		Owner       ownerJSON `json:"owner"`
	}
	var results []result
	words := strings.Fields(q)
	for _, p := range pkgs {
		name, desc := strings.ToLower(p.Name), strings.ToLower(p.Latest.Description)
		score := 0.0
		if name == q {
			score += 10
		}
		if !exact {
			for _, word := range words {
				if strings.Contains(name, word) {
					score += 3
				}
				if strings.Contains(desc, word) {
					score++
				}
			}
		}
		if score == 0 {
			continue
		}
		results = append(results, result{Slug: p.Name, DisplayName: p.Name, Summary: p.Latest.Description, Score: score,
			UpdatedAt: p.Latest.CreatedAt.UnixMilli(), OwnerHandle: Owner, Owner: ownerJSON{Owner, Owner}})
	}
	slices.SortStableFunc(results, func(a, b result) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Slug, b.Slug)
	})
	results = results[:min(len(results), limit(req, 25))]
	// The version shown is the latest release's, which needs the package's
	// versions: only for what is shown.
	for i := range results {
		if vs, err := r.hub.Versions(req.Context(), results[i].Slug); err == nil {
			rs := releasesOf(vs)
			results[i].Version = &rs[len(rs)-1].semver
		}
	}
	writeJSON(w, map[string]any{"results": orEmpty(results)})
}

// list answers the packages whose names start with prefix, by name, from
// the cursor (the last name of the page before) on.
func (r *Registry) list(w http.ResponseWriter, req *http.Request, _ store.Token) {
	prefix, cursor := req.URL.Query().Get("prefix"), req.URL.Query().Get("cursor")
	pkgs, err := r.hub.List(req.Context())
	if err != nil {
		r.hubError(w, "to list the skills", err)
		return
	}
	n := limit(req, 25)
	items := []map[string]any{}
	next := (*string)(nil)
	for _, p := range pkgs {
		if !strings.HasPrefix(p.Name, prefix) || (cursor != "" && p.Name <= cursor) {
			continue
		}
		if len(items) == n {
			last := items[n-1]["slug"].(string)
			next = &last
			break
		}
		vs, err := r.hub.Versions(req.Context(), p.Name)
		if err != nil {
			continue // uninstalled since List
		}
		rs := releasesOf(vs)
		s := skillOf(rs)
		latest := versionOf(rs[len(rs)-1])
		items = append(items, map[string]any{
			"slug": s.Slug, "displayName": s.DisplayName, "summary": s.Summary, "description": s.Description,
			"tags": s.Tags, "stats": s.Stats, "createdAt": s.CreatedAt, "updatedAt": s.UpdatedAt, "latestVersion": latest,
		})
	}
	writeJSON(w, map[string]any{"items": items, "nextCursor": next})
}

func (r *Registry) skill(w http.ResponseWriter, req *http.Request, _ store.Token) {
	rs, ok := r.releases(w, req, req.PathValue("slug"))
	if !ok {
		return
	}
	writeJSON(w, map[string]any{
		"skill": skillOf(rs), "latestVersion": versionOf(rs[len(rs)-1]),
		"owner": ownerJSON{Owner, Owner}, "moderation": nil,
	})
}

func (r *Registry) versions(w http.ResponseWriter, req *http.Request, _ store.Token) {
	rs, ok := r.releases(w, req, req.PathValue("slug"))
	if !ok {
		return
	}
	items := make([]versionJSON, 0, len(rs))
	for i := len(rs) - 1; i >= 0 && len(items) < limit(req, maxSearch); i-- {
		items = append(items, versionOf(rs[i]))
	}
	writeJSON(w, map[string]any{"items": items, "nextCursor": nil})
}

func (r *Registry) version(w http.ResponseWriter, req *http.Request, _ store.Token) {
	rs, ok := r.releases(w, req, req.PathValue("slug"))
	if !ok {
		return
	}
	rel, ok := find(rs, req.PathValue("version"))
	if !ok {
		fail(w, http.StatusNotFound, "Version not found")
		return
	}
	in, err := r.hub.Inspect(req.Context(), rel.v.ID)
	if err != nil {
		r.hubError(w, "to read the version", err)
		return
	}
	files := make([]fileJSON, 0, len(in.Files))
	for _, f := range in.Files {
		files = append(files, fileJSON{Path: f.Path, Size: f.Size, SHA256: strings.TrimPrefix(f.Digest, "sha256:")})
	}
	v := versionOf(rel)
	writeJSON(w, map[string]any{
		"version": struct {
			versionJSON
			Files []fileJSON `json:"files"`
		}{v, files},
		"skill": map[string]string{"slug": rel.v.Package, "displayName": rel.v.Package},
	})
}

func (r *Registry) file(w http.ResponseWriter, req *http.Request, _ store.Token) {
	rs, ok := r.releases(w, req, req.PathValue("slug"))
	if !ok {
		return
	}
	rel, ok := find(rs, req.URL.Query().Get("version"))
	if !ok {
		fail(w, http.StatusNotFound, "Version not found")
		return
	}
	data, f, err := r.hub.ReadFile(req.Context(), rel.v.ID, req.URL.Query().Get("path"))
	if err != nil {
		if isNotFound(err) {
			fail(w, http.StatusNotFound, "File not found")
			return
		}
		r.hubError(w, "to read the file", err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("ETag", `"`+f.Digest+`"`)
	w.Write(data)
}

// resolve answers the release whose files have the client's fingerprint
// (see fingerprint), and the latest.
func (r *Registry) resolve(w http.ResponseWriter, req *http.Request, _ store.Token) {
	slug, hash := req.URL.Query().Get("slug"), strings.ToLower(req.URL.Query().Get("hash"))
	rs, ok := r.releases(w, req, slug)
	if !ok {
		return
	}
	var match any
	for i := len(rs) - 1; i >= 0 && hash != ""; i-- {
		in, err := r.hub.Inspect(req.Context(), rs[i].v.ID)
		if err != nil {
			r.hubError(w, "to read a version", err)
			return
		}
		if fingerprint(in.Files) == hash {
			match = map[string]string{"version": rs[i].semver}
			break
		}
	}
	writeJSON(w, map[string]any{"match": match, "latestVersion": map[string]string{"version": rs[len(rs)-1].semver}})
}

// fingerprint is the client's digest of a skill's files: "path:sha256"
// lines in collation order, hashed. The client leaves out every path with
// a segment starting with a dot (its own .clawhub folder among them), so
// this does too.
func fingerprint(files []hub.File) string {
	type entry struct{ path, sha string }
	var es []entry
	for _, f := range files {
		if hasDotSegment(f.Path) {
			continue
		}
		es = append(es, entry{f.Path, strings.TrimPrefix(f.Digest, "sha256:")})
	}
	// The client sorts with JavaScript's localeCompare, the Unicode
	// collation; a Collator is not safe for concurrent use, so each call
	// has its own.
	order := collate.New(language.English)
	slices.SortFunc(es, func(a, b entry) int { return order.CompareString(a.path, b.path) })
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.path + ":" + e.sha)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// download answers a release as a ZIP of its files, stored, in path
// order, with their modes: the same bytes for the same version.
func (r *Registry) download(w http.ResponseWriter, req *http.Request, _ store.Token) {
	q := req.URL.Query()
	rs, ok := r.releases(w, req, q.Get("slug"))
	if !ok {
		return
	}
	rel, ok := find(rs, q.Get("version"))
	if !ok {
		fail(w, http.StatusNotFound, "Version not found")
		return
	}
	in, err := r.hub.Inspect(req.Context(), rel.v.ID)
	if err != nil {
		r.hubError(w, "to read the version", err)
		return
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range in.Files {
		data, _, err := r.hub.ReadFile(req.Context(), rel.v.ID, f.Path)
		if err != nil {
			r.hubError(w, "to read the version's files", err)
			return
		}
		fh := &zip.FileHeader{Name: f.Path, Method: zip.Store, Flags: 0x800, ModifiedDate: 1<<5 | 1,
			CRC32: crc32.ChecksumIEEE(data), CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))}
		fh.SetMode(0o644)
		if f.Mode == "755" {
			fh.SetMode(0o755)
		}
		fw, err := zw.CreateRaw(fh)
		if err == nil {
			_, err = fw.Write(data)
		}
		if err != nil {
			r.hubError(w, "to write the archive", err)
			return
		}
	}
	if err := zw.Close(); err != nil {
		r.hubError(w, "to write the archive", err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+rel.v.Package+"-"+rel.semver+`.zip"`)
	w.Header().Set("ETag", `"`+rel.v.TreeDigest+`"`)
	w.Write(buf.Bytes())
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func isNotFound(err error) bool {
	return err != nil && (errors.Is(err, store.ErrNotFound) || errors.Is(err, pkgtree.ErrNotFound))
}
