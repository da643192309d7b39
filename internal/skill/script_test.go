package skill

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/skill/skilltest"
)

// peHead is the start of a Windows executable: an MZ header whose e_lfanew
// points at the PE signature.
func peHead() []byte {
	b := make([]byte, 0x100)
	copy(b, "MZ\x90\x00\x03")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x80)
	copy(b[0x80:], "PE\x00\x00")
	return b
}

func TestSniffScript(t *testing.T) {
	fat := func(n uint32) string {
		b := make([]byte, 8)
		binary.BigEndian.PutUint32(b, 0xcafebabe)
		binary.BigEndian.PutUint32(b[4:], n)
		return string(b) + "rest"
	}
	dosOnly := "MZ" + strings.Repeat("\x00", 70)
	for _, tc := range []struct {
		name, head string
		want       bool
		interp     string
		binary     string
	}{
		// Shebang lines, whatever they name.
		{"run", "#!/bin/sh\necho hi\n", true, "sh", ""},
		{"run", "#!/usr/bin/env python3\n", true, "python", ""},
		{"run", "#!/usr/bin/env -S uv run --script\n# /// script\n# dependencies = []\n# ///\n", true, "uv run", ""},
		{"run", "#!/usr/bin/env -S uv run --script\nprint(1)\n", true, "uv run", ""},
		{"run", "#!/usr/bin/env -i PATH=/bin bash\n", true, "bash", ""},
		{"run", "#!/usr/bin/awk -f\n", true, "awk -f", ""},
		{"run", "\xef\xbb\xbf#!/bin/sh\necho hi\n", true, "sh", ""},
		{"run.txt", "  \t#!/usr/bin/env python3\n", true, "python", ""},
		{"notes.md", "\xef\xbb\xbf  #!/bin/bash\n", true, "bash", ""},
		{"lib.rs", "\xef\xbb\xbf#![allow(dead_code)]\n", false, "", ""},
		{"notes.md", "\n#!/bin/sh\n", false, "", ""},
		{"run.txt", "#! /opt/tool/bin/custom\n", true, "", ""},
		{"notes.md", "#!/bin/bash\n", true, "bash", ""},
		{"run", "#!", true, "", ""},
		{"lib.rs", "#![allow(dead_code)]\nfn main() {}\n", false, "", ""},
		{"lib.rs", "#! [cfg(test)]\n", false, "", ""},
		// Compiled programs, by magic, whatever the name.
		{"tool", "\x7fELF\x02\x01\x01\x00", true, "", "ELF"},
		{"tool.txt", "\x7fELF", true, "", "ELF"},
		{"tool", "\xfe\xed\xfa\xce\x00\x00", true, "", "Mach-O"},
		{"tool", "\xfe\xed\xfa\xcf\x00\x00", true, "", "Mach-O"},
		{"tool", "\xce\xfa\xed\xfe\x07\x00", true, "", "Mach-O"},
		{"tool", "\xcf\xfa\xed\xfe\x07\x00", true, "", "Mach-O"},
		{"tool", fat(2), true, "", "Mach-O"},
		{"tool", "\xca\xfe\xba\xbf\x00\x00\x00\x01", true, "", "Mach-O"},
		{"tool", "\xbe\xba\xfe\xca\x02\x00\x00\x00", true, "", "Mach-O"},
		{"Main.class", fat(52), false, "", ""}, // a Java class file, version 52
		{"tool.exe", string(peHead()), true, "", "PE"},
		{"tool.dat", dosOnly, true, "", "PE"},
		{"mod.wasm", "\x00asm\x01\x00\x00\x00", true, "", "WebAssembly"},
		{"readme.txt", "MZ is a name, " + strings.Repeat("and text follows ", 10), false, "", ""},
		{"short", "MZ", false, "", ""},
		// Extensions.
		{"a.sh", "echo hi\n", true, "bash", ""},
		{"a.bash", "", true, "bash", ""},
		{"a.zsh", "", true, "zsh", ""},
		{"a.ksh", "", true, "ksh", ""},
		{"a.command", "", true, "bash", ""},
		{"a.ps1", "", true, "pwsh -File", ""},
		{"a.psm1", "", true, "pwsh -File", ""},
		{"a.bat", "", true, "cmd /c", ""},
		{"A.CMD", "", true, "cmd /c", ""},
		{"a.vbs", "", true, "cscript //nologo", ""},
		{"a.js", "", true, "node", ""},
		{"a.mjs", "", true, "node", ""},
		{"a.cjs", "", true, "node", ""},
		{"a.ts", "", true, "npx tsx", ""},
		{"a.py", "print(1)\n", true, "python", ""},
		{"a.py", "# /// script\n# dependencies = [\"httpx\"]\n# ///\n", true, "uv run", ""},
		{"a.rb", "", true, "ruby", ""},
		{"a.pl", "", true, "perl", ""},
		{"a.php", "", true, "php", ""},
		{"a.lua", "", true, "lua", ""},
		{"a.tcl", "", true, "tclsh", ""},
		{"a.applescript", "", true, "osascript", ""},
		{"a.scpt", "FasdUAS", true, "osascript", ""},
		{"a.pyw", "", true, "python", ""},
		{"a.pyz", "PK\x03\x04", true, "python", ""},
		{"a.swift", "", true, "swift", ""},
		{"build.gradle.kts", "", true, "kotlin", ""},
		{"a.EXS", "", true, "elixir", ""},
		{"a.jl", "", true, "julia", ""},
		{"a.nu", "", true, "nu", ""},
		{"a.xsh", "", true, "xonsh", ""},
		{"a.groovy", "", true, "groovy", ""},
		{"a.awk", "", true, "awk -f", ""},
		// Not scripts.
		{"SKILL.md", "---\nname: x\n---\n", false, "", ""},
		{"data.json", "{}", false, "", ""},
		{"notes.txt", "# comment\n", false, "", ""},
		{"empty", "", false, "", ""},
		{"script.py.txt", "", false, "", ""},
	} {
		got, ok := SniffScript(tc.name, []byte(tc.head))
		if ok != tc.want || got.Interpreter != tc.interp || got.Binary != tc.binary {
			t.Errorf("SniffScript(%q, %q) = %+v, %v; want interpreter %q, binary %q, %v", tc.name, truncateHead(tc.head), got, ok, tc.interp, tc.binary, tc.want)
		}
	}
}

func truncateHead(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

// FuzzSniffScript checks that the detector never panics and is a function
// of its input: a binary has no interpreter, and a file the detector calls
// a script stays one whatever bytes follow the part it read.
func FuzzSniffScript(f *testing.F) {
	for _, s := range []string{"#!/bin/sh\n", "#![x]", "\x7fELF", "MZ", string(peHead()), "\xca\xfe\xba\xbe\x00\x00\x00\x02", "\x00asm", "# /// script\n"} {
		f.Add("run", []byte(s))
		f.Add("a.py", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, head []byte) {
		s, ok := SniffScript(name, head)
		if !ok && s != (Script{}) {
			t.Fatalf("not a script, yet %+v", s)
		}
		if s.Binary != "" && s.Interpreter != "" {
			t.Fatalf("a binary with an interpreter: %+v", s)
		}
		if ok && s.Binary == "" && s.Interpreter == "" && !isShebang(head) {
			t.Fatalf("a script by extension with no interpreter: %q", name)
		}
	})
}

// TestSharedFixtures checks the fixtures other packages test with: every
// executable is one, nothing else is, and the documents are documents.
func TestSharedFixtures(t *testing.T) {
	for name, data := range skilltest.Executables() {
		if _, ok := SniffScript(name, data); !ok {
			t.Errorf("%s is not detected as executable", name)
		}
	}
	for name, data := range skilltest.NotExecutables() {
		if s, ok := SniffScript(name, data); ok {
			t.Errorf("%s is detected as executable: %+v", name, s)
		}
	}
	for name, data := range skilltest.Documents() {
		if why, ok := SniffArchive(name, data); ok {
			t.Errorf("%s is an archive (%s)", name, why)
		}
		if _, ok := MacroEnabled(name, data); ok {
			t.Errorf("%s has macros", name)
		}
	}
	for name, data := range skilltest.MacroDocuments() {
		if why, ok := SniffArchive(name, data); ok {
			t.Errorf("%s is an archive (%s)", name, why)
		}
		if _, ok := MacroEnabled(name, data); !ok {
			t.Errorf("%s has no macros", name)
		}
	}
	if _, ok := SniffArchive("assets/template.docx", skilltest.FakeDocument()); !ok {
		t.Error("a zip named .docx without [Content_Types].xml must be an archive")
	}
}
