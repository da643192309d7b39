package wellknown

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
)

// SchemaV2 is the $schema of the current index format (Agent Skills
// discovery 0.2.0); the clients accept no other value.
const SchemaV2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// The entry types of the 0.2.0 index.
const (
	TypeSkillMD = "skill-md" // the artifact is the SKILL.md itself
	TypeArchive = "archive"  // the artifact is a zip of the skill folder
)

// The limits a listed skill must fit. The skills client refuses an archive
// that unpacks to more than 50 MiB or holds more than 1,000 files, and an
// entry whose description is empty or over 1,024 characters; the first two
// are its limits, the last is the format's.
const (
	DefaultMaxArchiveBytes = 50 << 20
	MaxArchiveFiles        = 1000
	MaxDescription         = 1024
)

// An Index is what one catalog snapshot publishes: both index documents
// and every listed skill's artifact. It is immutable once built.
type Index struct {
	snap *catalog.Snapshot

	v2, v1         []byte // the index documents
	v2Tag, v1Tag   string // their ETags
	skills         map[string]*entry
	cachedArchives int64 // bytes of archives kept in entries
}

// entry is one listed skill.
type entry struct {
	skill *catalog.Skill
	name  string
	typ   string // TypeSkillMD or TypeArchive
	// digest is the artifact's, "sha256:" and 64 hex digits; for a
	// skill-md entry the SKILL.md's catalog digest.
	digest string
	// key identifies the skill's content: a skill whose files, names and
	// digests are unchanged has the same archive, so a rebuild reuses it.
	key [32]byte
	// archive holds the archive's bytes when the build kept them (see
	// Options.CacheBytes); nil means build them again on request.
	archive []byte
	// files maps each file's path below the skill folder to the file;
	// names holds the paths, sorted.
	files map[string]*catalog.File
	names []string
}

// artifact is what a rebuild reuses of an unchanged skill's archive.
type artifact struct {
	digest  string
	archive []byte
}

// indexV2 and entryV2 are the 0.2.0 index document.
type indexV2 struct {
	Schema string    `json:"$schema"`
	Skills []entryV2 `json:"skills"`
}

type entryV2 struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

// indexV1 and entryV1 are the older document, /.well-known/skills: each
// entry lists its files, fetched one by one beside the index.
type indexV1 struct {
	Skills []entryV1 `json:"skills"`
}

type entryV1 struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Files       []string `json:"files"`
}

// build makes the index of snap. prev, if not nil, is the index of an
// earlier snapshot, whose archives are reused for unchanged skills.
func build(snap *catalog.Snapshot, prev *Index, maxArchive, cacheBytes int64, log *slog.Logger) *Index {
	ix := &Index{snap: snap, skills: map[string]*entry{}}
	reuse := map[[32]byte]artifact{}
	if prev != nil {
		for _, e := range prev.skills {
			if e.typ == TypeArchive {
				reuse[e.key] = artifact{e.digest, e.archive}
			}
		}
	}
	var skipped []string
	skip := func(sk *catalog.Skill, why string) {
		skipped = append(skipped, fmt.Sprintf("%s (%s)", sk.Path, why))
	}
	v2 := indexV2{Schema: SchemaV2, Skills: []entryV2{}}
	v1 := indexV1{Skills: []entryV1{}}
	// All is sorted by URI, so of two skills with one name the same one is
	// listed every time.
	for _, sk := range snap.All() {
		switch {
		case !ValidName(sk.Name):
			skip(sk, "its name is not an Agent Skills name, which installers require")
			continue
		case ix.skills[sk.Name] != nil:
			skip(sk, "another skill of that name is listed")
			continue
		case strings.TrimSpace(sk.Description) == "":
			skip(sk, "no description")
			continue
		case len(sk.Files) > MaxArchiveFiles:
			skip(sk, fmt.Sprintf("more than %d files", MaxArchiveFiles))
			continue
		case sk.Bytes > maxArchive:
			skip(sk, fmt.Sprintf("more than %d bytes", maxArchive))
			continue
		}
		e := &entry{skill: sk, name: sk.Name, files: make(map[string]*catalog.File, len(sk.Files))}
		names := make([]string, 0, len(sk.Files))
		for _, f := range sk.Files {
			rel := relName(sk, f)
			e.files[rel] = f
			names = append(names, rel)
		}
		slices.Sort(names)
		e.names = names
		e.key = contentKey(names, e.files)
		md := e.files[skillFile]
		if md == nil {
			skip(sk, "no SKILL.md in its file list")
			continue
		}
		if len(sk.Files) == 1 && md.Text && !hasBOM(md) {
			// A lone SKILL.md is its own artifact; the client decodes it as
			// UTF-8 text, so only a text file without a byte order mark
			// arrives unchanged.
			e.typ, e.digest = TypeSkillMD, md.Digest.String()
		} else {
			e.typ = TypeArchive
			if a, ok := reuse[e.key]; ok {
				e.digest, e.archive = a.digest, a.archive
			} else {
				data, err := archiveOf(e)
				if err != nil {
					// A file changed since the scan: the next snapshot,
					// which the change brings, lists the skill again.
					skip(sk, err.Error())
					continue
				}
				e.digest = digestOf(data)
				e.archive = data
			}
			if e.archive != nil && ix.cachedArchives+int64(len(e.archive)) <= cacheBytes {
				ix.cachedArchives += int64(len(e.archive))
			} else {
				e.archive = nil
			}
		}
		ix.skills[e.name] = e
		desc := clipDescription(sk.Description)
		url := e.name + "/" + skillFile
		if e.typ == TypeArchive {
			url = e.name + ".zip"
		}
		v2.Skills = append(v2.Skills, entryV2{Name: e.name, Type: e.typ, Description: desc, URL: url, Digest: e.digest})
		if slices.ContainsFunc(names, unsafeForV1) {
			// The older clients drop the whole index over one such entry;
			// the 0.2.0 index's archive carries the skill.
			continue
		}
		v1.Skills = append(v1.Skills, entryV1{Name: e.name, Description: desc, Files: names})
	}
	ix.v2, ix.v2Tag = encode(v2)
	ix.v1, ix.v1Tag = encode(v1)
	if len(skipped) > 0 && log != nil {
		log.Info("well-known index: skills not listed", "count", len(skipped), "skills", strings.Join(skipped, "; "))
	}
	return ix
}

// skillFile is the name of a skill's main file.
const skillFile = "SKILL.md"

// relName returns f's path below its skill's folder.
func relName(sk *catalog.Skill, f *catalog.File) string {
	if sk.Folder == "." {
		return f.Name()
	}
	return strings.TrimPrefix(f.Name(), sk.Folder+"/")
}

// contentKey digests a skill's file names and contents.
func contentKey(names []string, files map[string]*catalog.File) [32]byte {
	h := sha256.New()
	for _, n := range names {
		d := files[n].Digest
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(d[:])
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// hasBOM reports whether a text file starts with a UTF-8 byte order mark,
// which a TextDecoder drops.
func hasBOM(f *catalog.File) bool {
	if f.Size < 3 {
		return false
	}
	data, err := f.ReadFile()
	return err != nil || bytes.HasPrefix(data, []byte("\xef\xbb\xbf"))
}

// unsafeForV1 reports whether the older clients refuse a file path.
func unsafeForV1(name string) bool {
	return name == "" || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) ||
		strings.Contains(name, "..") || strings.ContainsRune(name, 0)
}

// ValidName reports whether name is an Agent Skills name, as the
// installers check it: 1 to 64 of a-z, 0-9 and "-", without a leading,
// trailing or doubled hyphen.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// clipDescription cuts a description to MaxDescription UTF-16 code units
// (the length a JavaScript client measures), at a character boundary: the
// index's description is for display, the SKILL.md keeps the whole one.
func clipDescription(s string) string {
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if n+w > MaxDescription {
			return s[:i]
		}
		n += w
	}
	return s
}

// encode renders an index document and its ETag.
func encode(v any) ([]byte, string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // plain structs of strings always encode
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), `"` + hex.EncodeToString(sum[:16]) + `"`
}

// digestOf returns data's digest as the index spells it.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// errChanged says that a file no longer has the bytes its snapshot
// published.
var errChanged = errors.New("a file changed since the catalog was scanned")
