// Package skilltest holds the content fixtures that the tests of several
// packages share: one file of every kind of executable that
// skill.SniffScript recognises, and office documents, real and fake, for
// skill.SniffArchive and skill.SniffDocument. The bytes are inert: the
// programs are headers with nothing to run, and the documents hold no
// content beyond their structure.
package skilltest

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"strings"
)

// Executables returns one file of every kind of executable, by path below
// a skill folder: a shebang line (among them uv's), each compiled-program
// format by magic bytes under a name that does not give it away, and each
// script extension with harmless text in it. The map is the caller's.
func Executables() map[string][]byte {
	pe := make([]byte, 0x100)
	copy(pe, "MZ\x90\x00\x03")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x80)
	copy(pe[0x80:], "PE\x00\x00L\x01")
	m := map[string][]byte{
		"scripts/run":          []byte("#!/bin/sh\necho hi\n"),
		"scripts/uvtool":       []byte("#!/usr/bin/env -S uv run --script\n# /// script\n# dependencies = []\n# ///\nprint('hi')\n"),
		"scripts/awkish":       []byte("#!/usr/bin/awk -f\n{ print }\n"),
		"bin/elf-tool":         []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00>\x00"),
		"bin/macho-tool":       []byte("\xcf\xfa\xed\xfe\x07\x00\x00\x01\x03\x00\x00\x00"),
		"bin/macho32-tool":     []byte("\xfe\xed\xfa\xce\x00\x00\x00\x12"),
		"bin/fat-tool":         []byte("\xca\xfe\xba\xbe\x00\x00\x00\x02\x01\x00\x00\x07"),
		"bin/pe-tool.dat":      pe,
		"bin/wasm-module.data": []byte("\x00asm\x01\x00\x00\x00"),
	}
	for _, ext := range ScriptExts {
		m["scripts/x"+ext] = []byte("hello\n")
	}
	return m
}

// ScriptExts are the extensions that make a file a script whatever its
// content.
var ScriptExts = []string{
	".sh", ".bash", ".zsh", ".ksh", ".command", ".ps1", ".psm1", ".bat", ".cmd", ".vbs",
	".js", ".mjs", ".cjs", ".ts", ".py", ".rb", ".pl", ".php", ".lua", ".tcl", ".applescript", ".scpt",
}

// NotExecutables returns files that look like executables to a careless
// detector and are not: text starting "MZ", a Rust file starting "#![",
// a Java class file (whose magic a fat Mach-O shares).
func NotExecutables() map[string][]byte {
	return map[string][]byte{
		"notes/mz.txt":       []byte("MZ is where this note starts, and it is text all the way.\n" + strings.Repeat("more text ", 10)),
		"src/lib.rs":         []byte("#![allow(dead_code)]\nfn main() {}\n"),
		"classes/Main.class": []byte("\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x10"),
		"references/a.md":    []byte("# Run it\n\n```sh\n#!/bin/sh\n```\n"),
	}
}

const contentTypes = `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`

// Documents returns an office document or e-book of every format the
// catalog serves as a file, by path below a skill folder.
func Documents() map[string][]byte {
	ooxml := func(part string) []byte {
		return Zip("[Content_Types].xml", contentTypes, "_rels/.rels", "<Relationships/>", part, "<doc/>")
	}
	odf := func(mt string) []byte {
		return Zip("mimetype!stored", mt, "META-INF/manifest.xml", "<manifest/>", "content.xml", "<content/>")
	}
	return map[string][]byte{
		"assets/template.docx": ooxml("word/document.xml"),
		"assets/model.xlsx":    ooxml("xl/workbook.xml"),
		"assets/deck.pptx":     ooxml("ppt/presentation.xml"),
		"assets/letter.odt":    odf("application/vnd.oasis.opendocument.text"),
		"assets/sheet.ods":     odf("application/vnd.oasis.opendocument.spreadsheet"),
		"assets/slides.odp":    odf("application/vnd.oasis.opendocument.presentation"),
		"assets/guide.epub":    odf("application/epub+zip"),
	}
}

// MacroDocuments returns documents that carry macros: one with a VBA
// project inside, one macro-enabled by name.
func MacroDocuments() map[string][]byte {
	return map[string][]byte{
		"assets/report.docx": Zip("[Content_Types].xml", contentTypes, "word/document.xml", "<doc/>", "word/vbaProject.bin", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"),
		"assets/budget.xlsm": Zip("[Content_Types].xml", contentTypes, "xl/workbook.xml", "<wb/>"),
	}
}

// FakeDocument returns a plain zip named like a document: an archive for
// every purpose, since it has no [Content_Types].xml.
func FakeDocument() []byte {
	return Zip("payload/run.sh", "echo hi\n", "payload/notes.txt", "x\n")
}

// Zip builds a zip of name, content pairs, deterministically (no times).
// A name ending in "!stored" is written uncompressed, without the suffix.
func Zip(pairs ...string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		name, method := pairs[i], zip.Deflate
		if n, ok := strings.CutSuffix(name, "!stored"); ok {
			name, method = n, zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			panic("skilltest: " + err.Error()) // a fixed fixture: a programmer error
		}
		w.Write([]byte(pairs[i+1]))
	}
	if err := zw.Close(); err != nil {
		panic("skilltest: " + err.Error())
	}
	return buf.Bytes()
}
