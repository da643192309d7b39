package check

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skill"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// legacyIndexURI is the index of the superseded draft.
const legacyIndexURI = "skill://index.json"

// maxExpanded bounds how far an archive is decompressed: a skill holds at
// most 16 MiB, so an archive expanding past that is refused unread.
const maxExpanded = skillsext.MaxTotalBytes

// legacy checks skill://index.json and its archives, when the server
// serves them. They are not part of the stable specification; the checks
// follow the superseded draft and the hardening hosts built for it.
func (c *checker) legacy(ctx context.Context, s *session, l *listing) {
	v := s.version
	data, ok := c.readBlob(ctx, s, "legacy-index", legacyIndexURI, true)
	if !ok {
		return
	}
	var doc struct {
		Skills []json.RawMessage `json:"skills"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Skills == nil {
		c.rec.add(Fail, "legacy-index", v, legacyIndexURI, "the index is not {\"skills\":[…]}")
		return
	}
	live := map[string]*entry{}
	for _, e := range l.entries {
		live[e.uri] = e
	}
	names := map[string][]string{}
	var order []string
	clean := true
	for i, raw := range doc.Skills {
		if i >= c.opts.MaxEntries {
			c.rec.add(Skip, "legacy-index", v, legacyIndexURI, "only the first %d index entries are checked", c.opts.MaxEntries)
			break
		}
		var ie struct {
			URL         *string         `json:"url"`
			Digest      *string         `json:"digest"`
			Frontmatter json.RawMessage `json:"frontmatter"`
			Archives    []struct {
				URL      string `json:"url"`
				MIMEType string `json:"mimeType"`
				Digest   string `json:"digest"`
			} `json:"archives"`
		}
		subject := fmt.Sprintf("%s skills[%d]", legacyIndexURI, i)
		if err := json.Unmarshal(raw, &ie); err != nil {
			c.rec.add(Fail, "legacy-index", v, subject, "the entry does not decode: %v", truncate(err.Error(), 120))
			clean = false
			continue
		}
		if ie.URL != nil {
			subject = *ie.URL
		} else if len(ie.Archives) > 0 {
			subject = ie.Archives[0].URL
		}
		var problems []string
		fm, err := object(ie.Frontmatter)
		name, _ := str(fm, "name")
		if err != nil || name == "" {
			problems = append(problems, "frontmatter is not an object with a name")
		}
		if (ie.URL == nil) != (ie.Digest == nil) {
			problems = append(problems, "digest must be present exactly when url is")
		}
		if ie.URL == nil && len(ie.Archives) == 0 {
			problems = append(problems, "the entry has neither a url nor archives")
		}
		if ie.URL != nil && strings.HasPrefix(strings.ToLower(*ie.URL), "file:") {
			problems = append(problems, "url names the host's file system (file:)")
		}
		if ie.Digest != nil && !digestRE().MatchString(*ie.Digest) {
			problems = append(problems, "digest is not sha256:<64 lowercase hex>")
		}
		for _, a := range ie.Archives {
			if a.URL == "" || !digestRE().MatchString(a.Digest) || a.MIMEType == "" {
				problems = append(problems, "an archive lacks a url, a mimeType or a sha256 digest")
			}
		}
		if len(problems) > 0 {
			c.rec.add(Fail, "legacy-index", v, subject, "%s", strings.Join(problems, "; "))
			clean = false
			continue
		}
		if len(names[name]) == 0 {
			order = append(order, name)
		}
		names[name] = append(names[name], subject)
		var liveEntry *entry
		if ie.URL != nil {
			liveEntry = live[*ie.URL]
			if !c.legacyURL(ctx, s, *ie.URL, *ie.Digest, liveEntry) {
				clean = false
			}
		}
		for _, a := range ie.Archives {
			c.legacyArchive(ctx, s, archiveRef{url: a.URL, mime: a.MIMEType, digest: a.Digest}, fm, liveEntry)
		}
	}
	for _, name := range order {
		if subjects := names[name]; len(subjects) > 1 {
			c.rec.add(Warn, "legacy-index", v, subjects[0], "%d index entries are named %q (%s); an installer that keys skills by name overwrites one with another",
				len(subjects), name, strings.Join(subjects, ", "))
			clean = false
		}
	}
	if clean {
		c.rec.ok("legacy-index", v)
	}
}

// readBlob reads a resource of unknown size for the legacy checks. When
// optional is set, -32602 means the resource is not served: a SKIP.
func (c *checker) readBlob(ctx context.Context, s *session, id, uri string, optional bool) ([]byte, bool) {
	v := s.version
	if c.read >= c.opts.MaxTotalBytes {
		c.rec.add(Skip, id, v, uri, "not read: the run's read budget of %d bytes is spent", c.opts.MaxTotalBytes)
		return nil, false
	}
	res, err := s.read(ctx, uri, c.opts.Tester)
	if err != nil {
		if optional && code(err) == -32602 {
			c.rec.add(Skip, id, v, "", "the server serves no %s (the index of the superseded archive draft; not part of the stable spec)", uri)
			for _, other := range []string{"legacy-archives", "legacy-archive-safety", "legacy-archive-content"} {
				c.rec.add(Skip, other, v, "", "no legacy index, so no archives to check")
			}
			return nil, false
		}
		c.rec.add(Fail, id, v, uri, "resources/read failed: %v", err)
		return nil, false
	}
	data, problem := contentsOf(res, uri)
	if problem != "" {
		c.rec.add(Fail, id, v, uri, "%s", problem)
		return nil, false
	}
	c.read += int64(len(data))
	return data, true
}

// legacyURL checks the digest an index entry gives its SKILL.md.
func (c *checker) legacyURL(ctx context.Context, s *session, url, digest string, live *entry) bool {
	var data []byte
	if live != nil && live.skillMD != nil {
		data = live.skillMD
	} else {
		var ok bool
		if data, ok = c.readBlob(ctx, s, "legacy-index", url, false); !ok {
			return false
		}
	}
	if got := digestOf(data); got != digest {
		c.rec.add(Fail, "legacy-index", s.version, url, "the index gives digest %s; the served SKILL.md has %s", digest, got)
		return false
	}
	return true
}

type archiveRef struct{ url, mime, digest string }

// member is one archive entry as the safety checks see it.
type member struct {
	name   string
	kind   string // "file", "dir", "symlink", "hardlink" or "other"
	mode   fs.FileMode
	digest string
	data   []byte // regular files named SKILL.md at the root only
}

// legacyArchive reads one archive and checks it.
func (c *checker) legacyArchive(ctx context.Context, s *session, a archiveRef, indexFM map[string]json.RawMessage, live *entry) {
	v := s.version
	data, ok := c.readBlob(ctx, s, "legacy-archives", a.url, false)
	if !ok {
		return
	}
	if got := digestOf(data); got != a.digest {
		c.rec.add(Fail, "legacy-archives", v, a.url, "the index gives digest %s; the archive read has %s", a.digest, got)
		return
	}
	var members []member
	var err error
	switch a.mime {
	case "application/gzip", "application/x-gzip", "application/x-tar", "application/x-gtar":
		members, err = tarMembers(data)
	case "application/zip", "application/x-zip-compressed":
		members, err = zipMembers(data)
	default:
		c.rec.add(Warn, "legacy-archives", v, a.url, "mimeType %q is no archive type hosts know; they skip it", a.mime)
		return
	}
	if errors.Is(err, errBomb) {
		c.rec.add(Fail, "legacy-archive-safety", v, a.url, "the archive expands past %d bytes (16 MiB, the most a skill may hold); extraction must be bounded before it finishes", maxExpanded)
		return
	}
	if err != nil {
		c.rec.add(Fail, "legacy-archives", v, a.url, "the archive does not open: %v", truncate(err.Error(), 160))
		return
	}
	c.safety(v, a.url, members)

	var skillMD []byte
	for _, m := range members {
		if m.kind == "file" && strings.TrimPrefix(m.name, "./") == skillsext.SkillFile {
			skillMD = m.data
		}
	}
	if skillMD == nil {
		c.rec.add(Fail, "legacy-archives", v, a.url, "the archive has no SKILL.md at its root")
		return
	}
	doc, err := skill.Parse(skillMD)
	if err != nil {
		c.rec.add(Fail, "legacy-archives", v, a.url, "the archive's SKILL.md has no usable frontmatter: %v", err)
		return
	}
	if diffs := frontmatterDiffs(indexFM, doc.Frontmatter); len(diffs) > 0 {
		c.rec.add(Fail, "legacy-archives", v, a.url, "the index frontmatter differs from the archive's SKILL.md: %s", strings.Join(diffs, "; "))
		return
	}
	c.rec.ok("legacy-archives", v)
	if live != nil && live.valid && !live.dynamic {
		c.content(v, a.url, members, live)
	}
}

// safety reports archive entries a careful extractor must refuse or
// sanitise.
func (c *checker) safety(v, url string, members []member) {
	clean := true
	seen := map[string]member{}
	for _, m := range members {
		if why := unsafeName(m.name); why != "" {
			c.rec.add(Fail, "legacy-archive-safety", v, url, "entry %q %s; archive entries must be relative, '/'-separated and stay inside the skill", m.name, why)
			clean = false
			continue
		}
		switch m.kind {
		case "symlink", "hardlink":
			c.rec.add(Fail, "legacy-archive-safety", v, url, "entry %q is a %s; links can point outside the install directory", m.name, m.kind)
			clean = false
			continue
		case "other":
			c.rec.add(Warn, "legacy-archive-safety", v, url, "entry %q is neither a file nor a directory (%s); extractors should refuse devices and FIFOs", m.name, m.mode.Type())
			clean = false
			continue
		}
		if m.mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
			c.rec.add(Warn, "legacy-archive-safety", v, url, "entry %q has mode %s; extractors should clear setuid, setgid and sticky bits", m.name, m.mode)
			clean = false
		}
		if m.kind != "file" {
			continue
		}
		key := strings.ToLower(strings.TrimPrefix(m.name, "./"))
		if prev, dup := seen[key]; dup && (prev.name != m.name || prev.digest != m.digest) {
			c.rec.add(Warn, "legacy-archive-safety", v, url, "entries %q and %q collide on a case-insensitive file system", prev.name, m.name)
			clean = false
		}
		seen[key] = m
	}
	if clean {
		c.rec.ok("legacy-archive-safety", v)
	}
}

// unsafeName says why an archive entry name is unsafe, or "".
func unsafeName(name string) string {
	switch {
	case name == "":
		return "has an empty name"
	case strings.ContainsAny(name, "\x00"):
		return "contains NUL"
	case strings.Contains(name, `\`):
		return "contains a backslash"
	case strings.HasPrefix(name, "/"):
		return "is absolute"
	case len(name) >= 2 && name[1] == ':':
		return "has a drive prefix"
	}
	for seg := range strings.SplitSeq(strings.TrimSuffix(name, "/"), "/") {
		if seg == ".." {
			return "has a '..' segment"
		}
	}
	return ""
}

// content compares the regular files of an archive with the live files
// of the skill the same index entry names.
func (c *checker) content(v, url string, members []member, live *entry) {
	listed := map[string]string{}
	for _, r := range live.files {
		listed[r.uri] = r.digest
	}
	inArchive := map[string]bool{}
	clean := true
	for _, m := range members {
		if m.kind != "file" || unsafeName(m.name) != "" {
			continue
		}
		uri := live.root + "/" + path.Clean(m.name)
		inArchive[uri] = true
		switch d, ok := listed[uri]; {
		case !ok:
			c.rec.add(Fail, "legacy-archive-content", v, url, "holds %s, which the live skill does not list", m.name)
			clean = false
		case d != m.digest:
			c.rec.add(Fail, "legacy-archive-content", v, url, "its %s (%s) differs from the live file %s (%s)", m.name, m.digest, uri, d)
			clean = false
		}
	}
	for _, r := range live.files {
		if !inArchive[r.uri] {
			c.rec.add(Fail, "legacy-archive-content", v, url, "lacks %s, which the live skill lists", r.uri)
			clean = false
		}
	}
	if clean {
		c.rec.ok("legacy-archive-content", v)
	}
}

// errBomb is returned when an archive expands past maxExpanded.
var errBomb = errors.New("the archive expands past the limit")

// budget counts expanded bytes across an archive.
type budget struct{ left int64 }

// take reads r to the end into a hash (and into keep when it is not nil),
// charging the budget.
func (b *budget) take(r io.Reader, keep *[]byte) (string, error) {
	h := sha256.New()
	var w io.Writer = h
	var buf bytes.Buffer
	if keep != nil {
		w = io.MultiWriter(h, &buf)
	}
	n, err := io.Copy(w, io.LimitReader(r, b.left+1))
	b.left -= n
	if b.left < 0 {
		return "", errBomb
	}
	if err != nil {
		return "", err
	}
	if keep != nil {
		*keep = buf.Bytes()
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// tarMembers lists a tar archive, gzip-compressed or not, decompressing at
// most maxExpanded bytes.
func tarMembers(data []byte) ([]member, error) {
	var r io.Reader = bytes.NewReader(data)
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = gz
	}
	b := &budget{left: maxExpanded}
	// The tar stream itself (headers and padding) counts against the
	// budget too, so a bomb of headers is caught as well.
	lr := &io.LimitedReader{R: r, N: maxExpanded + 1}
	tr := tar.NewReader(lr)
	var out []member
	for len(out) < maxLegacyArchiveEntries {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			if lr.N <= 0 {
				return nil, errBomb
			}
			return nil, err
		}
		m := member{name: h.Name, mode: h.FileInfo().Mode()}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
			m.kind = "file"
			var keep *[]byte
			if strings.TrimPrefix(h.Name, "./") == skillsext.SkillFile {
				keep = &m.data
			}
			if m.digest, err = b.take(tr, keep); err != nil {
				if lr.N <= 0 {
					return nil, errBomb
				}
				return nil, err
			}
		case tar.TypeDir:
			m.kind = "dir"
		case tar.TypeSymlink:
			m.kind = "symlink"
		case tar.TypeLink:
			m.kind = "hardlink"
		default:
			m.kind = "other"
		}
		if lr.N <= 0 {
			return nil, errBomb
		}
		out = append(out, m)
	}
	return nil, fmt.Errorf("more than %d entries", maxLegacyArchiveEntries)
}

// zipMembers lists a zip archive, refusing one whose declared or actual
// expansion passes maxExpanded.
func zipMembers(data []byte) ([]member, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, err
	}
	if len(zr.File) > maxLegacyArchiveEntries {
		return nil, fmt.Errorf("more than %d entries", maxLegacyArchiveEntries)
	}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
	}
	if declared > maxExpanded {
		return nil, errBomb
	}
	b := &budget{left: maxExpanded}
	var out []member
	for _, f := range zr.File {
		mode := f.Mode()
		m := member{name: f.Name, mode: mode}
		switch {
		case mode&fs.ModeSymlink != 0:
			m.kind = "symlink"
		case mode.IsDir():
			m.kind = "dir"
		case !mode.IsRegular():
			m.kind = "other"
		default:
			m.kind = "file"
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			var keep *[]byte
			if strings.TrimPrefix(f.Name, "./") == skillsext.SkillFile {
				keep = &m.data
			}
			m.digest, err = b.take(rc, keep)
			rc.Close()
			if err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	return out, nil
}
