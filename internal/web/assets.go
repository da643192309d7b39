package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assetFiles embed.FS

// asset is one embedded file served under its content-hashed name.
type asset struct {
	name  string // "app.3f2a9c1d0b7e.css"
	ctype string
	data  []byte
}

// assets holds the embedded assets by logical name ("app.css") and by
// hashed name.
type assets struct {
	byLogical map[string]*asset
	byHashed  map[string]*asset
}

// hashLen is how many hex digits of the SHA-256 a hashed name carries: 48
// bits, enough that two versions of one file never share a name.
const hashLen = 12

// loadAssets reads every embedded asset and names it by its content, so
// that a browser may cache it for a year: a new build that changes a file
// changes its name, and pages link the new name.
func loadAssets() (*assets, error) {
	a := &assets{byLogical: map[string]*asset{}, byHashed: map[string]*asset{}}
	err := fs.WalkDir(assetFiles, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := assetFiles.ReadFile(p)
		if err != nil {
			return err
		}
		logical := strings.TrimPrefix(p, "assets/")
		ext := path.Ext(logical)
		sum := sha256.Sum256(data)
		ctype := mime.TypeByExtension(ext)
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		as := &asset{
			name:  strings.TrimSuffix(logical, ext) + "." + hex.EncodeToString(sum[:])[:hashLen] + ext,
			ctype: ctype,
			data:  data,
		}
		a.byLogical[logical] = as
		a.byHashed[as.name] = as
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: reading embedded assets: %w", err)
	}
	return a, nil
}

// path returns the URL path of the asset with logical name, for templates.
// An unknown name is a programmer's error in a template, found by the
// tests that render every page.
func (a *assets) path(logical string) (string, error) {
	as, ok := a.byLogical[logical]
	if !ok {
		return "", fmt.Errorf("web: no embedded asset %q", logical)
	}
	return AssetPrefix + as.name, nil
}

// AssetPrefix is the URL path under which assets are served.
const AssetPrefix = "/assets/"

// serve answers GET /assets/NAME with the asset of that hashed name,
// cached for a year and never revalidated: its name changes with its
// content.
func (a *assets) serve(w http.ResponseWriter, r *http.Request) {
	as, ok := a.byHashed[strings.TrimPrefix(r.URL.Path, AssetPrefix)]
	if !ok {
		http.Error(w, "no such asset; reload the page to get the current names", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", as.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+as.name+`"`)
	if r.Header.Get("If-None-Match") == `"`+as.name+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", fmt.Sprint(len(as.data)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(as.data)
}

// AssetBytes returns the bytes of the assets every page loads (its own HTML
// not included). Tests hold the first load to its budget with it.
func (s *Site) AssetBytes() int {
	n := 0
	for _, as := range s.assets.byLogical {
		n += len(as.data)
	}
	return n
}
