package clawhub

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/skills-mcp/skills-mcp/internal/hub"
	"github.com/skills-mcp/skills-mcp/internal/hub/pkgtree"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// A publication takes three steps, as the client makes them: a ticket per
// file (upload-url, announcing its path, size and sha256), the file's bytes
// sent to the ticket's URL, then the publication naming every ticket. The
// bytes wait in memory, bound to the token that announced them, until the
// publication or ticketTTL; a token holds at most one package's worth
// (the hub's package limit) and maxPendingFiles files.

// decodeJSON reads a bounded JSON body into v; false once an error is
// answered.
func decodeJSON(w http.ResponseWriter, req *http.Request, v any) bool {
	if ct := req.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		fail(w, http.StatusUnsupportedMediaType, "send the body as application/json")
		return false
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxJSONBody+1))
	if err != nil {
		fail(w, http.StatusBadRequest, "the body could not be read")
		return false
	}
	if len(body) > maxJSONBody {
		fail(w, http.StatusRequestEntityTooLarge, "the body is over %d bytes", maxJSONBody)
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		fail(w, http.StatusBadRequest, "the body is not the JSON this route takes: %s", clip(err.Error()))
		return false
	}
	return true
}

// expire drops the uploads past their time. r.mu is held.
func (r *Registry) expire() {
	now := r.now()
	for t, u := range r.uploads {
		if now.After(u.expires) {
			delete(r.uploads, t)
		}
	}
}

// held returns the files and bytes a token's uploads hold. r.mu is held.
func (r *Registry) held(token string) (files int, size int64) {
	for _, u := range r.uploads {
		if u.token == token {
			files++
			size += u.size
		}
	}
	return files, size
}

func (r *Registry) uploadURL(w http.ResponseWriter, req *http.Request, tok store.Token) {
	var in struct {
		Path        string `json:"path"`
		Size        int64  `json:"size"`
		SHA256      string `json:"sha256"`
		ContentType string `json:"contentType"`
	}
	if !decodeJSON(w, req, &in) {
		return
	}
	lim := r.hub.Limits()
	sum, err := hex.DecodeString(in.SHA256)
	switch {
	case in.Path == "" || len(in.Path) > 1024:
		fail(w, http.StatusUnprocessableEntity, "give the file's path below the skill folder in path (1 to 1,024 bytes)")
		return
	case err != nil || len(sum) != sha256.Size:
		fail(w, http.StatusUnprocessableEntity, "sha256 must be the file's SHA-256 in hex")
		return
	case in.Size < 0 || in.Size > lim.MaxFileBytes:
		fail(w, http.StatusRequestEntityTooLarge, "%s: a file may hold at most %d bytes on this hub", clip(in.Path), lim.MaxFileBytes)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire()
	files, size := r.held(tok.ID)
	if files+1 > min(maxPendingFiles, lim.MaxFiles) || size+in.Size > lim.MaxPackageBytes {
		fail(w, http.StatusRequestEntityTooLarge, "this token's pending uploads would pass the hub's package limits (%d files, %d bytes); publish them or wait %s", min(maxPendingFiles, lim.MaxFiles), lim.MaxPackageBytes, ticketTTL)
		return
	}
	ticket := newTicket()
	r.uploads[ticket] = &upload{token: tok.ID, path: in.Path, size: in.Size, sha256: strings.ToLower(in.SHA256), expires: r.now().Add(ticketTTL)}
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	writeJSON(w, map[string]string{
		"uploadUrl":    scheme + "://" + req.Host + "/api/v1/skills/-/upload/" + ticket,
		"uploadTicket": ticket,
	})
}

// newTicket returns a random ticket: it is the upload's name, not a
// credential (the upload needs the token too).
func newTicket() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (r *Registry) upload(w http.ResponseWriter, req *http.Request, tok store.Token) {
	ticket := req.PathValue("ticket")
	r.mu.Lock()
	r.expire()
	u := r.uploads[ticket]
	r.mu.Unlock()
	if u == nil || u.token != tok.ID {
		fail(w, http.StatusNotFound, "no upload waits under that ticket for this token; ask for a new one (upload-url)")
		return
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, u.size+1))
	if err != nil {
		fail(w, http.StatusBadRequest, "the upload could not be read")
		return
	}
	sum := sha256.Sum256(data)
	switch {
	case int64(len(data)) != u.size:
		fail(w, http.StatusUnprocessableEntity, "%s: the upload is not the %d bytes announced", clip(u.path), u.size)
		return
	case hex.EncodeToString(sum[:]) != u.sha256:
		fail(w, http.StatusUnprocessableEntity, "%s: the upload's SHA-256 is not the one announced", clip(u.path))
		return
	}
	r.mu.Lock()
	u.data = data
	r.mu.Unlock()
	writeJSON(w, map[string]string{"storageId": ticket})
}

func (r *Registry) publish(w http.ResponseWriter, req *http.Request, tok store.Token) {
	var in struct {
		Slug        string `json:"slug"`
		OwnerHandle string `json:"ownerHandle"`
		Version     string `json:"version"`
		Changelog   string `json:"changelog"`
		Files       []struct {
			Path      string `json:"path"`
			StorageID string `json:"storageId"`
		} `json:"files"`
	}
	if !decodeJSON(w, req, &in) {
		return
	}
	switch {
	case in.OwnerHandle != "" && !strings.EqualFold(strings.TrimPrefix(in.OwnerHandle, "@"), Owner):
		fail(w, http.StatusForbidden, "every skill of this hub belongs to @%s; publish without --owner", Owner)
		return
	case !validVersion(in.Version):
		fail(w, http.StatusUnprocessableEntity, "version %q is not a semantic version (MAJOR.MINOR.PATCH, an optional -pre-release, no +build)", clip(in.Version))
		return
	case len(in.Changelog) > 64<<10:
		fail(w, http.StatusUnprocessableEntity, "the changelog is over 64 KiB")
		return
	case len(in.Files) == 0:
		fail(w, http.StatusUnprocessableEntity, "a publication needs its files")
		return
	}
	// The tickets are taken at once, so that a second publication cannot
	// use them; they are gone whatever the outcome.
	r.mu.Lock()
	r.expire()
	files := make([]hub.PublishedFile, 0, len(in.Files))
	var missing string
	for _, f := range in.Files {
		u := r.uploads[f.StorageID]
		if u == nil || u.token != tok.ID || u.data == nil || u.path != f.Path {
			missing = f.Path
			continue
		}
		files = append(files, hub.PublishedFile{Path: u.path, Data: u.data})
	}
	for _, f := range in.Files {
		if u := r.uploads[f.StorageID]; u != nil && u.token == tok.ID {
			delete(r.uploads, f.StorageID)
		}
	}
	r.mu.Unlock()
	if missing != "" {
		fail(w, http.StatusUnprocessableEntity, "%s: no upload of that file waits for this token (expired after %s, or never sent); publish again", clip(missing), ticketTTL)
		return
	}

	// A new version must number above the latest, as ClawHub's do.
	vs, err := r.hub.Versions(req.Context(), in.Slug)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.hubError(w, "to list the versions", err)
		return
	}
	if rs := releasesOf(vs); len(rs) > 0 && semver.Compare("v"+in.Version, "v"+rs[len(rs)-1].semver) <= 0 {
		fail(w, http.StatusConflict, "version %s of %s is not above the latest, %s; publish with a higher --version", in.Version, clip(in.Slug), rs[len(rs)-1].semver)
		return
	}
	inst, err := r.hub.InstallPublished(req.Context(), hub.Publication{Name: in.Slug, Version: in.Version, Changelog: in.Changelog, Files: files})
	if err != nil {
		r.publishError(w, err)
		return
	}
	if vs, err = r.hub.Versions(req.Context(), in.Slug); err != nil {
		r.hubError(w, "to list the versions", err)
		return
	}
	var number string
	for _, rel := range releasesOf(vs) {
		if rel.v.ID == inst.Version.ID {
			number = rel.semver
		}
	}
	status := "published"
	if r.opts.RequireApproval && !inst.Version.Approved {
		status = "pending"
	}
	r.log.Info("clawhub registry: published", "skill", in.Slug, "version", number, "id", inst.Version.ID, "created", inst.Created, "token", tok.ID)
	writeJSON(w, map[string]any{
		"ok": true, "skillId": in.Slug, "versionId": inst.Version.ID, "slug": in.Slug, "version": number,
		"status": status, "publicationStatus": status, "created": inst.Created, "treeDigest": inst.Version.TreeDigest,
	})
}

// publishError answers a publication the hub refused.
func (r *Registry) publishError(w http.ResponseWriter, err error) {
	for _, target := range []error{pkgtree.ErrNoSkill, pkgtree.ErrPath, pkgtree.ErrDuplicate, pkgtree.ErrLink,
		pkgtree.ErrSpecial, pkgtree.ErrArchive, hub.ErrNameMismatch} {
		if errors.Is(err, target) {
			fail(w, http.StatusUnprocessableEntity, "the hub refuses this package: %s", clip(err.Error()))
			return
		}
	}
	if errors.Is(err, pkgtree.ErrTooLarge) {
		fail(w, http.StatusRequestEntityTooLarge, "the hub refuses this package: %s", clip(err.Error()))
		return
	}
	r.hubError(w, "to install the package", err)
}
