package catalog

import (
	"bytes"
	"encoding/json"
	"path"
	"strconv"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// encodeEntry encodes a skill's skills/list entry. The frontmatter is
// spliced in as rendered from the YAML tree, in source key order.
func encodeEntry(sk *Skill) []byte {
	var b bytes.Buffer
	b.Grow(128 + len(sk.Files)*120)
	b.WriteString(`{"uri":`)
	writeJSONString(&b, sk.URI)
	b.WriteString(`,"frontmatter":`)
	b.Write(sk.Frontmatter)
	b.WriteString(`,"resources":[`)
	for i, f := range sk.Files {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"uri":`)
		writeJSONString(&b, f.URI)
		b.WriteString(`,"digest":"`)
		b.WriteString(f.Digest)
		b.WriteString(`","size":`)
		b.WriteString(strconv.FormatInt(f.Size, 10))
		b.WriteByte('}')
	}
	b.WriteByte(']')
	d, flags := sk.Dependencies, sk.RiskFlags()
	if len(d.Required)+len(d.Optional) > 0 || len(flags) > 0 {
		b.WriteString(`,"_meta":{`)
		sep := ""
		if len(d.Required)+len(d.Optional) > 0 {
			writeJSONString(&b, skillsext.MetaDependencies)
			b.WriteByte(':')
			deps, _ := json.Marshal(d) // a struct of string slices always marshals
			b.Write(deps)
			sep = ","
		}
		if len(flags) > 0 {
			b.WriteString(sep)
			writeJSONString(&b, skillsext.MetaRiskFlags)
			b.WriteByte(':')
			fl, _ := json.Marshal(flags)
			b.Write(fl)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always marshals
	b.Write(enc)
}

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
