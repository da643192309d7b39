package lint

import (
	"bytes"
	"fmt"
	"regexp"
	"sync"
)

// Environment exfiltration and reverse shells.

// envWindow is how many lines after an environment dump a network call
// still counts as sending it (a dump saved to a variable or a file, then
// posted).
const envWindow = 10

var (
	// envDumps serialise the whole environment: forms only ever used to
	// print or send it.
	envDumps = []gated{
		{re: ci(`\b(?:gci|get-childitem|ls|dir|get-item)\s+env:`), all: bEnvSh, lit: []string{"env:", "Env:", "ENV:"}},
		{re: cs(`/proc/(?:self|\d+|\$\$|\*)/environ\b|\b(?:json\.dumps|str|repr|pprint\.pformat|base64\.b64encode)\(\s*(?:dict\(\s*)?os\.environ\b`), all: bEnviron},
		{re: cs(`\b(?:JSON\.stringify|String|util\.inspect|Buffer\.from)\(\s*(?:\{\s*\.\.\.)?\s*process\.env\b`), all: bProcEnv},
		{re: ci(`\[(?:system\.)?environment\]::getenvironmentvariables\(`), all: bPSEnv},
	}
	// envBulks are the other whole-environment reads, which also pass the
	// environment to child processes; they count only on the same line as a
	// network call, and not after env= or env:.
	envBulks = []gated{
		{re: cs(`\bos\.environ\b(?:\s*[),}\]]|\.(?:copy|items|keys|values)\(\))|\bdict\(\s*os\.environ\b|\*\*os\.environ\b`), all: bEnviron},
		{re: cs(`\bObject\.(?:entries|keys|values|assign)\(\s*(?:\{\s*\})?\s*,?\s*process\.env\b|\.\.\.process\.env\b|\bprocess\.env\s*[),}\]]`), all: bProcEnv},
	}
	reEnvArg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\benv\s*[=:]\s*\{?\s*(?:\.\.\.)?\s*(?:dict\(\s*)?$`) })
)

func (s *fileScan) envExfil(u *unit, m family) {
	t := u.t
	var dumps [][]int
	serial := 0 // dumps[:serial] are serialising forms
	if m&famEnv != 0 {
		if m&bEnvSh != 0 {
			envCommands.each(t, func(start, end int) bool {
				if e, ok := envDumpCommand(t, start, end); ok {
					dumps = append(dumps, []int{start, e})
				}
				return len(dumps) < MaxCounted
			})
		}
		if m&bExport != 0 {
			exporters.each(t, func(start, end int) bool {
				// export -p and declare -p/-x print every exported variable.
				i := end
				for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
					i++
				}
				if i+2 <= len(t) && t[i] == '-' && (t[i+1] == 'p' || t[i+1] == 'x' && fold[t[start]] == 'd') && (i+2 == len(t) || !isWord[t[i+2]]) {
					dumps = append(dumps, []int{start, i + 2})
				}
				return len(dumps) < MaxCounted
			})
		}
		s.findAll(RuleEnvExfil, envDumps, u, m, func(loc []int) { dumps = append(dumps, loc) })
		serial = len(dumps)
		s.findAll(RuleEnvExfil, envBulks, u, m, func(loc []int) {
			if !reEnvArg().Match(t[max(0, loc[0]-24):loc[0]]) {
				dumps = append(dumps, loc)
			}
		})
	}
	window := s.envDumpLine > 0 && s.cur.no-s.envDumpLine <= envWindow
	var nets [][]int
	if m&bNet != 0 && (len(dumps) > 0 || window) {
		nets = s.netSends(u)
	}
	// In prose, a dump and a network call count only together in one code
	// span ("`env | curl -d @- …`"); the window after a dump is for code.
	prose := func(loc []int) bool { return u.ctxAt(u.lineOffset(loc[0])) == ctxProse }
	for _, n := range nets {
		if s.col.budget(RuleEnvExfil) <= 0 {
			break
		}
		reported := false
		for _, d := range dumps {
			if prose(n) || prose(d) {
				sn, sd := u.spanAt(u.lineOffset(n[0])), u.spanAt(u.lineOffset(d[0]))
				if sn < 0 || sn != sd {
					continue
				}
			}
			s.emitCommand(u, RuleEnvExfil, min(d[0], n[0]), max(d[1], n[1]), "")
			reported = true
			break
		}
		if !reported && len(dumps) == 0 && !prose(n) && window {
			s.emitCommand(u, RuleEnvExfil, n[0], n[1], fmt.Sprintf("environment dumped on line %d sent to the network", s.envDumpLine))
		}
	}
	for _, d := range dumps[:serial] {
		// Only serialising forms in code, not already sent on their own
		// line, start the window.
		if len(nets) == 0 && !prose(d) {
			s.envDumpLine = s.cur.no
			break
		}
	}
}

var (
	envCommands = newWordSet("env", "printenv")
	exporters   = newWordSet("export", "declare")
)

// netClients are commands and functions that send data over the network.
var netClients = newWordSet("curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "nslookup", "dig",
	"invoke-webrequest", "invoke-restmethod", "iwr", "irm", "sendbeacon", "xmlhttprequest", "axios",
	"fetch", "urlopen", "smtplib", "ftplib")

// netCalls are library calls that send data over the network (folded).
var netCalls = []string{"requests.", "httpx.", "aiohttp.", "urllib.request", "urllib3.", "http.client",
	"http.request", "https.request", "net.webclient", ".uploadstring", ".uploaddata", ".uploadfile",
	".uploadvalues", "/dev/tcp/", "/dev/udp/"}

// netSends returns the network calls in u.
func (s *fileScan) netSends(u *unit) [][]int {
	var out [][]int
	netClients.each(u.t, func(start, end int) bool {
		out = append(out, []int{start, end})
		return len(out) < MaxCounted
	})
	low := foldInto(s.scratch[:0], u.t)
	s.scratch = low
	for _, c := range netCalls {
		for off := 0; ; {
			i := bytes.Index(low[off:], []byte(c))
			if i < 0 {
				break
			}
			out = append(out, []int{off + i, off + i + len(c)})
			off += i + len(c)
			if len(out) >= MaxCounted {
				return out
			}
		}
	}
	return out
}

// envDumpCommand reports whether env or printenv at t[start:end] runs
// without arguments (so it prints the whole environment): preceded by the
// start of a command and followed by the end of one, a pipe or a
// redirection.
func envDumpCommand(t []byte, start, end int) (int, bool) {
	if start > 0 {
		switch p := t[start-1]; {
		case p == '(' && start >= 2 && t[start-2] == '$':
		case p == ' ' || p == '\t' || p == ';' || p == '&' || p == '|' || p == '(' || p == '`' || p == '{':
		default:
			return 0, false
		}
	}
	i := end
	if bytes.HasPrefix(t[i:], []byte(" -0")) {
		i += 3
	}
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	if i == len(t) {
		return i, true
	}
	switch t[i] {
	case '|', '>', ')', '`', ';', '&', '}':
		return i + 1, true
	}
	return 0, false
}

var reReverseShell = []gated{
	// nc -e /bin/sh, ncat --exec
	{all: bNc, re: cs(`\b(?:nc|ncat|netcat|nc\.traditional|nc\.openbsd)(?:\.exe)?\b[^\n|;&]*\s(?:-[a-zA-Z]*e[a-zA-Z]*\b|-c\b|--exec\b|--sh-exec\b|--lua-exec\b)`)},
	// mkfifo /tmp/f; … | nc host port > /tmp/f
	{all: bFifo, re: cs(`\b(?:mkfifo|mknod\s+\S+\s+p)\b[^\n]*\b(?:nc|ncat|netcat|telnet|socat|openssl\s+s_client)\b`)},
	// Python: socket + pty.spawn on one line, or file descriptors duplicated onto a socket.
	{all: bPyShell, re: cs(`\bsocket\b[^\n]*\bpty\.spawn\(|\bpty\.spawn\([^\n]*\bsocket\b|\bdup2\(\s*\w+\.fileno\(\)\s*,\s*[012]\s*\)|["'](?:/bin/)?(?:ba|z)?sh["'][^\n]*\bstdin\s*=\s*\w+\.fileno\(\)`)},
	// Perl, Ruby, PHP, socat, PowerShell.
	{all: bSockets, re: ci(`\buse\s+socket\b[^\n]*\bexec\b|\bsocket\s*\([^\n]*\bexec\s*\(?\s*["']/bin/(?:ba)?sh|\btcpsocket\.(?:new|open)\b[^\n]*\b(?:exec|spawn|popen|system)\b|\bfsockopen\([^\n]*\b(?:exec|shell_exec|system|passthru|proc_open|popen)\s*\(|\bsocat\b[^\n]*\b(?:exec|system):[^\n]*\b(?:sh|bash|zsh|cmd|powershell)\b|\bnet\.sockets\.tcpclient\b[^\n]*\b(?:iex|invoke-expression)\b`)},
}

var reShellI = cs(`\b(?:ba|z|da|k)?sh\s+-i\b`)

func (s *fileScan) reverseShell(u *unit, m family) {
	if m&bDevTCP != 0 {
		s.devTCP(u)
	}
	s.findAll(RuleReverseShell, reReverseShell, u, m, func(loc []int) {
		s.emitCommand(u, RuleReverseShell, loc[0], loc[1], "")
	})
}

// devTCP reports bash's /dev/tcp (or /dev/udp) used as a shell's input or
// output: in the same command, a descriptor is duplicated onto it (>&, <&,
// <>) or an interactive shell (sh -i) runs. A plain redirection, as in a
// port check (echo > /dev/tcp/host/port), is not reported.
func (s *fileScan) devTCP(u *unit) {
	t := u.t
	for off := 0; off < len(t) && s.col.budget(RuleReverseShell) > 0; {
		i := indexDevTCP(t[off:])
		if i < 0 {
			return
		}
		i += off
		off = i + len("/dev/tcp/")
		lo := max(0, i-160)
		if k := bytes.LastIndexAny(t[lo:i], ";|"); k >= 0 {
			lo += k + 1
		}
		hi := min(len(t), off+160)
		if k := bytes.IndexAny(t[off:hi], ";|"); k >= 0 {
			hi = off + k
		}
		cmd := t[lo:hi]
		if bytes.Contains(cmd, []byte(">&")) || bytes.Contains(cmd, []byte("<&")) || bytes.Contains(cmd, []byte("<>")) || reShellI.re().Match(cmd) {
			s.emitCommand(u, RuleReverseShell, lo+len(cmd)-len(bytes.TrimLeft(cmd, " \t")), hi, "")
		}
	}
}

// indexDevTCP returns the offset of the first "/dev/tcp/" or "/dev/udp/"
// in t, or -1.
func indexDevTCP(t []byte) int {
	for off := 0; ; {
		i := bytes.Index(t[off:], []byte("/dev/"))
		if i < 0 {
			return -1
		}
		i += off
		if r := t[i+5:]; bytes.HasPrefix(r, []byte("tcp/")) || bytes.HasPrefix(r, []byte("udp/")) {
			return i
		}
		off = i + 5
	}
}
