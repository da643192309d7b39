// Package config is the skills-mcp configuration file as plain data: Parse
// reads it strictly (unknown and repeated keys are errors that name the
// key), Validate checks every field and names the one at fault, and Resolve
// turns relative paths into absolute ones against the file's folder. The
// package reads no file and no environment (the command line does that);
// Resolve only follows symlinks, to keep relative paths inside the folder.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxBytes bounds a config file.
const MaxBytes = 1 << 20

// Config is the configuration file.
type Config struct {
	Libraries []Library `json:"libraries"`
	// Global switches. A nil pointer means "not set in the file", so the
	// command line's value stands.
	NoScripts       *bool       `json:"noScripts,omitempty"`
	Lint            *bool       `json:"lint,omitempty"`
	Playbooks       *bool       `json:"playbooks,omitempty"`
	ValueChains     *bool       `json:"valueChains,omitempty"`
	ExcludeTiers    *StringList `json:"excludeTiers,omitempty"`
	DevStatus       *StringList `json:"devStatus,omitempty"`
	AllowUnverified *bool       `json:"allowUnverified,omitempty"`
	// Rate limits over HTTP, in requests per second (0 turns one off), and
	// the burst as a duration ("2s"). The command line's flags and
	// variables beat them; they are read at start only.
	RateLimitAddress *float64  `json:"rateLimitAddress,omitempty"`
	RateLimitToken   *float64  `json:"rateLimitToken,omitempty"`
	RateLimitBurst   *Duration `json:"rateLimitBurst,omitempty"`
}

// Duration is a time.Duration written as a string such as "2s" or "500ms".
// Only rateLimitBurst is one, so its errors name that key.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`rateLimitBurst must be a duration such as "2s" or "500ms"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`rateLimitBurst %q is not a duration such as "2s" or "500ms"`, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Bounds of the rate limit settings, shared with the command line.
const (
	// MaxRate is the highest rate limit accepted, in requests per second:
	// far above what one server answers, so that higher values are typos.
	MaxRate = 1e6
	// MaxRateBurst is the longest burst accepted.
	MaxRateBurst = time.Hour
)

// Library is one library of the file.
type Library struct {
	Namespace string `json:"namespace"`
	// Root is a directory or a .zip file; URL (with SHA256) an https zip.
	// Exactly one of Root and URL is set.
	Root   string `json:"root,omitempty"`
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// NoScripts withholds this library's scripts.
	NoScripts bool `json:"noScripts,omitempty"`
	// Vault is a vault folder path, or false to turn vault extras off.
	Vault *Vault `json:"vault,omitempty"`
	// Shown to clients instead of paths.
	Title    string            `json:"title,omitempty"`
	Source   string            `json:"source,omitempty"`
	Version  string            `json:"version,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Vault is a path or the literal false.
type Vault struct {
	Path     string
	Disabled bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Vault) UnmarshalJSON(b []byte) error {
	switch string(bytes.TrimSpace(b)) {
	case "false":
		*v = Vault{Disabled: true}
		return nil
	case "true":
		return errors.New("vault must be a folder path or false")
	}
	if err := json.Unmarshal(b, &v.Path); err != nil {
		return errors.New("vault must be a folder path or false")
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (v Vault) MarshalJSON() ([]byte, error) {
	if v.Disabled {
		return []byte("false"), nil
	}
	return json.Marshal(v.Path)
}

// StringList is an array of strings or one comma-separated string.
type StringList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = nil
		for part := range strings.SplitSeq(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*l = append(*l, part)
			}
		}
		return nil
	}
	var arr []string
	if err := json.Unmarshal(b, &arr); err != nil {
		return errors.New("must be an array of strings or a comma-separated string")
	}
	*l = arr
	return nil
}

// FieldError is a problem with one field.
type FieldError struct {
	Field string // e.g. "libraries[1].namespace"
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Parse reads a config file strictly: it must be one JSON object, at most
// MaxBytes, with no key this package does not know and no key given twice
// in one object.
func Parse(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("config is larger than %d bytes", MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, describe(err, data, dec.InputOffset())
	}
	// JSON's whitespace only: bytes.TrimSpace would also pass a \v or a
	// U+0085 after the value, which is not JSON.
	if len(bytes.Trim(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("config holds more than one JSON value, or text after it")
	}
	if err := checkKeys(data); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkKeys refuses an object of data (one JSON value, already decoded
// without error) that holds a key twice. encoding/json keeps the last value
// silently, so a second "noScripts": false further down a long file would
// undo the first unseen. Keys of the objects decoded into structs are
// compared as encoding/json matches them to fields, ignoring case ("Root"
// and "root" fill the same field); those of metadata, a map, exactly.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return walkKeys(dec, "", false)
}

// walkKeys reads one value from dec, checking the keys of every object in
// it; path names the value as FieldError does, and isMap says whether an
// object there is a map. The depth is that of a decoded Config, a few
// levels, so the recursion is shallow.
func walkKeys(dec *json.Decoder, path string, isMap bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]string{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			norm := key
			if !isMap {
				norm = foldKey(key)
			}
			if first, dup := seen[norm]; dup {
				err := fmt.Errorf("key %q is given twice; keep one", key)
				if first != key {
					err = fmt.Errorf("keys %q and %q are the same key (case is ignored); keep one", first, key)
				}
				if path == "" {
					return err
				}
				return &FieldError{Field: path, Err: err}
			}
			seen[norm] = key
			child := key
			if path != "" {
				child = path + "." + key
			}
			if err := walkKeys(dec, child, !isMap && norm == foldKey("metadata")); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

// foldKey maps key to one spelling per class of keys that encoding/json
// matches to the same field: each rune becomes the least of its case
// folding orbit, so foldKey(a) == foldKey(b) exactly when bytes.EqualFold
// holds.
func foldKey(key string) string {
	var b strings.Builder
	for _, r := range key {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// describe rewrites decoder errors so that they name the key and where it
// is, as line and column; at is the decoder's offset when it stopped.
func describe(err error, data []byte, at int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		msg := strings.TrimPrefix(err.Error(), "json: ")
		return fmt.Errorf("config is not valid JSON at %s: %s", Position(data, se.Offset), msg)
	case errors.As(err, &te):
		return &FieldError{Field: te.Field, Err: fmt.Errorf("must be %s, not a JSON %s (at %s)", te.Type, te.Value, Position(data, te.Offset))}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown key %s at %s; see the README for the keys a config file may hold", strings.TrimPrefix(err.Error(), "json: unknown field "), Position(data, at))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("config ends at %s before its JSON value does (a missing } or ], or a cut-off file)", Position(data, int64(len(data))))
	case errors.Is(err, io.EOF):
		return errors.New("config is empty; it must be a JSON object with a libraries array")
	}
	return err
}

// Position is byte offset off of data as "line L, column C" (both from 1;
// the column counts runes), for errors a person fixes in an editor.
func Position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

var (
	namespacePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	sha256Pattern    = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

// Limits on the strings shown to clients.
const (
	maxInfoLen        = 200
	maxMetadataKeyLen = 64
	maxMetadataValLen = 500
)

// Validate checks the whole configuration and returns every problem found,
// joined; each names its field.
func (c *Config) Validate() error {
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if len(c.Libraries) == 0 {
		add("libraries", "must list at least one library")
	}
	seen := map[string]int{}
	for i, l := range c.Libraries {
		f := fmt.Sprintf("libraries[%d]", i)
		switch {
		case l.Namespace == "":
			add(f+".namespace", "is required")
		case !namespacePattern.MatchString(l.Namespace):
			add(f+".namespace", "%q must match %s", l.Namespace, namespacePattern)
		default:
			if j, dup := seen[l.Namespace]; dup {
				add(f+".namespace", "%q is also the namespace of libraries[%d]", l.Namespace, j)
			}
			seen[l.Namespace] = i
		}
		switch {
		case l.Root == "" && l.URL == "":
			add(f, "needs root (a folder or .zip) or url (an https .zip)")
		case l.Root != "" && l.URL != "":
			add(f, "has both root and url; keep one")
		case l.URL != "" && !strings.HasPrefix(l.URL, "https://"):
			add(f+".url", "must be an https URL")
		case l.Root != "" && strings.ContainsRune(l.Root, 0):
			add(f+".root", "contains a NUL byte")
		}
		if l.SHA256 != "" && !sha256Pattern.MatchString(l.SHA256) {
			add(f+".sha256", "must be 64 hex digits")
		}
		if l.SHA256 != "" && l.URL == "" {
			add(f+".sha256", "pins a url; a root has no pin")
		}
		for name, v := range map[string]string{"title": l.Title, "source": l.Source, "version": l.Version} {
			if len(v) > maxInfoLen {
				add(f+"."+name, "is longer than %d characters", maxInfoLen)
			}
		}
		for k, v := range l.Metadata {
			if k == "" || len(k) > maxMetadataKeyLen {
				add(f+".metadata", "key %q must be 1 to %d characters", k, maxMetadataKeyLen)
			}
			if len(v) > maxMetadataValLen {
				add(f+".metadata."+k, "is longer than %d characters", maxMetadataValLen)
			}
		}
	}
	for field, v := range map[string]*float64{"rateLimitAddress": c.RateLimitAddress, "rateLimitToken": c.RateLimitToken} {
		if v != nil && !(*v >= 0 && *v <= MaxRate) {
			add(field, "must be a number of requests per second from 0 (no limit) to %g, got %g", float64(MaxRate), *v)
		}
	}
	if b := c.RateLimitBurst; b != nil && (*b <= 0 || time.Duration(*b) > MaxRateBurst) {
		add("rateLimitBurst", "must be a duration above 0 and at most %s, got %s", MaxRateBurst, time.Duration(*b))
	}
	return errors.Join(errs...)
}

// Resolve makes every relative root and vault path absolute against dir,
// the folder of the config file. A relative path may not climb out of that
// folder, neither by its name nor through a symlink inside the folder: a
// config file names folders elsewhere with absolute paths, so that a file
// dropped into a shared folder cannot reach its surroundings by accident.
// The symlinks are those on disk when Resolve runs; the parts of a path
// that do not exist yet are taken as written.
func (c *Config) Resolve(dir string) error {
	var errs []error
	abs := func(field, p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if !filepath.IsLocal(p) {
			errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf("relative path %q leaves the config file's folder; use an absolute path", p)})
			return p
		}
		joined := filepath.Join(dir, p)
		if err := within(dir, joined); err != nil {
			errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf("relative path %q %v; use an absolute path", p, err)})
		}
		return joined
	}
	for i := range c.Libraries {
		l := &c.Libraries[i]
		l.Root = abs(fmt.Sprintf("libraries[%d].root", i), l.Root)
		if l.Vault != nil {
			l.Vault.Path = abs(fmt.Sprintf("libraries[%d].vault", i), l.Vault.Path)
		}
	}
	return errors.Join(errs...)
}

// within checks that path, below dir by its name, is still below dir once
// the symlinks of both are followed.
func within(dir, path string) error {
	base, err := realPath(dir)
	if err != nil {
		return err
	}
	real, err := realPath(path)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(rel) {
		return errors.New("leaves the config file's folder through a symlink")
	}
	return nil
}

// realPath is path with every symlink followed, like filepath.EvalSymlinks,
// except that the parts that do not exist are kept as written: the longest
// prefix that resolves is resolved. A symlink whose target is missing is an
// error, as nothing tells where it would lead once the target appears.
func realPath(path string) (string, error) {
	path = filepath.Clean(path)
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("goes through the symlink %s, whose target cannot be followed", filepath.Base(path))
		}
		parent := filepath.Dir(path)
		if parent == path {
			// Nothing resolves, not even the root: keep the name.
			return filepath.Join(append([]string{path}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(path)}, rest...)
		path = parent
	}
}
