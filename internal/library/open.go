package library

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/regfile"
	"github.com/skills-mcp/skills-mcp/internal/vault"
)

// Spec is one configured library: a directory, a local .zip, a pinned
// https URL of a .zip, or an fs.FS.
type Spec struct {
	// Namespace prefixes the library's skill paths ("" for one
	// un-namespaced library).
	Namespace string
	// Value is a path (a folder or a .zip) or an https URL; ignored when
	// FS is set.
	Value string
	// SHA256 is a URL's pin given apart from the URL (a config file's
	// sha256); it must agree with a #sha256= on the URL.
	SHA256 string
	// FS, if set, is the library content: an embed.FS, a *zip.Reader, an
	// fstest.MapFS or any other fs.FS. Nothing on disk is opened for it,
	// and it is never watched.
	FS fs.FS
	// NoScripts withholds the library's executables.
	NoScripts bool
	// Info describes the library to clients.
	Info catalog.Info
	// Vault is an explicit vault root (a folder); NoVault turns the vault
	// extras off for this library.
	Vault   string
	NoVault bool
	// AllowUnverified serves an https library that has neither a #sha256=
	// pin nor a .sha256 sidecar.
	AllowUnverified bool
}

// IsURL reports whether the spec names a remote library.
func (s Spec) IsURL() bool {
	return s.FS == nil && (strings.HasPrefix(s.Value, "https://") || strings.HasPrefix(s.Value, "http://"))
}

// IsZip reports whether the spec names a local zip file.
func (s Spec) IsZip() bool {
	if s.FS != nil || s.IsURL() || !strings.EqualFold(filepath.Ext(s.Value), ".zip") {
		return false
	}
	info, err := os.Stat(s.Value)
	return err == nil && info.Mode().IsRegular()
}

// Opened is a library opened for serving.
type Opened struct {
	Spec Spec
	// Lib is what the catalog scans.
	Lib *catalog.Library
	// VaultLib is the vault root, when it is not Lib itself.
	VaultLib *catalog.Library
	// Digest is the archive's sha256, for archive and URL libraries.
	Digest string
}

// Close releases the library and its vault root.
func (o *Opened) Close() {
	o.Lib.Close()
	if o.VaultLib != nil {
		o.VaultLib.Close()
	}
}

// Open opens one library: a URL is fetched into cache and a zip extracted
// into it (cache may be nil for directories and fs.FS values), then the
// layout is detected and the skills folder (and vault root) opened. The
// error names the library and what it is.
func Open(ctx context.Context, cache *Cache, spec Spec, log *slog.Logger) (*Opened, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	what := "library root"
	if spec.Namespace != "" {
		what = "library " + strconv.Quote(spec.Namespace)
	}
	if spec.FS != nil {
		return openFS(spec, what)
	}
	o := &Opened{Spec: spec}
	dir, kind, origin := spec.Value, "directory", spec.Value
	switch {
	case spec.IsURL():
		if cache == nil {
			return nil, fmt.Errorf("%s %s: a URL library needs a cache folder", what, Redact(spec.Value))
		}
		u, err := ParseURLSpec(spec.Value)
		if err == nil && spec.SHA256 != "" {
			if u.SHA256 != "" && !strings.EqualFold(u.SHA256, spec.SHA256) {
				err = fmt.Errorf("the URL's #sha256 and the config's sha256 differ")
			}
			u.SHA256 = spec.SHA256
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", what, Redact(spec.Value), err)
		}
		u.AllowUnverified = spec.AllowUnverified
		d, digest, warning, err := cache.Fetch(ctx, u)
		if err != nil {
			return nil, &FetchError{Err: fmt.Errorf("%s %s cannot be fetched: %v", what, Redact(spec.Value), err)}
		}
		if warning != "" {
			log.Warn("remote library not refreshed; serving the cached copy", "library", spec.Namespace, "warning", warning)
		}
		dir, kind, origin, o.Digest = d, "url", Redact(spec.Value), digest
	case spec.IsZip():
		if cache == nil {
			return nil, fmt.Errorf("%s %s: a zip library needs a cache folder", what, spec.Value)
		}
		d, digest, err := cache.Extract(ctx, spec.Value)
		if err != nil {
			return nil, fmt.Errorf("%s %s cannot be extracted: %v", what, spec.Value, err)
		}
		dir, kind, o.Digest = d, "archive", digest
	}
	if kind != "directory" {
		if inner, ok := wrapper(dir); ok {
			log.Info("serving the archive from inside its one folder, so that skill URIs do not change with every release", "library", spec.Namespace, "folder", filepath.Base(inner))
			dir = inner
		}
	}
	if err := openLayout(o, dir, log); err != nil {
		if o.Digest != "" {
			cache.Prune(o.Digest)
		}
		return nil, fmt.Errorf("%s %s cannot be opened: %w", what, spec.Value, unwrapPathErr(err))
	}
	for _, lib := range []*catalog.Library{o.Lib, o.VaultLib} {
		if lib == nil {
			continue
		}
		lib.Kind, lib.Origin, lib.NoScripts, lib.Info = kind, origin, spec.NoScripts, spec.Info
		lib.Info.Digest = o.Digest
		if kind != "directory" && (lib == o.Lib || spec.Vault == "") {
			lib.Dir = "" // an extraction never changes: nothing to watch
		}
	}
	return o, nil
}

// wrapper returns the one folder of an archive's tree dir, when the tree
// holds nothing else visible and neither it nor that folder holds a
// SKILL.md: the name-1.4.2/ folder a release archive wraps its content in.
// Served from inside it, the library's skill URIs stay the same from one
// release to the next. (A folder that holds a SKILL.md is a skill, whose
// folder name is its URI's.) Hidden entries (.github/) do not count.
func wrapper(dir string) (string, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var only string
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), "."):
		case only != "" || !e.IsDir() || e.Type()&fs.ModeSymlink != 0:
			return "", false
		default:
			only = e.Name()
		}
	}
	if only == "" {
		return "", false
	}
	inner := filepath.Join(dir, only)
	if _, err := os.Lstat(filepath.Join(inner, "SKILL.md")); err == nil {
		return "", false
	}
	return inner, true
}

// openFS opens an fs.FS library: its layout is detected inside it, and its
// vault, if any, is the FS itself (or the folder detection found).
func openFS(spec Spec, what string) (*Opened, error) {
	if _, err := fs.Stat(spec.FS, "."); err != nil {
		return nil, fmt.Errorf("%s: the fs.FS cannot be read: %v", what, unwrapPathErr(err))
	}
	layout := vault.DetectLayout(spec.FS)
	skills := spec.FS
	if layout.Skills != "." {
		sub, err := fs.Sub(spec.FS, layout.Skills)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		skills = sub
	}
	lib := &catalog.Library{Namespace: spec.Namespace, FS: skills, Origin: "fs.FS", Kind: "fs", NoScripts: spec.NoScripts, Info: spec.Info}
	o := &Opened{Spec: spec, Lib: lib}
	switch {
	case spec.NoVault:
	case layout.Vault == "" || layout.Vault == layout.Skills:
		lib.Vault, lib.VaultProbe = lib, layout.Vault == ""
	default:
		root := spec.FS
		if layout.Vault != "." {
			sub, err := fs.Sub(spec.FS, layout.Vault)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", what, err)
			}
			root = sub
		}
		v := &catalog.Library{Namespace: spec.Namespace, FS: root, Origin: "fs.FS", Kind: "fs", NoScripts: spec.NoScripts, Info: spec.Info}
		lib.Vault, o.VaultLib = v, v
		rel, _ := strings.CutPrefix(layout.Skills, layout.Vault+"/")
		if layout.Vault == "." {
			rel = layout.Skills
		}
		lib.VaultSkills = rel
	}
	return o, nil
}

// openLayout opens the skills folder of the library root dir and, when it
// holds a vault (or one is given), the vault root. Both are recognised
// from inside dir only, and both must really be below dir: a folder
// swapped for a symlink between detection and opening is refused.
func openLayout(o *Opened, dir string, log *slog.Logger) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	layout := vault.DetectLayout(regfile.FS(root))
	root.Close()
	if err := beneath(dir, layout.Skills); err != nil {
		return err
	}
	lib, err := catalog.OpenDirectory(o.Spec.Namespace, filepath.Join(dir, filepath.FromSlash(layout.Skills)))
	if err != nil {
		return err
	}
	o.Lib = lib
	switch {
	case o.Spec.NoVault:
		return nil
	case o.Spec.Vault != "":
		o.VaultLib, err = catalog.OpenDirectory(o.Spec.Namespace, o.Spec.Vault)
		if err != nil {
			lib.Close()
			return fmt.Errorf("vault %s: %w", o.Spec.Vault, unwrapPathErr(err))
		}
		lib.Vault = o.VaultLib
		if rel, err := filepath.Rel(o.VaultLib.Dir, lib.Dir); err == nil && filepath.IsLocal(rel) {
			lib.VaultSkills = filepath.ToSlash(rel)
		}
	case layout.Vault == "":
		lib.Vault, lib.VaultProbe = lib, true
	case layout.Vault == layout.Skills:
		lib.Vault = lib
	default:
		if err := beneath(dir, layout.Vault); err != nil {
			lib.Close()
			return err
		}
		o.VaultLib, err = catalog.OpenDirectory(o.Spec.Namespace, filepath.Join(dir, filepath.FromSlash(layout.Vault)))
		if err != nil {
			lib.Close()
			return err
		}
		lib.Vault = o.VaultLib
		rel, _ := strings.CutPrefix(layout.Skills, layout.Vault+"/")
		if layout.Vault == "." {
			rel = layout.Skills
		}
		lib.VaultSkills = rel
	}
	if lib.Vault != nil && !lib.VaultProbe {
		log.Info("library holds a vault: serving its playbooks and value chains", "library", o.Spec.Namespace, "skills", layout.Skills)
	}
	return nil
}

// beneath checks that the folder rel (slash-separated) of dir resolves to
// the same place without symlinks.
func beneath(dir, rel string) error {
	if rel == "." {
		return nil
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	got, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	if got != filepath.Join(base, filepath.FromSlash(rel)) {
		return fmt.Errorf("%s is reached through a symlink; not served", rel)
	}
	return nil
}

func unwrapPathErr(err error) error {
	// Only a bare path error: one wrapped with context ("vault DIR: …")
	// keeps the context, which says which path it was.
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
