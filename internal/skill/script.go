package skill

import (
	"bytes"
	"encoding/binary"
	"path"
	"strings"
)

// Script describes a bundled file that a host could run, and how, for the
// guidance a server gives agents. The server itself never runs anything.
type Script struct {
	// Interpreter is the command that runs the file, e.g. "uv run",
	// "python", "bash", "node"; empty for a compiled program, and for a
	// shebang line naming a program this package does not know.
	Interpreter string `json:"interpreter"`
	// PEP723 reports whether a Python file has an inline-metadata header
	// (# /// script), which uv run honours by installing its dependencies.
	PEP723 bool `json:"pep723,omitempty"`
	// Binary names the format of a compiled program: "ELF", "Mach-O",
	// "PE" or "WebAssembly"; empty for a script.
	Binary string `json:"binary,omitempty"`
}

// Kind says what the file is, for warnings and reports: "ELF binary",
// "Mach-O binary", …, or "script".
func (s Script) Kind() string {
	if s.Binary != "" {
		return s.Binary + " binary"
	}
	return "script"
}

// interpreters maps script extensions to their interpreter. Every
// extension here makes a file a script, whatever its content.
var interpreters = map[string]string{
	".py": "python", ".sh": "bash", ".bash": "bash", ".zsh": "zsh", ".ksh": "ksh",
	".fish": "fish", ".command": "bash",
	".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "npx tsx",
	".ps1": "pwsh -File", ".psm1": "pwsh -File", ".bat": "cmd /c", ".cmd": "cmd /c",
	".vbs": "cscript //nologo", ".rb": "ruby", ".pl": "perl", ".php": "php", ".lua": "lua",
	".tcl": "tclsh", ".applescript": "osascript", ".scpt": "osascript", ".r": "Rscript",
	".pyw": "python", ".pyz": "python", ".swift": "swift", ".kts": "kotlin", ".exs": "elixir",
	".jl": "julia", ".nu": "nu", ".xsh": "xonsh", ".groovy": "groovy", ".awk": "awk -f",
}

// shebangInterpreters maps the program named by a shebang line to the
// command that runs the file.
var shebangInterpreters = map[string]string{
	"python": "python", "python3": "python", "bash": "bash", "sh": "sh", "zsh": "zsh",
	"ksh": "ksh", "node": "node", "ruby": "ruby", "perl": "perl", "php": "php",
	"pwsh": "pwsh -File", "fish": "fish", "deno": "deno run", "bun": "bun", "uv": "uv run",
	"lua": "lua", "tclsh": "tclsh", "osascript": "osascript", "Rscript": "Rscript",
	"swift": "swift", "kotlin": "kotlin", "elixir": "elixir", "julia": "julia", "nu": "nu",
	"xonsh": "xonsh", "groovy": "groovy", "awk": "awk -f", "gawk": "awk -f",
}

// SniffBytes is how much of a file SniffScript looks at: shebang lines,
// magic numbers and PEP 723 headers are at the start. Callers may pass the
// whole file or just this much of it, with the same answer.
const SniffBytes = 8 << 10

// SniffScript reports whether the file at name, with content head (the
// file, or at least its first SniffBytes), is executable, and how to run
// it. It is
// the one definition of a script in skills-mcp: the catalog withholds what
// it accepts under --no-scripts, and the linter and pull report the same
// files. A file is executable when
//
//   - it starts with "#!", a shebang line, whatever program it names
//     (#!/usr/bin/env -S uv run --script included), also after a UTF-8
//     byte-order mark or spaces and tabs (which an interpreter run on the
//     file may skip); "#![" is not one, as Rust reads it, since a Rust
//     file may start with an inner attribute;
//   - it starts with the magic bytes of a compiled program: ELF, Mach-O
//     (32 or 64 bits, either byte order, or a fat binary), PE (an "MZ"
//     header) or WebAssembly ("\0asm");
//   - its extension is a script's: .sh .bash .zsh .ksh .fish .command .ps1
//     .psm1 .bat .cmd .vbs .js .mjs .cjs .ts .py .pyw .pyz .rb .pl .php .lua
//     .tcl .applescript .scpt .r .swift .kts .exs .jl .nu .xsh .groovy .awk
//     (case-insensitive).
//
// Markdown and data files are never scripts.
func SniffScript(name string, head []byte) (Script, bool) {
	head = head[:min(len(head), SniffBytes)]
	if bin := sniffBinary(head); bin != "" {
		return Script{Binary: bin}, true
	}
	interp, ok := interpreters[strings.ToLower(path.Ext(name))]
	if !ok && isShebang(head) {
		interp, ok = shebangInterpreter(head), true
	}
	if !ok {
		return Script{}, false
	}
	s := Script{Interpreter: interp}
	if (interp == "python" || interp == "uv run") && hasPEP723(head) {
		s = Script{Interpreter: "uv run", PEP723: true}
	}
	return s, true
}

// isShebang reports whether head starts with a shebang line, after a
// byte-order mark and blanks if any.
func isShebang(head []byte) bool {
	head = shebangStart(head)
	if !bytes.HasPrefix(head, []byte("#!")) {
		return false
	}
	rest := bytes.TrimLeft(head[2:], " \t")
	return !bytes.HasPrefix(rest, []byte("["))
}

// shebangStart returns head without a leading UTF-8 byte-order mark and
// spaces or tabs: where a shebang line would start.
func shebangStart(head []byte) []byte {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	return bytes.TrimLeft(head, " \t")
}

// shebangInterpreter returns the command a shebang line names, when it is
// a known one; else "" (the file is still a script).
func shebangInterpreter(head []byte) string {
	head = shebangStart(head)
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return ""
	}
	prog := path.Base(fields[0])
	if prog == "env" {
		// env [-S] [-i] [NAME=value…] program
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
				continue
			}
			prog = f
			break
		}
	}
	if interp, ok := shebangInterpreters[prog]; ok {
		return interp
	}
	if strings.HasPrefix(prog, "python") {
		return "python"
	}
	return ""
}

// sniffBinary names the compiled-program format head starts with, or
// returns "".
func sniffBinary(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(head, []byte("\x00asm")):
		return "WebAssembly"
	case isPE(head):
		return "PE"
	}
	if len(head) < 4 {
		return ""
	}
	switch binary.BigEndian.Uint32(head) {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe: // thin, 32 and 64 bits, both byte orders
		return "Mach-O"
	case 0xbebafeca, 0xbfbafeca: // fat, little-endian header
		return "Mach-O"
	case 0xcafebabe, 0xcafebabf: // fat, or a Java class file
		// A fat header counts its architectures where a class file has its
		// version, which is 45 or more: the heuristic file(1) uses.
		if len(head) >= 8 {
			if n := binary.BigEndian.Uint32(head[4:]); n > 0 && n < 20 {
				return "Mach-O"
			}
		}
	}
	return ""
}

// isPE reports whether head starts with an MZ executable header: "MZ" and
// either the "PE\0\0" signature where the header says, or the NUL bytes a
// DOS header always holds (a text file starting "MZ" has none).
func isPE(head []byte) bool {
	if !bytes.HasPrefix(head, []byte("MZ")) || len(head) < 0x40 {
		return false
	}
	if off := int64(binary.LittleEndian.Uint32(head[0x3c:])); off+4 <= int64(len(head)) && string(head[off:off+4]) == "PE\x00\x00" {
		return true
	}
	return bytes.IndexByte(head[:0x40], 0) >= 0
}

// hasPEP723 reports whether a Python source has a "# /// script" block.
func hasPEP723(src []byte) bool {
	for line := range bytes.SplitSeq(src, []byte("\n")) {
		if string(bytes.TrimRight(line, " \t\r")) == "# /// script" {
			return true
		}
	}
	return false
}
