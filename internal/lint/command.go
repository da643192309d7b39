package lint

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// Command-shaped rules: something a shell, PowerShell or an interpreter
// runs. In markdown prose a cautionary clause lowers them to Info (see the
// package documentation); everywhere else they keep their severity.

// emitCommand records a command-shaped finding, lowering it to Info when it
// sits in a cautionary clause of prose.
func (s *fileScan) emitCommand(u *unit, rule string, start, end int, msg string) {
	sev := mustRule(rule).Severity
	ls := u.lineOffset(start)
	if u.ctxAt(ls) == ctxProse && s.cautionary(u, ls, u.lineOffset(max(start, end-1))+1) {
		sev = Info
		if msg == "" {
			msg = mustRule(rule).Title
		}
		msg += " (mentioned in a cautionary sentence)"
	}
	s.emit(u, rule, sev, start, end, msg)
}

// cautionary reports whether the prose clause around line offsets
// [ls, le) holds a cautionary cue near the match.
func (s *fileScan) cautionary(u *unit, ls, le int) bool {
	line := s.cur.text
	// Clause start: the last clause break before the match, outside spans;
	// only the last cueReach+40 bytes can hold a cue.
	start := max(0, ls-cueReach-40)
	lineStart := start == 0
	for i := ls - 1; i >= start; i-- {
		if isClauseBreak(line, i) && !u.inSpan(i) {
			start, lineStart = i+1, false
			break
		}
	}
	before := line[start:ls]
	if lineStart {
		before = append(s.prevClauseTail(), before...)
	}
	s.scratch = foldInto(s.scratch[:0], before)
	if cueBefore(s.scratch) {
		return true
	}
	// Clause end: the next clause break after the match.
	end := min(len(line), le+cueReach)
	for i := le; i < end; i++ {
		if isClauseBreak(line, i) && !u.inSpan(i) {
			end = i
			break
		}
	}
	s.scratch = foldInto(s.scratch[:0], line[min(le, end):end])
	return cueAfter(s.scratch)
}

// isClauseBreak reports whether line[i] ends a clause: . ; : ! ? followed
// by a space or the end of the line.
func isClauseBreak(line []byte, i int) bool {
	switch line[i] {
	case '.', ';', ':', '!', '?':
		return i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t'
	}
	return false
}

// prevClauseTail returns the end of the previous line when the current line
// continues its paragraph (a soft wrap), so that "never\n`curl … | sh`"
// reads as one clause.
func (s *fileScan) prevClauseTail() []byte {
	if s.cur.off == 0 {
		return nil
	}
	cur := bytes.TrimLeft(s.cur.text, " \t>")
	if len(cur) == 0 || cur[0] == '-' || cur[0] == '*' || cur[0] == '+' || cur[0] == '#' || cur[0] == '|' ||
		(cur[0] >= '0' && cur[0] <= '9' && bytes.IndexAny(cur[:min(len(cur), 4)], ".)") > 0) {
		return nil // a new list item, heading or table row starts a clause
	}
	end := s.cur.off - 1 // the '\n' ending the previous line
	lo := max(0, end-200)
	prev := s.data[lo:end]
	if i := bytes.LastIndexByte(prev, '\n'); i >= 0 {
		prev = prev[i+1:]
	}
	prev = bytes.TrimRight(prev, " \t\r")
	if len(bytes.TrimSpace(prev)) == 0 || bytes.HasPrefix(bytes.TrimSpace(prev), []byte("#")) {
		return nil
	}
	if _, n, _ := fenceMarker(prev); n > 0 {
		return nil
	}
	if isClauseBreak(prev, len(prev)-1) {
		return nil
	}
	for i := len(prev) - 2; i >= 0; i-- {
		if isClauseBreak(prev, i) {
			prev = prev[i+1:]
			break
		}
	}
	out := make([]byte, 0, len(prev)+1)
	out = append(out, prev...)
	return append(out, ' ')
}

// Shell helpers.

// downloaders are the commands the procedural pipe check follows.
var downloaders = newWordSet("curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "fetch", "lwp-request", "aria2c")

var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"fish": true, "csh": true, "tcsh": true, "python": true, "python2": true, "python3": true,
	"py": true, "perl": true, "ruby": true, "node": true, "nodejs": true, "deno": true, "bun": true,
	"php": true, "pwsh": true, "powershell": true, "powershell.exe": true, "pwsh.exe": true,
	"iex": true, "invoke-expression": true, "source": true, "cmd": true, "cmd.exe": true,
	"osascript": true, "lua": true, "tclsh": true, "r": true, "rscript": true,
}

var (
	reProcSub = ci(`(?:\b(?:(?:ba|z|da|k|fi|tc|c|a)?sh|source|python[0-9.]*|perl|ruby|node|php)|(?:^|[\s;&|(])\.)\s+(?:-{1,2}[\w-]+\s+)*(?:<\(|<<<\s*["']?\$\()\s*(?:sudo\s+)?(?:\S*/)?(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b`)
	reCmdSub  = ci(`\b(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php|eval|source)\b[^$\x60;|&\n]*?(?:\$\$?\(|\x60)\s*(?:sudo\s+)?(?:\S*/)?(?:curl|wget|fetch|iwr|irm)\b`)
)

// pipeToShell finds downloads piped (or substituted) into an interpreter.
func (s *fileScan) pipeToShell(u *unit) {
	t := u.t
	pipe := bytes.IndexByte(t, '|') >= 0
	subst := bytes.Contains(t, []byte("$(")) || bytes.Contains(t, []byte("<(")) || bytes.IndexByte(t, '`') >= 0
	if !pipe && !subst {
		return
	}
	var locs [][2]int
	downloaders.each(t, func(start, end int) bool {
		locs = append(locs, [2]int{start, end})
		return len(locs) <= MaxCounted
	})
	for i, loc := range locs {
		if s.col.budget(RulePipeToShell) <= 0 {
			return
		}
		if pipe {
			limit := len(t)
			if i+1 < len(locs) {
				limit = locs[i+1][0] // the next downloader starts another pipeline
			}
			if end, ok := pipedToInterpreter(t, loc[1], limit); ok {
				s.emitCommand(u, RulePipeToShell, loc[0], end, "")
				continue
			}
		}
		if subst {
			s.substitutedDownload(u, loc[0], loc[1])
		}
	}
}

// substitutedDownload reports a download at t[ds:de] whose output an
// interpreter runs through process or command substitution: bash <(curl
// …), sh -c "$(curl …)", eval "$(curl …)". The patterns run only on the
// few bytes before the download.
func (s *fileScan) substitutedDownload(u *unit, ds, de int) {
	t := u.t
	k := ds
	for k > 0 && (t[k-1] == ' ' || t[k-1] == '\t') {
		k--
	}
	if k >= 5 && strings.EqualFold(string(t[k-5:k]), "sudo ") {
		for k -= 5; k > 0 && (t[k-1] == ' ' || t[k-1] == '\t'); k-- {
		}
	}
	// A backtick opens command substitution in code; in markdown prose it
	// opens a code span.
	tick := k >= 1 && t[k-1] == '`' && u.ctxAt(u.lineOffset(k-1)) != ctxProse
	if !(k >= 2 && (string(t[k-2:k]) == "$(" || string(t[k-2:k]) == "<(") || tick) {
		return
	}
	if start, ok := consumer(t, k-1); ok {
		s.emitCommand(u, RulePipeToShell, start, de, "")
	}
}

// consumer reports whether the substitution opened at t[open] ("$(",
// "<(" or "`") feeds an interpreter, and where that command starts: reading
// back over quotes, flags and "<<<", the command before it is a shell, an
// interpreter, eval, source or ".". It looks at four words at most.
func consumer(t []byte, open int) (int, bool) {
	i := open
	if t[i] == '(' {
		i-- // the $ or < of $( and <(
		if i > 0 && t[i-1] == '$' {
			i-- // make's $$(
		}
	}
	for range 4 {
		for i > 0 && (t[i-1] == ' ' || t[i-1] == '\t' || t[i-1] == '"' || t[i-1] == '\'') {
			i--
		}
		j := i
		for j > 0 && t[j-1] != ' ' && t[j-1] != '\t' && t[j-1] != '"' && t[j-1] != '\'' && t[j-1] != ';' && t[j-1] != '|' && t[j-1] != '&' && t[j-1] != '(' && t[j-1] != '`' {
			j--
		}
		if j == i {
			return 0, false
		}
		word := strings.ToLower(string(t[j:i]))
		if k := strings.LastIndexAny(word, `/\`); k >= 0 && word != "." {
			word = word[k+1:]
		}
		switch {
		case strings.HasPrefix(word, "-") || word == "<<<":
			i = j // a flag such as -c, or a here-string
		case interpreters[word] || word == "eval" || word == "." || strings.HasPrefix(word, "python") && len(word) <= 10:
			return j, true
		default:
			return 0, false
		}
	}
	return 0, false
}

// pipedToInterpreter follows the pipeline starting at t[from:] (up to
// limit) and returns the end of the interpreter it feeds, if any. The
// pipeline ends at ;, &&, || or the end of the line; quoted text is skipped.
func pipedToInterpreter(t []byte, from, limit int) (int, bool) {
	var quote byte
	for j := from; j < limit; j++ {
		c := t[j]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case ';':
			return 0, false
		case '&':
			if j+1 < limit && t[j+1] == '&' {
				return 0, false
			}
		case '|':
			if j+1 < limit && t[j+1] == '|' {
				return 0, false
			}
			if end, ok := interpreterAt(t, j+1, limit); ok {
				return end, true
			}
		}
	}
	return 0, false
}

// interpreterAt reports whether the command starting at t[i:] is an
// interpreter reading its program from standard input, after optional
// sudo (with flags), env (with assignments) and a directory prefix.
func interpreterAt(t []byte, i, limit int) (int, bool) {
	for range 8 { // sudo, env and their arguments
		for i < limit && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		j := i
		for j < limit && t[j] != ' ' && t[j] != '\t' && t[j] != '|' && t[j] != ';' && t[j] != '&' && t[j] != ')' && t[j] != '"' && t[j] != '\'' && t[j] != '`' {
			j++
		}
		if j == i {
			return 0, false
		}
		word := strings.ToLower(string(t[i:j]))
		if k := strings.LastIndexAny(word, `/\`); k >= 0 {
			word = word[k+1:]
		}
		switch {
		case word == "sudo" || word == "env" || word == "doas" || word == "command" || word == "exec" || word == "nohup":
			i = j
			// Skip its options and VAR=value assignments.
			for {
				for i < limit && (t[i] == ' ' || t[i] == '\t') {
					i++
				}
				k := i
				for k < limit && t[k] != ' ' && t[k] != '\t' {
					k++
				}
				arg := t[i:k]
				if len(arg) > 0 && (arg[0] == '-' || bytes.IndexByte(arg, '=') > 0) {
					i = k
					continue
				}
				break
			}
		case interpreters[word] || strings.HasPrefix(word, "python") && len(word) <= 10:
			return j, true
		default:
			return 0, false
		}
	}
	return 0, false
}

var reRemoteExec = []gated{
	{re: ci(`\b(?:iex|invoke-expression)\b[^|\n]*?(?:downloadstring|downloaddata|downloadfile|net\.webclient|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|curl|wget|start-bitstransfer)\b)`), all: bIex, any: bPSDownload | bDownload},
	{re: ci(`(?:downloadstring|downloaddata|net\.webclient)[^\n]*?\|\s*(?:iex|invoke-expression)\b`), all: bIex | bPSDownload, lit: []string{"|"}},
	{re: ci(`\[scriptblock\]::create\([^\n]*?(?:downloadstring|net\.webclient|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b)`), all: bPSDownload},
	{re: ci(`\bmshta(?:\.exe)?\s+["']?(?:https?|javascript|vbscript):`), all: bLolbin},
	{re: ci(`\bregsvr32(?:\.exe)?\b[^\n]*?/i:\s*["']?https?:`), all: bLolbin},
}

func (s *fileScan) remoteExec(u *unit, m family) {
	s.findAll(RuleRemoteExec, reRemoteExec, u, m, func(loc []int) {
		s.emitCommand(u, RuleRemoteExec, loc[0], loc[1], "")
	})
}

const decoders = `b64decode|b32decode|b16decode|b85decode|a85decode|base64|decode64|codecs\.decode|fromhex|unhexlify|decompress|marshal\.loads|\batob\s*\(|buffer\.from|frombase64string|gzinflate|str_rot13`

var reEvalDecoded = []gated{
	{re: ci(`\b(?:exec|eval|execfile)\s*\([^\n]*?(?:` + decoders + `)`), all: bSink | bDecoder},
	{re: cs(`\bnew\s+Function\s*\([^\n]*?(?:atob\s*\(|Buffer\.from|base64)|\bFunction\s*\(\s*atob\s*\(`), all: bSink | bDecoder},
	{re: ci(`\b(?:base64\s+(?:-\w*d\w*|--decode)|xxd\s+-\w*r\w*|openssl\b[^|\n]*?\bbase64\b[^|\n]*?\s-d)\b[^|\n]*(?:\|\s*(?:gunzip|gzip\s+-d|zcat|xz\s+-d|bunzip2|bzip2\s+-d|tr\b|rev\b)[^|\n]*)*\|\s*(?:sudo\s+)?(?:\S*/)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php|eval|source|iex|invoke-expression)\b`), all: bDecoder, lit: []string{"|"}},
	{re: ci(`\b(?:eval|(?:ba|z|da|k)?sh\s+-c|python[0-9.]*\s+-c|perl\s+-e|source)\s+["']?\$\([^\n]*?(?:base64\s+(?:-\w*d\w*|--decode)|xxd\s+-\w*r)`), all: bDecoder, lit: []string{"$("}},
	{re: ci(`\b(?:(?:ba|z|da|k)?sh|source)\s+<\([^\n]*?(?:base64\s+(?:-\w*d\w*|--decode)|xxd\s+-\w*r)`), all: bDecoder, lit: []string{"<("}},
	{re: ci(`\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*?\s[-/](?:e|ec|en|enc|enco|encod|encode|encoded|encodedc|encodedco|encodedcom|encodedcomm|encodedcomma|encodedcomman|encodedcommand)\s+["']?[A-Za-z0-9+/]{16,}`), all: bPS},
	{re: ci(`\b(?:iex|invoke-expression)\b[^\n]*?(?:frombase64string|gzipstream|deflatestream)`), all: bIex | bDecoder},
}

func (s *fileScan) evalDecoded(u *unit, m family) {
	s.findAll(RuleEvalDecoded, reEvalDecoded, u, m, func(loc []int) {
		s.emitCommand(u, RuleEvalDecoded, loc[0], loc[1], "")
	})
}

// Deletes.

var deleters = newWordSet("rm", "rmdir", "rd", "del", "erase", "ri", "remove-item")

var (
	reFindDelete = cs(`\bfind\s+(?:/|~/?|\$HOME/?|"\$HOME"/?|\$\{HOME\}/?)\s[^\n|;]*(?:-delete\b|-exec\s+(?:sudo\s+)?rm\b)`)
	reRmtree     = cs(`\bshutil\.rmtree\(\s*(?:["'](?:/|~|~/)["']|os\.path\.expanduser\(\s*["']~/?["']\s*\)|(?:pathlib\.)?Path\.home\(\)|os\.environ\[\s*["']HOME["']\s*\]|os\.getenv\(\s*["']HOME["']\s*\)|["'][A-Za-z]:\\\\?["'])\s*[,)]`)
	reRmSync     = cs(`\b(?:rmSync|rmdirSync|rimraf(?:\.sync)?)\s*\(\s*(?:os\.homedir\(\)|["']/["']|process\.env\.HOME|["']~["'])`)
)

// dangerousTargets are delete targets that wipe a system or a home folder,
// after quotes and trailing "/", "\", "/*" and "\*" are removed.
var dangerousTargets = map[string]bool{
	"": true, "~": true, "$home": true, "${home}": true, "$env:userprofile": true, "%userprofile%": true,
	"$env:homedrive": true, "%homedrive%": true, "%systemdrive%": true, "$env:systemdrive": true,
	"%systemroot%": true, "$env:systemroot": true, "/root": true, "/home": true, "/users": true,
	"/etc": true, "/usr": true, "/var": true, "/bin": true, "/sbin": true, "/lib": true, "/lib64": true,
	"/boot": true, "/opt": true, "/system": true, "/library": true, "/applications": true, "/*": true,
	"c:\\windows": true, "c:/windows": true,
}

var rmAPIs = []gated{
	{re: reFindDelete, all: bFindDel},
	{re: reRmtree, all: bRmAPI},
	{re: reRmSync, all: bRmAPI},
}

func (s *fileScan) destructiveRm(u *unit, m family) {
	t := u.t
	if m&bRm != 0 {
		parsed := 0 // arguments already read by an earlier delete command
		deleters.each(t, func(start, end int) bool {
			if start < parsed {
				return true // an argument of the previous command
			}
			if end < len(t) && t[end] == '.' && containsFold(t[end:min(len(t), end+5)], ".exe") {
				end += 4
			}
			if end < len(t) && t[end] != ' ' && t[end] != '\t' {
				return true
			}
			cmd := strings.ToLower(strings.TrimSuffix(string(t[start:end]), ".exe"))
			e, ok := rmArgsDangerous(cmd, t, end)
			if ok {
				s.emitCommand(u, RuleDestructiveRm, start, e, "")
			}
			parsed = e
			return s.col.budget(RuleDestructiveRm) > 0
		})
	}
	s.findAll(RuleDestructiveRm, rmAPIs, u, m, func(loc []int) {
		s.emitCommand(u, RuleDestructiveRm, loc[0], loc[1], "")
	})
}

// rmArgsDangerous parses the arguments of a delete command starting at
// t[i:] and reports whether it deletes recursively a dangerous target (or
// disables --preserve-root), with the end of the arguments read.
func rmArgsDangerous(cmd string, t []byte, i int) (int, bool) {
	recursive, danger, noPreserve, endOpts := false, false, false, false
	windows := cmd == "rd" || cmd == "rmdir" || cmd == "del" || cmd == "erase"
	ps := cmd == "ri" || cmd == "remove-item"
	end, first := i, i
	for n := 0; n < 32 && i < len(t) && i-first < 512; n++ {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		if i >= len(t) || t[i] == ';' || t[i] == '|' || t[i] == '&' || t[i] == ')' || t[i] == '#' || t[i] == '`' {
			break
		}
		j := i
		var q byte
		for j < len(t) {
			c := t[j]
			if q != 0 {
				if c == q {
					q = 0
				}
			} else if c == '"' || c == '\'' {
				q = c
			} else if c == ' ' || c == '\t' || c == ';' || c == '|' || c == '&' || c == ')' || c == '`' {
				break
			}
			j++
		}
		arg := strings.ToLower(strings.Trim(string(t[i:j]), `"',[]`))
		end, i = j, j
		switch {
		case arg == "--":
			endOpts = true
		case !endOpts && arg == "--no-preserve-root":
			noPreserve = true
		case !endOpts && (arg == "--recursive" || ps && strings.HasPrefix("-recurse", arg) && len(arg) >= 2):
			recursive = true
		case !endOpts && strings.HasPrefix(arg, "--"):
		case !endOpts && !windows && strings.HasPrefix(arg, "-") && len(arg) > 1:
			if ps {
				continue // -force, -path and friends
			}
			if strings.ContainsAny(arg[1:], "r") {
				recursive = true
			}
		case windows && len(arg) == 2 && arg[0] == '/':
			if arg == "/s" {
				recursive = true
			}
		default:
			if isDangerousTarget(arg) {
				danger = true
			}
		}
	}
	if cmd == "rm" && noPreserve {
		return end, true
	}
	return end, recursive && danger
}

func isDangerousTarget(arg string) bool {
	if arg == "" {
		return false
	}
	a := arg
	for {
		b := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(a, "/*"), `\*`), "/.")
		b = strings.TrimRight(b, `/\`)
		if b == a {
			break
		}
		a = b
	}
	if dangerousTargets[a] {
		return true
	}
	// A bare drive: c: or c:\.
	return len(a) == 2 && a[1] == ':' && a[0] >= 'a' && a[0] <= 'z'
}

// Permissions.

var (
	reChmodAPI = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(?:os|fs|Files|File|FileUtils|Deno)\.(?:chmod|chmodSync|lchmod|fchmod|setPosixFilePermissions)\s*\([^\n,]*,\s*(?:0o|0)?([0-7]{3,4})\b`)
	})
	reChmodBit = cs(`chmod[^\n]*\bS_I(?:WOTH|RWXO)\b`)
	reIcacls   = ci(`\bicacls\b[^\n]*/grant(?::r)?\s+["']?(?:everyone|\*s-1-1-0|users|authenticated users)["']?:(?:\([a-z]+\))*\(?(?:f|m|w)\b`)
	reUmask    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bumask\s*\(?\s*(?:0o)?([0-7]{1,4})\b`) })
)

var chmodOthers = []gated{
	{re: reChmodBit, all: bChmod, lit: []string{"S_I"}},
	{re: reIcacls, all: bIcacls},
}

func (s *fileScan) worldWritable(u *unit, m family) {
	t := u.t
	if m&bChmod != 0 {
		for off := 0; ; {
			i := bytes.Index(t[off:], []byte("chmod"))
			if i < 0 {
				break
			}
			start := off + i
			off = start + len("chmod")
			if start > 0 && (isWord[t[start-1]] || t[start-1] == '.' || t[start-1] == '-') {
				continue // os.chmod(…) is read below
			}
			if end, ok := chmodWorldWritable(t, off); ok {
				s.emitCommand(u, RuleWorldWritable, start, end, "")
				if s.col.budget(RuleWorldWritable) <= 0 {
					return
				}
			}
		}
		if g := (gated{lit: []string{".chmod", "chmodSync", ".lchmod", ".fchmod", "setPosixFilePermissions"}}); g.ok(s, u, 0) {
			for _, loc := range reChmodAPI().FindAllSubmatchIndex(t, -1) {
				if othersWrite(t[loc[3]-1]) {
					s.emitCommand(u, RuleWorldWritable, loc[0], loc[1], "")
				}
			}
		}
	}
	s.findAll(RuleWorldWritable, chmodOthers, u, m, func(loc []int) {
		s.emitCommand(u, RuleWorldWritable, loc[0], loc[1], "")
	})
	if m&bUmask == 0 {
		return
	}
	t = u.t
	for _, loc := range reUmask().FindAllSubmatchIndex(t, -1) {
		// The others digit of a umask without the write bit grants write.
		if d := t[loc[3]-1]; d == '0' || d == '1' || d == '4' || d == '5' {
			s.emitCommand(u, RuleWorldWritable, loc[0], loc[1], "umask lets every user write new files")
		}
	}
}

// othersWrite reports whether an octal digit for "others" includes write.
func othersWrite(d byte) bool { return d == '2' || d == '3' || d == '6' || d == '7' }

// chmodWorldWritable reads the mode argument of chmod at t[i:].
func chmodWorldWritable(t []byte, i int) (int, bool) {
	for n := 0; n < 8 && i < len(t); n++ {
		for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '"' || t[i] == '\'' || t[i] == ',') {
			i++
		}
		j := i
		for j < len(t) && t[j] != ' ' && t[j] != '\t' && t[j] != '"' && t[j] != '\'' && t[j] != ';' && t[j] != '|' && t[j] != '&' && t[j] != ')' && t[j] != '`' {
			j++
		}
		if j == i {
			return 0, false
		}
		arg := string(t[i:j])
		i = j
		if strings.HasPrefix(arg, "-") {
			continue // an option, or a mode that only removes bits
		}
		return j, modeWorldWritable(arg)
	}
	return 0, false
}

// modeWorldWritable reports whether a chmod mode gives others write access.
func modeWorldWritable(mode string) bool {
	if mode == "" {
		return false
	}
	if strings.Trim(mode, "01234567") == "" {
		return len(mode) >= 3 && len(mode) <= 4 && othersWrite(mode[len(mode)-1])
	}
	for clause := range strings.SplitSeq(mode, ",") {
		who := strings.TrimLeft(clause, "ugoa")
		w := clause[:len(clause)-len(who)]
		for len(who) > 0 && (who[0] == '+' || who[0] == '=' || who[0] == '-') {
			op := who[0]
			perms := who[1:]
			k := strings.IndexAny(perms, "+=-")
			if k >= 0 {
				who = perms[k:]
				perms = perms[:k]
			} else {
				who = ""
			}
			if op != '-' && strings.Contains(perms, "w") && strings.ContainsAny(w, "oa") {
				return true
			}
		}
	}
	return false
}

// Sensitive paths.

var (
	reHomeSecret = ci(`(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|\$env:USERPROFILE|\$env:HOME|/home/[^/\s"'\x60]+|/Users/[^/\s"'\x60]+|/root)[/\\]\.(?:ssh|aws|gnupg|kube|docker|npmrc|netrc|pgpass|git-credentials|azure|config[/\\]gcloud|password-store|vault-token)\b`)
	reSecretFile = ci(`\.(?:ssh[/\\](?:id_[a-z0-9_]+|authorized_keys|known_hosts)|aws[/\\]credentials|docker[/\\]config\.json|kube[/\\]config|git-credentials)\b`)
	reSystem     = cs(`/etc/(?:shadow|gshadow|sudoers|master\.passwd)\b`)
	reBrowser    = ci(`(?:google[/\\ ]chrome|chromium|brave|microsoft[/\\ ]edge)[^\n]*?[/\\](?:login data|cookies)\b|\b(?:logins\.json|key4\.db|cookies\.sqlite)\b|library[/\\]keychains\b|\bsecurity\s+(?:dump-keychain|find-(?:generic|internet)-password\b[^\n]*\s-w\b)`)
	// reQuotedDir finds a credential folder joined to a home folder in code:
	// os.path.join(home, ".ssh"), Path.home() / ".aws".
	reQuotedDir = ci(`(?:home|homedir|expanduser|userprofile)[^\n]*?["']\.(?:ssh|aws|gnupg|kube|docker)["'/\\]`)
	// reReadVerb is an action that reads, copies or sends a file.
	reReadVerb = ci(`\b(?:cat|read|reads|reading|print|dump|copy|copies|cp|scp|rsync|upload|uploads|send|sends|post|exfiltrate|attach|paste|include|base64|tar|zip|open|load|source|get-content|gc|less|more|head|tail|strings|xxd|collect|gather|harvest|steal|grab|extract|export)\b`)
)

var sensitivePatterns = []gated{
	{re: reHomeSecret},
	{re: reSecretFile},
	{re: reSystem},
	{re: reBrowser},
	{re: reQuotedDir},
}

func (s *fileScan) sensitivePath(u *unit) {
	var home [][]int
	for i := range sensitivePatterns {
		h := 0 // home matches before the current one; both lists are in order
		s.findAll(RuleSensitivePath, sensitivePatterns[i:i+1], u, bSensitive, func(loc []int) {
			if i == 0 {
				home = append(home, loc)
			}
			if i == 1 {
				for h < len(home) && home[h][1] <= loc[0] {
					h++
				}
				if h < len(home) && home[h][0] <= loc[0] {
					return // already reported as a home path
				}
			}
			s.emitSensitive(u, loc[0], loc[1])
		})
	}
}

// emitSensitive records a sensitive-path finding: Warning in code; in prose
// Info, unless the clause reads, copies or sends the file.
func (s *fileScan) emitSensitive(u *unit, start, end int) {
	ls := u.lineOffset(start)
	sev := Warning
	msg := ""
	if u.ctxAt(ls) == ctxProse {
		sev = Info
		msg = "sensitive path mentioned in prose"
		if !s.cautionary(u, ls, u.lineOffset(end-1)+1) && s.readVerbBefore(u, ls) {
			sev = Warning
			msg = "prose asks to read a sensitive path"
		}
	}
	s.emit(u, RuleSensitivePath, sev, start, end, msg)
}

// readVerbBefore reports whether a read/copy/send verb precedes line
// offset ls in the same clause.
func (s *fileScan) readVerbBefore(u *unit, ls int) bool {
	line := s.cur.text
	start := max(0, ls-cueReach)
	for i := ls - 1; i >= start; i-- {
		if isClauseBreak(line, i) && !u.inSpan(i) {
			start = i + 1
			break
		}
	}
	return reReadVerb.match(s, line[start:ls])
}
