package catalog

import (
	"encoding/hex"
	"encoding/json"
	"path"
	"strconv"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// encodeEntry encodes a skill's skills/list entry. The frontmatter is
// spliced in as rendered from the YAML tree, in source key order.
func encodeEntry(sk *Skill) []byte {
	return sk.AppendEntry(make([]byte, 0, entrySize(sk)))
}

// entrySize estimates the length of a skill's entry, so that encodeEntry
// allocates once for almost every skill.
func entrySize(sk *Skill) int {
	n := 64 + len(sk.URI) + len(sk.Frontmatter)
	for _, f := range sk.Files {
		n += 48 + len(f.URI) + digestLen
	}
	return n
}

// AppendEntry appends the skill's skills/list entry, the JSON object that
// Entry returns, to dst.
func (sk *Skill) AppendEntry(dst []byte) []byte {
	b := append(dst, `{"uri":`...)
	b = appendJSONString(b, sk.URI)
	b = append(b, `,"frontmatter":`...)
	b = append(b, sk.Frontmatter...)
	b = append(b, `,"resources":[`...)
	for i, f := range sk.Files {
		if i > 0 {
			b = append(b, ',')
		}
		if f.plain {
			b = append(b, `{"uri":"`...)
			b = append(b, f.URI...)
			b = append(b, `","digest":`...)
			b = f.Digest.appendJSON(b)
			b = append(b, `,"size":`...)
		} else {
			b = append(b, `{"uri":`...)
			b = appendJSONString(b, f.URI)
			b = append(b, `,"digest":`...)
			b = f.Digest.appendJSON(b)
			b = append(b, `,"size":`...)
		}
		b = strconv.AppendInt(b, f.Size, 10)
		b = append(b, '}')
	}
	b = append(b, ']')
	d, flags := sk.Dependencies, sk.RiskFlags()
	if len(d.Required)+len(d.Optional) > 0 || len(flags) > 0 {
		b = append(b, `,"_meta":{`...)
		sep := ""
		if len(d.Required)+len(d.Optional) > 0 {
			b = appendJSONString(b, skillsext.MetaDependencies)
			b = append(b, ':')
			deps, _ := json.Marshal(d) // a struct of string slices always marshals
			b = append(b, deps...)
			sep = ","
		}
		if len(flags) > 0 {
			b = append(b, sep...)
			b = appendJSONString(b, skillsext.MetaRiskFlags)
			b = append(b, ':')
			fl, _ := json.Marshal(flags)
			b = append(b, fl...)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, exactly as json.Marshal
// writes it. URIs and digests are almost always printable ASCII that needs
// no escape, and are copied as they are; anything else goes through
// json.Marshal, so that the bytes never depend on which path was taken.
func appendJSONString(b []byte, s string) []byte {
	if !isPlainJSON(s) {
		enc, _ := json.Marshal(s) // a string always marshals
		return append(b, enc...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// isPlainJSON reports whether json.Marshal copies s into a string unchanged.
func isPlainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			return false
		}
	}
	return true
}

// plainJSON marks the bytes json.Marshal copies into a string unchanged:
// printable ASCII except the quote, the backslash and the three characters
// it escapes for HTML.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return t
}()

// mimeTypes maps lowercase extensions to MIME types. Text types are only
// used for files that are valid UTF-8; binary types only for files that are
// not, so that the type never contradicts the text/blob choice.
var mimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
	".py": "text/x-python", ".sh": "text/x-shellscript", ".bash": "text/x-shellscript",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
	".ts": "text/x-typescript", ".json": "application/json", ".yaml": "application/yaml",
	".yml": "application/yaml", ".toml": "application/toml", ".xml": "application/xml",
	".html": "text/html", ".htm": "text/html", ".css": "text/css", ".csv": "text/csv",
	".svg": "image/svg+xml", ".rb": "text/x-ruby", ".go": "text/x-go", ".sql": "application/sql",
	".ps1": "text/plain", ".r": "text/plain", ".ini": "text/plain", ".cfg": "text/plain",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".ico": "image/x-icon", ".pdf": "application/pdf",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".wasm": "application/wasm", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".mp4": "video/mp4",
	// Documents, served as files (see skill.SniffDocument).
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".docm": "application/vnd.ms-word.document.macroEnabled.12",
	".xlsm": "application/vnd.ms-excel.sheet.macroEnabled.12",
	".pptm": "application/vnd.ms-powerpoint.presentation.macroEnabled.12",
	".odt":  "application/vnd.oasis.opendocument.text",
	".ods":  "application/vnd.oasis.opendocument.spreadsheet",
	".odp":  "application/vnd.oasis.opendocument.presentation",
	".epub": "application/epub+zip",
}

func mimeType(name string, text bool) string {
	t, ok := mimeTypes[strings.ToLower(path.Ext(name))]
	isText := ok && (strings.HasPrefix(t, "text/") || t == "application/json" ||
		t == "application/yaml" || t == "application/toml" || t == "application/xml" ||
		t == "image/svg+xml" || t == "application/sql")
	switch {
	case ok && isText == text:
		return t
	case text:
		return "text/plain"
	default:
		return "application/octet-stream"
	}
}

// Digest is the SHA-256 of a file's content. It is kept as 32 bytes and
// written as SEP-2640 gives it: "sha256:" and 64 lowercase hex digits.
type Digest [32]byte

// digestLen is the length of a Digest's string form.
const digestLen = len("sha256:") + 2*len(Digest{})

// String returns the digest as "sha256:<64 lowercase hex>".
func (d Digest) String() string { return string(d.append(make([]byte, 0, digestLen))) }

func (d Digest) append(b []byte) []byte {
	return hex.AppendEncode(append(b, "sha256:"...), d[:])
}

// appendJSON appends the digest as a JSON string: it needs no escape.
func (d Digest) appendJSON(b []byte) []byte {
	return append(d.append(append(b, '"')), '"')
}
