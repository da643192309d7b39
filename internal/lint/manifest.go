package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/skills-mcp/skills-mcp/internal/skill"
)

// Files that tools run on their own: install hooks, test auto-loaders, and
// SKILL.md frontmatter that asks the host to run something.

// nameRules applies the rules decided by the file name alone.
func (s *fileScan) nameRules() {
	switch s.base {
	case "conftest.py":
		s.emitFile(RuleTestAutoload, "conftest.py runs whenever pytest collects tests in or below this folder")
	case "sitecustomize.py", "usercustomize.py":
		s.emitFile(RuleTestAutoload, s.base+" runs at every Python start-up when it is on the path")
	}
}

// contentRules are the rules about a whole file by its content, which
// apply to binary files too: a compiled program (by the detector that
// --no-scripts uses) and a document carrying macros.
func (s *fileScan) contentRules() {
	if sc, ok := skill.SniffScript(s.path, s.data); ok && sc.Binary != "" {
		s.emitFile(RuleExecutableBinary, "a compiled program ("+sc.Kind()+"): its code cannot be reviewed, and a host may run it")
	}
	if why, ok := skill.MacroEnabled(s.path, s.data); ok {
		// why may hold an entry name from the file: untrusted text.
		s.emitFile(RuleMacroDocument, "the file is "+escapeText(truncateRunes(why, 160))+"; its macros run when the document is opened with macros enabled")
	}
}

// maxManifestJSON bounds the package.json we decode; a larger one is read
// line by line only.
const maxManifestJSON = 4 << 20

// npmHooks are the package.json scripts npm runs on install.
var npmHooks = map[string]bool{
	"preinstall": true, "install": true, "postinstall": true, "prepare": true, "preprepare": true,
	"postprepare": true, "prepublish": true, "preuninstall": true, "uninstall": true, "postuninstall": true,
}

var reNpmHook = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(preinstall|install|postinstall|prepare|preprepare|postprepare|prepublish|preuninstall|uninstall|postuninstall)"\s*:`)
})

// wholeFile applies the rules that read a file as a whole.
func (s *fileScan) wholeFile() {
	switch {
	case s.base == "package.json":
		s.packageJSON()
	case s.ext == ".pth":
		for off := 0; off < len(s.data); {
			end := bytes.IndexByte(s.data[off:], '\n')
			if end < 0 {
				end = len(s.data) - off
			}
			line := bytes.TrimLeft(s.data[off:off+end], " \t")
			if bytes.HasPrefix(line, []byte("import ")) || bytes.HasPrefix(line, []byte("import\t")) {
				s.emitAt(RuleTestAutoload, Warning, off, off+end, "a .pth import line runs at every Python start-up once the file is in site-packages")
			}
			off += end + 1
		}
	case s.isSkillMD:
		s.frontmatterHooks()
	}
}

func (s *fileScan) packageJSON() {
	hooks := reNpmHook().FindAllSubmatchIndex(s.data, -1)
	if len(hooks) == 0 {
		return
	}
	var pkg struct {
		Scripts map[string]json.RawMessage `json:"scripts"`
	}
	if len(s.data) <= maxManifestJSON && json.Unmarshal(s.data, &pkg) == nil {
		// Valid JSON: report each install script once, at its key after
		// "scripts" (the same key elsewhere, e.g. under config, is data).
		scriptsAt := bytes.Index(s.data, []byte(`"scripts"`))
		seen := map[string]bool{}
		for _, h := range hooks {
			key := string(s.data[h[2]:h[3]])
			if _, ok := pkg.Scripts[key]; !ok || seen[key] || h[0] < scriptsAt {
				continue
			}
			seen[key] = true
			s.emitAt(RuleInstallHook, Warning, h[0], h[1], fmt.Sprintf("package.json script %q runs on npm install", key))
		}
		return
	}
	// Broken JSON: npm would refuse it, but report every hook-like key.
	for _, h := range hooks {
		key := string(s.data[h[2]:h[3]])
		if npmHooks[key] {
			s.emitAt(RuleInstallHook, Warning, h[0], h[1], fmt.Sprintf("package.json script %q runs on npm install", key))
		}
	}
}

// hookKey reports whether a frontmatter key asks the host to run a command.
func hookKey(k string) bool {
	k = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
	switch k {
	case "hooks", "hook", "pretooluse", "posttooluse", "sessionstart", "userpromptsubmit",
		"setup-command", "setup-script", "init-command", "init-script", "startup-command", "startup-script",
		"onload", "onstart", "oninstall", "command-on-load":
		return true
	}
	for _, p := range []string{"pre-", "post-", "on-", "pre", "post"} {
		rest, ok := strings.CutPrefix(k, p)
		if !ok {
			continue
		}
		switch rest {
		case "command", "commands", "run", "load", "start", "startup", "install", "activate", "invoke",
			"exec", "execute", "prompt", "tool-use", "session-start", "submit", "script":
			return true
		}
	}
	return false
}

var reTopKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^["']?([^\s:"'#{}\[\],]+)["']?\s*:`) })

// frontmatterHooks reports top-level frontmatter keys that ask the host to
// run a command. Keys are read from the lines (so broken YAML that a laxer
// host parser may accept is covered too), and from the skill parser when
// a top-level line is not a plain "key:" (flow mappings, merge keys).
func (s *fileScan) frontmatterHooks() {
	if s.fmEnd == 0 {
		return
	}
	located := map[string]bool{}
	unread := false // a top-level line the key scan cannot read
	first := true
	for off := 0; off < s.fmEnd; {
		end := bytes.IndexByte(s.data[off:s.fmEnd], '\n')
		if end < 0 {
			end = s.fmEnd - off
		}
		line := bytes.TrimSuffix(s.data[off:off+end], []byte("\r"))
		lineOff := off
		off += end + 1
		if first {
			first = false
			continue // the opening ---
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] == '#' || string(trimmed) == "---" || line[0] == ' ' || line[0] == '\t' || line[0] == '-' {
			continue
		}
		m := reTopKey().FindSubmatchIndex(line)
		if m == nil || bytes.Contains(line, []byte("<<")) {
			unread = true
			continue
		}
		if key := string(line[m[2]:m[3]]); hookKey(key) {
			located[key] = true
			s.emitAt(RuleFrontmatterHook, Warning, lineOff+m[2], lineOff+m[3], fmt.Sprintf("frontmatter key %q asks the host to run a command", key))
		}
	}
	if !unread {
		return
	}
	// Flow mappings, merge keys and the like: ask the YAML parser.
	if doc, err := skill.Parse(s.data); err == nil {
		for _, k := range doc.Frontmatter.Keys() {
			if hookKey(k) && !located[k] {
				s.emitAt(RuleFrontmatterHook, Warning, 0, 3, fmt.Sprintf("frontmatter key %q asks the host to run a command", k))
			}
		}
	}
}

var (
	rePytestPlugins = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*pytest_plugins\s*(?::[^=]*)?=`) })
	reAddopts       = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\baddopts\b[^\n]*?(?:^|[\s"'\[,])-p\s*["']?([^\s"',\]]+)`)
	})
	rePytest11 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["'\[]?pytest11["'\]]?`) })
)

var pytestConfigs = map[string]bool{"pytest.ini": true, ".pytest.ini": true, "tox.ini": true, "setup.cfg": true, "pyproject.toml": true}

func (s *fileScan) autoload(u *unit) {
	t := u.t
	if s.ext == ".py" {
		if loc := rePytestPlugins().FindIndex(t); loc != nil {
			s.emit(u, RuleTestAutoload, Warning, loc[0], loc[1], "pytest_plugins loads plugins whenever pytest runs here")
		}
	}
	if pytestConfigs[s.base] {
		for _, loc := range reAddopts().FindAllSubmatchIndex(t, -1) {
			if !bytes.HasPrefix(t[loc[2]:loc[3]], []byte("no:")) {
				s.emit(u, RuleTestAutoload, Warning, loc[0], loc[1], "addopts -p loads a pytest plugin on every run")
			}
		}
	}
	if s.base == "setup.py" || s.base == "setup.cfg" || s.base == "pyproject.toml" {
		for _, loc := range rePytest11().FindAllIndex(t, -1) {
			s.emit(u, RuleTestAutoload, Warning, loc[0], loc[1], "a pytest11 entry point registers a plugin that loads on every pytest run")
		}
	}
}

var reCmdclass = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bcmdclass\b`) })

func (s *fileScan) cmdclass(u *unit) {
	if s.base != "setup.py" && s.base != "setup.cfg" && s.base != "pyproject.toml" {
		return
	}
	for _, loc := range reCmdclass().FindAllIndex(u.t, -1) {
		s.emit(u, RuleInstallHook, Warning, loc[0], loc[1], "cmdclass overrides setup commands, which run on pip install")
	}
}

// emitAt records a finding at data offsets [start, end) outside the line
// loop.
func (s *fileScan) emitAt(rule string, sev Severity, start, end int, msg string) {
	a := s.lineAt(start)
	saved, savedPos, savedRunes := s.cur, s.colPos, s.colRunes
	s.cur, s.colPos, s.colRunes = a.ref, a.colPos, a.colRunes
	s.emitLine(rule, sev, start-a.ref.off, min(end-a.ref.off, len(s.cur.text)), msg, false)
	a.ref, a.colPos, a.colRunes = s.cur, s.colPos, s.colRunes // with its markers parsed
	s.cur, s.colPos, s.colRunes = saved, savedPos, savedRunes
}

// atLine is the line of the last finding emitAt placed.
type atLine struct {
	ref lineRef // no is 0 before the first
	end int     // offset of the line's end: its '\n', or len(data)
	// colPos and colRunes cache the last column computed on it.
	colPos, colRunes int
}

// lineAt returns the line holding data offset p. It counts on from the
// line of the previous call when p is not before it, so that findings
// placed in file order cost linear time in all: a file is untrusted, and
// one of many install hooks or .pth imports took quadratic time when each
// finding counted its line from the top.
func (s *fileScan) lineAt(p int) *atLine {
	a := &s.at
	if a.ref.no == 0 || p < a.ref.off {
		*a = atLine{ref: lineRef{no: 1}}
		s.work += a.find(s.data)
	}
	if p > a.end {
		seg := s.data[a.end:p]
		s.work += len(seg)
		no := a.ref.no + bytes.Count(seg, []byte("\n"))
		*a = atLine{ref: lineRef{no: no, off: a.end + bytes.LastIndexByte(seg, '\n') + 1}}
		s.work += a.find(s.data)
	}
	return a
}

// find sets the end and text of the line starting at a.ref.off, and
// returns the bytes it read.
func (a *atLine) find(data []byte) int {
	a.end = len(data)
	if i := bytes.IndexByte(data[a.ref.off:], '\n'); i >= 0 {
		a.end = a.ref.off + i
	}
	a.ref.text = bytes.TrimSuffix(data[a.ref.off:a.end], []byte("\r"))
	return a.end - a.ref.off
}
