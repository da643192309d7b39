package skill

import (
	"archive/zip"
	"bytes"
	"path"
	"strings"
)

// Archives and documents. A skill may not bundle an archive: its content
// cannot be reviewed or linted where it is served, and a host that unpacks
// it writes files nobody listed. Office documents are zips too, but they
// are documents: a host opens them, it does not unpack them. The catalog,
// the linter and their tests share the definitions below.

// archiveExts are archive file names. Content sniffing catches renamed
// ones; a document extension is not among them, since OOXML, ODF and EPUB
// files are told apart by content ([SniffDocument]).
var archiveExts = []string{
	".zip", ".jar", ".war", ".ear", ".apk", ".aar", ".ipa", ".xpi", ".crx",
	".whl", ".egg", ".nupkg", ".vsix", ".tar", ".tgz", ".tbz", ".tbz2", ".txz",
	".tzst", ".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".gz", ".bz2", ".xz",
	".zst", ".lz", ".lz4", ".lzma", ".7z", ".rar", ".cab", ".iso", ".dmg",
	".cpio", ".rpm", ".deb",
}

// archiveMagics are archive signatures, at an offset.
var archiveMagics = []struct {
	kind   string
	offset int
	magic  string
}{
	{"zip", 0, "PK\x03\x04"},
	{"zip", 0, "PK\x05\x06"}, // an empty zip
	{"zip", 0, "PK\x07\x08"}, // a spanned zip
	{"gzip", 0, "\x1f\x8b"},
	{"bzip2", 0, "BZh"}, // and a block size digit, checked below
	{"xz", 0, "\xfd7zXZ\x00"},
	{"zstd", 0, "\x28\xb5\x2f\xfd"},
	{"7z", 0, "7z\xbc\xaf\x27\x1c"},
	{"rar", 0, "Rar!\x1a\x07"},
	{"lz4", 0, "\x04\x22\x4d\x18"},
	{"cab", 0, "MSCF\x00\x00\x00\x00"},
	{"tar", 257, "ustar"},
}

// SniffArchive reports whether the file at name, with content data (the
// whole file, or at least its first 8 KiB when it is not a zip), is an
// archive, and names why: "named .zip" for an archive by name, else the
// format found by content ("zip", "gzip", "tar", …). Renaming payload.zip
// to notes.md does not get it past the check, and neither does renaming it
// to report.docx: a zip is a document only when [SniffDocument] accepts it.
// Names are compared case-insensitively.
func SniffArchive(name string, data []byte) (why string, ok bool) {
	lower := strings.ToLower(path.Base(name))
	for _, ext := range archiveExts {
		if strings.HasSuffix(lower, ext) {
			return "named " + ext, true
		}
	}
	for _, m := range archiveMagics {
		if len(data) < m.offset+len(m.magic) || string(data[m.offset:m.offset+len(m.magic)]) != m.magic {
			continue
		}
		// "BZh" alone is too common in text; bzip2 also needs a block size
		// digit.
		if m.kind == "bzip2" && (len(data) < 4 || data[3] < '1' || data[3] > '9') {
			continue
		}
		if m.kind == "zip" {
			if _, doc := SniffDocument(data); doc {
				return "", false
			}
		}
		return m.kind, true
	}
	return "", false
}

// ZipDocument describes an office document or e-book: a zip that a host opens
// as one file rather than unpacks.
type ZipDocument struct {
	// Format is "OOXML" (Word, Excel, PowerPoint), "ODF" (OpenDocument) or
	// "EPUB".
	Format string
	// MIMEType is the type an ODF or EPUB file declares in its mimetype
	// entry; empty for OOXML.
	MIMEType string
	// Macros names the entry holding macros (vbaProject.bin in OOXML, a
	// Basic/ or Scripts/ folder in ODF), or is empty.
	Macros string
}

// SniffDocument reports whether data, a whole file, is an office document
// or e-book by content:
//
//   - OOXML (.docx, .xlsx, .pptx and their macro-enabled forms) is a zip
//     whose entries include [Content_Types].xml;
//   - ODF (.odt, .ods, .odp, …) and EPUB are zips whose first entry is
//     "mimetype", stored uncompressed, holding a MIME type.
//
// Anything else, and any zip that archive/zip cannot read (its central
// directory is checked, so a truncated document is an archive), is not a
// document. The check reads only the zip's directory, never an entry's
// compressed data, apart from ODF's stored mimetype.
func SniffDocument(data []byte) (ZipDocument, bool) {
	if !bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return ZipDocument{}, false
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(zr.File) == 0 {
		return ZipDocument{}, false
	}
	if first := zr.File[0]; first.Name == "mimetype" && first.Method == zip.Store {
		mt, ok := storedMIMEType(data, first)
		if !ok {
			return ZipDocument{}, false
		}
		doc := ZipDocument{Format: "ODF", MIMEType: mt}
		if mt == "application/epub+zip" {
			doc.Format = "EPUB"
		}
		if doc.Format == "ODF" {
			for _, f := range zr.File {
				if strings.HasPrefix(f.Name, "Basic/") || strings.HasPrefix(f.Name, "Scripts/") {
					doc.Macros = f.Name
					break
				}
			}
		}
		return doc, true
	}
	doc, ok := ZipDocument{Format: "OOXML"}, false
	for _, f := range zr.File {
		switch {
		case f.Name == "[Content_Types].xml":
			ok = true
		case doc.Macros == "" && strings.EqualFold(path.Base(f.Name), "vbaProject.bin"):
			doc.Macros = f.Name
		}
	}
	if !ok {
		return ZipDocument{}, false
	}
	return doc, true
}

// maxMIMEType bounds the mimetype entry of an ODF or EPUB file; the longest
// OpenDocument type is under 64 bytes.
const maxMIMEType = 128

// storedMIMEType returns the content of a stored "mimetype" entry when it
// reads as a MIME type (type/subtype, printable ASCII without spaces).
func storedMIMEType(data []byte, f *zip.File) (string, bool) {
	if f.UncompressedSize64 == 0 || f.UncompressedSize64 > maxMIMEType {
		return "", false
	}
	off, err := f.DataOffset()
	if err != nil || off < 0 || off+int64(f.UncompressedSize64) > int64(len(data)) {
		return "", false
	}
	mt := string(data[off : off+int64(f.UncompressedSize64)])
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" {
		return "", false
	}
	for i := 0; i < len(mt); i++ {
		if c := mt[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	return mt, true
}

// macroExts are the macro-enabled Office formats, by name: the "m" in
// .docm says the file may carry VBA even where its content is not checked.
var macroExts = []string{
	".docm", ".dotm", ".xlsm", ".xltm", ".xlam", ".pptm", ".potm", ".ppsm", ".ppam", ".sldm",
}

// MacroEnabled reports whether the file at name with content data is a
// document that carries (or, by its name, may carry) macros, and names
// why. A macro-enabled name counts whatever the content; otherwise the
// content must be a document ([SniffDocument]) holding a macro project.
func MacroEnabled(name string, data []byte) (why string, ok bool) {
	lower := strings.ToLower(path.Base(name))
	for _, ext := range macroExts {
		if strings.HasSuffix(lower, ext) {
			return "a macro-enabled " + ext + " document", true
		}
	}
	if doc, isDoc := SniffDocument(data); isDoc && doc.Macros != "" {
		return "an " + doc.Format + " document holding " + doc.Macros, true
	}
	return "", false
}
