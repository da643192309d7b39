package skill

import (
	"bytes"
	"path"
	"strings"
)

// Script describes how a bundled file is run, for the guidance a server
// gives agents. The server itself never runs anything.
type Script struct {
	// Interpreter is the command that runs the file, e.g. "uv run",
	// "python", "bash", "node".
	Interpreter string `json:"interpreter"`
	// PEP723 reports whether a Python file has an inline-metadata header
	// (# /// script), which uv run honours by installing its dependencies.
	PEP723 bool `json:"pep723,omitempty"`
}

// interpreters maps script extensions to their interpreter.
var interpreters = map[string]string{
	".py": "python", ".sh": "bash", ".bash": "bash", ".zsh": "zsh", ".fish": "fish",
	".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "npx tsx",
	".ps1": "pwsh -File", ".psm1": "pwsh -File", ".bat": "cmd /c", ".cmd": "cmd /c",
	".rb": "ruby", ".pl": "perl", ".php": "php", ".lua": "lua", ".r": "Rscript",
}

// shebangInterpreters maps the program named by a shebang line.
var shebangInterpreters = map[string]string{
	"python": "python", "python3": "python", "bash": "bash", "sh": "sh", "zsh": "zsh",
	"node": "node", "ruby": "ruby", "perl": "perl", "php": "php", "pwsh": "pwsh -File",
	"fish": "fish", "deno": "deno run", "bun": "bun",
}

// SniffScript reports whether the file at name with content head (its first
// bytes; 4 KiB is plenty) is a script, and how to run it: by extension, else
// by a shebang line. Markdown and data files are never scripts.
func SniffScript(name string, head []byte) (Script, bool) {
	ext := strings.ToLower(path.Ext(name))
	interp, ok := interpreters[ext]
	if !ok && bytes.HasPrefix(head, []byte("#!")) {
		line, _, _ := bytes.Cut(head[2:], []byte("\n"))
		fields := strings.Fields(string(line))
		if len(fields) > 0 {
			prog := path.Base(fields[0])
			if prog == "env" && len(fields) > 1 {
				prog = fields[1]
				if prog == "-S" && len(fields) > 2 {
					prog = fields[2]
				}
			}
			interp, ok = shebangInterpreters[prog]
			if !ok && strings.HasPrefix(prog, "python") {
				interp, ok = "python", true
			}
		}
	}
	if !ok {
		return Script{}, false
	}
	s := Script{Interpreter: interp}
	if interp == "python" && hasPEP723(head) {
		s = Script{Interpreter: "uv run", PEP723: true}
	}
	return s, true
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
