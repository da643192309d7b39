// Package lint labels risky content in Agent Skills: download-and-run
// commands, decoded payloads, destructive deletes, credential reads and
// literals, environment exfiltration, reverse shells, prompt injection,
// hidden text, host-run hooks and auto-loaded files. It only labels: nothing
// here blocks serving, and nothing here runs or opens anything. The catalog
// calls [File] on the bytes it already read to hash a file; the
// `skills-mcp lint` command calls the same functions plus the skill-level
// checks ([SkillMD], [Limits], [Archive], [Symlink]).
//
// # Scanning
//
// Text is recognised by content ([IsText]), not by extension, so
// extensionless scripts, Makefiles and .fish files are all scanned; UTF-16
// files with a byte-order mark are decoded first. Every occurrence is
// reported, up to [MaxPerFile] findings per rule, severity and suppression
// state in a file; the last one listed carries the count of the rest in
// [Finding.More]. No prefix or comment style turns a rule off: a line
// starting with "# note:" or "// never" is scanned like any other.
//
// Scanning is linear in the input. One pass over each line with a
// case-insensitive trigram index finds the trigger words of every rule, and
// a rule's patterns (RE2, linear-time, or small hand-written parsers) run
// only on lines holding its triggers. Lines longer than 64 KiB are scanned
// in overlapping chunks. A rule stops looking in a file after [MaxCounted]
// occurrences, so a hostile file of repeated patterns costs little more
// than an ordinary one. Invalid UTF-8, NUL bytes and huge inputs are
// handled without panics and with memory bounded by the input plus the
// findings.
//
// # Markdown prose and code
//
// Documentation warns against the very commands the rules look for, so in
// markdown (and .txt, .rst, .adoc) a command-shaped rule (pipe-to-shell,
// remote-exec, eval-decoded, destructive-rm, world-writable, env-exfil,
// reverse-shell) is reported at [Info] instead of its own severity when the
// match sits in prose — a paragraph, list item or inline code span, not a
// fenced code block or an HTML comment — inside a cautionary clause: the
// same clause has a negation governing a verb ("never run", "do not pipe",
// "don't use") or a caution word ("avoid", "instead of", "unsafe",
// "dangerous", "attackers", …) near the match. sensitive-path in prose is
// [Info] unless the clause reads, copies or sends the file ("cat", "upload",
// …). Everything else keeps its severity: scripts, fenced code and HTML
// comments are never downgraded, and the phrase rules (prompt-injection,
// hidden text, credentials) apply in prose at full severity because prose is
// where they act. An author who writes "never" in front of a payload gets
// an Info finding, never silence.
//
// # Suppression
//
// A marker `lint-ignore: RULE-ID reason` (several IDs may be separated by
// commas) on the same line as a finding, in any comment syntax, marks that
// finding Suppressed with its Reason. A marker without a reason suppresses
// nothing and is itself reported as lint-ignore-without-reason. Suppressed
// findings are still returned: a server labelling third-party skills should
// keep showing them, since the author who wrote the marker is the party
// being checked.
package lint

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Severity ranks findings. The zero value is Info.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota
	Warning
	Error
)

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// ParseSeverity parses "info", "warning" or "error" (case-insensitive).
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return Info, nil
	case "warning", "warn":
		return Warning, nil
	case "error":
		return Error, nil
	}
	return 0, fmt.Errorf("lint: unknown severity %q (want info, warning or error)", s)
}

// MarshalText encodes the severity as its String form.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a severity written by MarshalText.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// Rule describes one check.
type Rule struct {
	// ID is the stable rule identifier, such as "pipe-to-shell".
	ID string `json:"id"`
	// Title is a short phrase used as the message of its findings.
	Title string `json:"title"`
	// Explanation says in one line why the pattern is risky.
	Explanation string `json:"explanation"`
	// Fix says in one line how to resolve it.
	Fix string `json:"fix"`
	// Severity is the default severity of the rule's findings.
	Severity Severity `json:"severity"`
}

// Finding is one occurrence of a rule in a file.
type Finding struct {
	// Rule is the rule ID, such as "pipe-to-shell".
	Rule string `json:"rule"`
	// Severity is the rule's severity, or Info for a mention in cautionary
	// prose or an obvious placeholder (see the package documentation).
	Severity Severity `json:"severity"`
	// Path is the file path relative to the skill root, slash-separated;
	// "." for findings about the whole skill.
	Path string `json:"path"`
	// Line and Column are 1-based; Column counts Unicode code points (an
	// invalid byte counts as one). Both are 0 for findings about a whole
	// file or skill (a symlink, conftest.py, the file limits).
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Message says what was found, in one line.
	Message string `json:"message"`
	// Excerpt is at most 120 characters of the line around the match, with
	// control, format and invalid characters escaped and secrets redacted.
	Excerpt string `json:"excerpt,omitempty"`
	// Suppressed reports a `lint-ignore: RULE reason` marker on the line.
	Suppressed bool `json:"suppressed,omitempty"`
	// Reason is the suppression reason.
	Reason string `json:"reason,omitempty"`
	// More counts further occurrences of the same rule, severity and
	// suppression state in the same file that are not listed because of
	// MaxPerFile. It is non-zero only on the last listed one, and stops
	// growing once the rule has MaxCounted occurrences in the file.
	More int `json:"more,omitempty"`
}

// MaxPerFile caps the findings listed per rule, severity and suppression
// state in one file; the rest are counted in Finding.More.
const MaxPerFile = 10

// MaxCounted bounds the work spent on one rule in one file: after this many
// occurrences the rule stops looking, so a hostile file of repeated
// patterns costs little. Finding.More is then a lower bound.
const MaxCounted = 1000

// maxExcerpt is the length of Finding.Excerpt, in code points.
const maxExcerpt = 120

// textSniffLen is how much of a file IsText looks at.
const textSniffLen = 8 << 10

// IsText reports whether data is text, by content: the first 8 KiB hold no
// NUL byte and are valid UTF-8 (a rune cut at the 8 KiB mark is allowed) or
// at least 95% printable (Latin-1 and similar encodings). UTF-16 with a
// byte-order mark counts as text. Empty data is text.
func IsText(data []byte) bool {
	if isUTF16(data) {
		return true
	}
	head := data[:min(len(data), textSniffLen)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	valid := head
	if len(data) > textSniffLen {
		// Drop an incomplete rune cut by the sniff window.
		for back := 1; back <= 3 && back <= len(valid); back++ {
			if c := valid[len(valid)-back]; utf8.RuneStart(c) {
				if !utf8.FullRune(valid[len(valid)-back:]) {
					valid = valid[:len(valid)-back]
				}
				break
			}
		}
	}
	if utf8.Valid(valid) {
		return true
	}
	ctl := 0
	for _, c := range head {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\b' && c != 0x1b) || c == 0x7f {
			ctl++
		}
	}
	return ctl*20 <= len(head)
}

// File lints one file. path is relative to the skill root (slash-separated)
// and decides which name-based rules apply (SKILL.md, package.json,
// conftest.py, markdown or script); data is the whole content. Binary data
// ([IsText] false) gets only the rules about whole files: names, compiled
// programs and macro-enabled documents. File never panics, never modifies
// data and is safe for concurrent use. Findings are sorted by line, then
// column, then rule.
func File(path string, data []byte) []Finding {
	fs := newFileScan(path, data)
	fs.nameRules()
	fs.contentRules()
	if IsText(data) {
		if isUTF16(data) {
			fs.data = decodeUTF16(data)
		}
		fs.run()
	}
	return fs.col.result()
}

// collector gathers the findings of one file, applying the cap and the
// same-line suppression markers.
type collector struct {
	path  string
	out   []Finding
	count map[groupKey]int
	last  map[groupKey]int // index in out of the last listed finding
	total map[string]int   // occurrences per rule
}

type groupKey struct {
	rule       string
	sev        Severity
	suppressed bool
}

// add records f, filling in Path. Past MaxPerFile findings of its group it
// only counts f, on the group's last listed finding.
func (c *collector) add(f Finding) {
	f.Path = c.path
	if c.count == nil {
		c.count = map[groupKey]int{}
		c.last = map[groupKey]int{}
		c.total = map[string]int{}
	}
	c.total[f.Rule]++
	k := groupKey{f.Rule, f.Severity, f.Suppressed}
	n := c.count[k]
	c.count[k] = n + 1
	if n < MaxPerFile {
		c.last[k] = len(c.out)
		c.out = append(c.out, f)
		return
	}
	c.out[c.last[k]].More++
}

// budget returns how many more occurrences of rule are worth looking for
// (MaxCounted in all).
func (c *collector) budget(rule string) int {
	return MaxCounted - c.total[rule]
}

// full reports whether a finding of this group would only be counted.
func (c *collector) full(rule string, sev Severity, suppressed bool) bool {
	return c.count != nil && c.count[groupKey{rule, sev, suppressed}] >= MaxPerFile
}

func (c *collector) result() []Finding {
	slices.SortStableFunc(c.out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Rule, b.Rule))
	})
	return c.out
}

// marker is one lint-ignore marker on a line.
type marker struct {
	rules  []string
	reason string
	col    int // byte offset in the line
}

var markerPrefix = []byte("lint-ignore:")

// parseMarkers returns the lint-ignore markers of line.
func parseMarkers(line []byte) []marker {
	var ms []marker
	for off := 0; ; {
		i := bytes.Index(line[off:], markerPrefix)
		if i < 0 {
			return ms
		}
		start := off + i
		rest := line[start+len(markerPrefix):]
		off = start + len(markerPrefix)
		// Rule IDs: [a-z0-9-]+ separated by commas (spaces allowed around them).
		var ids []string
		j := 0
		for {
			for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
				j++
			}
			k := j
			for k < len(rest) && (rest[k] >= 'a' && rest[k] <= 'z' || rest[k] >= '0' && rest[k] <= '9' || rest[k] == '-') {
				k++
			}
			if k == j {
				break
			}
			ids = append(ids, string(rest[j:k]))
			j = k
			p := j
			for p < len(rest) && (rest[p] == ' ' || rest[p] == '\t') {
				p++
			}
			if p < len(rest) && rest[p] == ',' {
				j = p + 1
				continue
			}
			break
		}
		reason := rest[j:]
		// The reason ends at the next marker, if any.
		if n := bytes.Index(reason, markerPrefix); n >= 0 {
			reason = reason[:n]
		}
		ms = append(ms, marker{rules: ids, reason: cleanReason(reason), col: start})
	}
}

// cleanReason trims a reason and drops a trailing comment closer.
func cleanReason(b []byte) string {
	s := strings.TrimSpace(string(b))
	for _, closer := range []string{"-->", "*/", "#>", "--%>", "%>", "\"\"\"", "'''", "}}"} {
		s = strings.TrimSpace(strings.TrimSuffix(s, closer))
	}
	s = strings.TrimLeft(s, ":-–— \t")
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return ""
	}
	if len(s) > 200 {
		s = truncateRunes(s, 200)
	}
	return escapeText(s)
}

// suppression returns the reason of a marker naming rule, if any.
func suppression(ms []marker, rule string) (string, bool) {
	for _, m := range ms {
		if m.reason != "" && slices.Contains(m.rules, rule) {
			return m.reason, true
		}
	}
	return "", false
}

// excerpt returns at most maxExcerpt code points of line around [start,
// end), escaped. redact hides the matched bytes except their first few.
func excerpt(line []byte, start, end int, redact bool) string {
	start = max(0, min(start, len(line)))
	end = max(start, min(end, len(line)))
	// Work on a bounded window so a huge line costs little.
	lo := max(0, start-240)
	hi := min(len(line), max(end, start)+480)
	for lo > 0 && !utf8.RuneStart(line[lo]) && start-lo < 244 {
		lo--
	}
	var pre, match, post []byte
	pre = line[lo:start]
	match = line[start:end]
	post = line[end:hi]
	if redact && len(match) > 0 {
		keep := min(len(match), 8)
		match = append(append([]byte{}, match[:keep]...), []byte("…[redacted]")...)
	}
	p := escapeRunes(pre)
	m := escapeRunes(match)
	q := escapeRunes(post)
	if len(m) >= maxExcerpt {
		return string(append(m[:maxExcerpt-1], '…'))
	}
	// Up to 40 code points before the match (more when the rest of the
	// line is short), the rest after; "…" marks a cut.
	rest := maxExcerpt - len(m)
	preN := min(rest, max(40, rest-len(q)))
	out := make([]rune, 0, maxExcerpt)
	if lo > 0 || len(p) > preN {
		if n := min(len(p), preN); n > 0 {
			out = append(out, '…')
			out = append(out, p[len(p)-n+1:]...)
		}
	} else {
		out = append(out, p...)
	}
	out = append(out, m...)
	rest = maxExcerpt - len(out)
	if hi < len(line) || len(q) > rest {
		if n := min(len(q), rest); n > 0 {
			out = append(out, q[:n-1]...)
			out = append(out, '…')
		}
	} else {
		out = append(out, q...)
	}
	return strings.TrimSpace(string(out))
}

// escapeRunes decodes b and escapes what a terminal or a model should not
// see raw: C0/C1 controls, DEL, format characters (zero-width, bidi, tags,
// BOM), separators other than space, and invalid bytes.
func escapeRunes(b []byte) []rune {
	out := make([]rune, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			out = appendASCII(out, fmt.Sprintf(`\x%02x`, b[0]))
		case r == '\t':
			out = append(out, ' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			out = appendASCII(out, fmt.Sprintf(`\x%02x`, r))
		case unicode.Is(unicode.Cf, r) || classify(r) != clsNone || r == 0x2028 || r == 0x2029:
			if r > 0xffff {
				out = appendASCII(out, fmt.Sprintf(`\U%08x`, r))
			} else {
				out = appendASCII(out, fmt.Sprintf(`\u%04x`, r))
			}
		default:
			out = append(out, r)
		}
		b = b[n:]
	}
	return out
}

func appendASCII(out []rune, s string) []rune {
	for i := 0; i < len(s); i++ {
		out = append(out, rune(s[i]))
	}
	return out
}

// escapeText escapes a string for messages and reasons.
func escapeText(s string) string { return string(escapeRunes([]byte(s))) }

func truncateRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

func isVariationSelector(r rune) bool {
	return r >= 0xfe00 && r <= 0xfe0f || r >= 0xe0100 && r <= 0xe01ef
}
