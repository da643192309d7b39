package skill

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
)

// zipOf builds a zip of name, content pairs; a name ending in "!stored" is
// written uncompressed (without the suffix).
func zipOf(t testing.TB, pairs ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		name, method := pairs[i], zip.Deflate
		if n, ok := strings.CutSuffix(name, "!stored"); ok {
			name, method = n, zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(pairs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const contentTypes = `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`

func TestSniffArchiveAndDocument(t *testing.T) {
	docx := zipOf(t, "[Content_Types].xml", contentTypes, "_rels/.rels", "<r/>", "word/document.xml", "<w/>")
	// Word writes [Content_Types].xml first, but nothing requires it.
	xlsxLate := zipOf(t, "xl/workbook.xml", "<w/>", "_rels/.rels", "<r/>", "[Content_Types].xml", contentTypes)
	docm := zipOf(t, "[Content_Types].xml", contentTypes, "word/document.xml", "<w/>", "word/vbaProject.bin", "\xd0\xcf\x11\xe0")
	odt := zipOf(t, "mimetype!stored", "application/vnd.oasis.opendocument.text", "content.xml", "<c/>")
	odtMacro := zipOf(t, "mimetype!stored", "application/vnd.oasis.opendocument.text", "Basic/Standard/Module1.xml", "<m/>")
	epub := zipOf(t, "mimetype!stored", "application/epub+zip", "META-INF/container.xml", "<c/>")
	plain := zipOf(t, "payload/run.sh", "echo hi\n")
	deflatedMime := zipOf(t, "mimetype", "application/vnd.oasis.opendocument.text", "content.xml", "<c/>")
	lateMime := zipOf(t, "content.xml", "<c/>", "mimetype!stored", "application/vnd.oasis.opendocument.text")
	badMime := zipOf(t, "mimetype!stored", "not a type at all", "content.xml", "<c/>")
	wrongCase := zipOf(t, "[content_types].XML", contentTypes, "word/document.xml", "<w/>")
	tarHead := strings.Repeat("\x00", 257) + "ustar\x0000" + strings.Repeat("\x00", 250)

	for _, tc := range []struct {
		name    string
		data    []byte
		archive string // SniffArchive's why, "" for none
		doc     string // SniffDocument's format, "" for none
		macros  bool
	}{
		{"assets/template.docx", docx, "", "OOXML", false},
		{"assets/book.xlsx", xlsxLate, "", "OOXML", false},
		{"assets/deck.pptx", docx, "", "OOXML", false},
		{"assets/renamed.bin", docx, "", "OOXML", false}, // by content, whatever the name
		{"assets/report.docm", docm, "", "OOXML", true},
		{"assets/report.docx", docm, "", "OOXML", true}, // macros by content
		{"assets/letter.odt", odt, "", "ODF", false},
		{"assets/sheet.ods", odt, "", "ODF", false},
		{"assets/slides.odp", odtMacro, "", "ODF", true},
		{"assets/book.epub", epub, "", "EPUB", false},
		// Archives, by content, whatever the name.
		{"assets/payload.docx", plain, "zip", "", false},
		{"assets/payload.odt", deflatedMime, "zip", "", false},
		{"assets/payload.odt", lateMime, "zip", "", false},
		{"assets/payload.epub", badMime, "zip", "", false},
		{"assets/payload.docx", wrongCase, "zip", "", false},
		{"assets/truncated.docx", docx[:len(docx)-10], "zip", "", false},
		{"notes.md", plain, "zip", "", false},
		{"blob", []byte("\x1f\x8b\x08\x00rest"), "gzip", "", false},
		{"blob", []byte(tarHead), "tar", "", false},
		{"blob", []byte("BZh91AY&SY"), "bzip2", "", false},
		{"blob", []byte("\xfd7zXZ\x00\x00"), "xz", "", false},
		{"blob", []byte("7z\xbc\xaf\x27\x1c\x00"), "7z", "", false},
		{"blob", []byte("Rar!\x1a\x07\x00"), "rar", "", false},
		{"blob", []byte("\x28\xb5\x2f\xfd"), "zstd", "", false},
		{"blob", []byte("\x04\x22\x4d\x18"), "lz4", "", false},
		{"blob", []byte("MSCF\x00\x00\x00\x00"), "cab", "", false},
		{"blob", []byte("PK\x05\x06" + strings.Repeat("\x00", 18)), "zip", "", false},
		// Archives by name, whatever the content (a document named .zip
		// is a zip to whoever receives it).
		{"vendor.tar.gz", []byte("x"), "named .tar.gz", "", false},
		{"Payload.ZIP", docx, "named .zip", "OOXML", false},
		{"lib.jar", nil, "named .jar", "", false},
		// Neither.
		{"notes.md", []byte("BZh is a word"), "", "", false},
		{"notes.md", []byte("MSCF notes"), "", "", false},
		{"empty", nil, "", "", false},
	} {
		why, ok := SniffArchive(tc.name, tc.data)
		if ok != (tc.archive != "") || why != tc.archive {
			t.Errorf("SniffArchive(%s, %q…) = %q, %v; want %q", tc.name, truncateHead(string(tc.data)), why, ok, tc.archive)
		}
		doc, ok := SniffDocument(tc.data)
		if ok != (tc.doc != "") || doc.Format != tc.doc || (doc.Macros != "") != tc.macros {
			t.Errorf("SniffDocument(%s) = %+v, %v; want format %q, macros %v", tc.name, doc, ok, tc.doc, tc.macros)
		}
		_, macro := MacroEnabled(tc.name, tc.data)
		wantMacro := tc.macros || strings.HasSuffix(tc.name, ".docm")
		if macro != wantMacro {
			t.Errorf("MacroEnabled(%s) = %v, want %v", tc.name, macro, wantMacro)
		}
	}
	if doc, _ := SniffDocument(epub); doc.MIMEType != "application/epub+zip" {
		t.Errorf("EPUB MIME type = %q", doc.MIMEType)
	}
	for _, name := range []string{"a.xlsm", "b.PPTM", "c.dotm"} {
		if why, ok := MacroEnabled(name, []byte("not even a zip")); !ok || !strings.Contains(why, "macro-enabled") {
			t.Errorf("MacroEnabled(%s) = %q, %v", name, why, ok)
		}
	}
}

// FuzzSniffDocument checks that the archive and document sniffers never
// panic and agree: a document is never an archive by content, and
// anything starting with a zip signature is one or the other.
func FuzzSniffDocument(f *testing.F) {
	f.Add(zipOf(f, "[Content_Types].xml", contentTypes, "word/vbaProject.bin", "x"))
	f.Add(zipOf(f, "mimetype!stored", "application/epub+zip", "a", "b"))
	f.Add(zipOf(f, "mimetype!stored", "application/vnd.oasis.opendocument.text", "Scripts/x", "b"))
	f.Add(zipOf(f, "a", "b"))
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, isDoc := SniffDocument(data)
		_, isArchive := SniffArchive("file", data)
		if isDoc && isArchive {
			t.Fatalf("both a document (%+v) and an archive", doc)
		}
		if bytes.HasPrefix(data, []byte("PK\x03\x04")) && !isDoc && !isArchive {
			t.Fatal("a zip signature that is neither a document nor an archive")
		}
		if !isDoc && doc != (ZipDocument{}) {
			t.Fatalf("not a document, yet %+v", doc)
		}
	})
}
