package lint

import (
	"bytes"
	"regexp"
)

// credPattern is one credential format. prefix is the length of the fixed
// part, so that the rest can be checked for placeholders.
type credPattern struct {
	lits   []string              // one of these must occur (case-sensitive) for re to run
	re     func() *regexp.Regexp // compiled on first use (lazy)
	name   string
	prefix int
	// strong requires upper case, lower case and digits in the variable
	// part, to tell keys from long hyphenated words.
	strong bool
}

var credPatterns = []credPattern{
	{[]string{"AKIA", "ASIA", "ABIA", "ACCA"}, lazy(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`), "AWS access key ID", 4, false},
	{[]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, lazy(`\bgh[pousr]_[A-Za-z0-9]{36,255}\b`), "GitHub token", 4, false},
	{[]string{"github_pat_"}, lazy(`\bgithub_pat_[A-Za-z0-9_]{22,255}\b`), "GitHub fine-grained token", 11, false},
	{[]string{"sk-"}, lazy(`\bsk-(?:proj-|svcacct-|admin-|ant-(?:api|admin|sid)\d\d-)?[A-Za-z0-9_-]{32,}`), "OpenAI-style secret key", 3, true},
	{[]string{"_live_"}, lazy(`\b(?:sk|rk)_live_[A-Za-z0-9]{20,}`), "Stripe live key", 8, false},
	{[]string{"xox"}, lazy(`\bxox[abprs]-[0-9]{6,}-[A-Za-z0-9-]{6,}`), "Slack token", 5, false},
	{[]string{"hooks.slack.com"}, lazy(`hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}`), "Slack webhook URL", 28, false},
	{[]string{"AIza"}, lazy(`\bAIza[0-9A-Za-z_-]{35}`), "Google API key", 4, false},
	{[]string{"-----BEGIN"}, lazy(`-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----`), "private key block", 0, false},
}

func (s *fileScan) credentials(u *unit) {
	for _, p := range credPatterns {
		if g := (gated{lit: p.lits}); !g.ok(s, u, 0) {
			continue
		}
		for _, loc := range p.re().FindAllIndex(u.t, -1) {
			m := u.t[loc[0]:loc[1]]
			body := m[min(p.prefix, len(m)):]
			if p.strong && !(bytes.ContainsAny(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
				bytes.ContainsAny(body, "abcdefghijklmnopqrstuvwxyz") && bytes.ContainsAny(body, "0123456789")) {
				continue
			}
			sev, msg := Error, p.name
			if p.prefix > 0 && isPlaceholder(body) {
				sev, msg = Info, p.name+" (placeholder)"
			}
			s.emit(u, RuleCredentialLiteral, sev, loc[0], loc[1], msg)
		}
	}
}

// isPlaceholder reports whether the variable part of a key is an obvious
// placeholder: few distinct characters (xxxx, 0000) or the word EXAMPLE,
// as in the documentation key AKIAIOSFODNN7EXAMPLE.
func isPlaceholder(body []byte) bool {
	if bytes.Contains(body, []byte("EXAMPLE")) || bytes.Contains(body, []byte("example")) {
		return true
	}
	var seen [256]bool
	n := 0
	for _, c := range body {
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n < 6
}

// Base64 blobs in scripts.

const (
	b64MinRun  = 200 // a single run this long is a blob
	b64MinLine = 60  // a line this long made only of base64 continues a wrapped blob
)

var isB64 = func() (t [256]bool) {
	for i := range t {
		t[i] = i >= 'A' && i <= 'Z' || i >= 'a' && i <= 'z' || i >= '0' && i <= '9' || i == '+' || i == '/' || i == '_' || i == '-'
	}
	return
}()

// base64Blob reports runs of at least b64MinRun base64 characters, and
// blobs wrapped over several lines of base64 only.
func (s *fileScan) base64Blob(u *unit) {
	t := u.t
	whole := u.pos == nil && u.base == 0 && u.ownEnd == len(s.cur.text)
	for i := 0; i < len(t); {
		if !isB64[t[i]] {
			i++
			continue
		}
		// Base64 of anything mixes upper and lower case; hex, constants
		// and separators such as ------ do not.
		j := i
		upper, lower := false, false
		for j < len(t) && isB64[t[j]] {
			c := t[j]
			upper = upper || c >= 'A' && c <= 'Z'
			lower = lower || c >= 'a' && c <= 'z'
			j++
		}
		for k := 0; k < 2 && j < len(t) && t[j] == '='; k++ {
			j++
		}
		// A run continued from the previous chunk was reported there.
		continued := u.base > 0 && i == 0 && isB64[s.cur.text[u.base-1]]
		if j-i >= b64MinRun && upper && lower && !continued {
			s.emit(u, RuleBase64Blob, Warning, i, min(j, i+40), "")
			if whole {
				s.b64Break()
				return
			}
		}
		i = j
	}
	if !whole {
		return
	}
	// Wrapped blobs: a line that is base64 only, once quotes, commas and
	// concatenation are trimmed.
	core := bytes.Trim(t, " \t\"'`,+\\()[];.")
	core = bytes.TrimPrefix(core, []byte("b\""))
	if len(core) < b64MinLine {
		s.b64Break()
		return
	}
	for _, c := range core {
		if !isB64[c] && c != '=' {
			s.b64Break()
			return
		}
	}
	if s.b64Lines == 0 {
		s.b64Line = s.cur.no
	}
	s.b64Lines++
	s.b64Run += len(core)
	if s.b64Run >= b64MinRun && s.b64Lines >= 2 && !s.b64Done {
		s.b64Done = true
		start := bytes.Index(t, core[:8])
		s.emit(u, RuleBase64Blob, Warning, start, start+40, "base64 blob wrapped over several lines")
	}
}

// b64Break ends a run of base64-only lines.
func (s *fileScan) b64Break() {
	s.b64Run, s.b64Lines, s.b64Done = 0, 0, false
}
