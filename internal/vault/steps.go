package vault

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Step is one parsed step of a playbook.
type Step struct {
	// N is the item's number as written ("3." gives 3). For a step read
	// from a "Phase N" or "Step N" heading it is that N, or the step's
	// position when the heading says 0. It is always at least 1.
	N int `json:"n"`
	// Skill is the step's skill name: the head when it names a skill,
	// else the first served skill the step links to.
	Skill string `json:"skill,omitempty"`
	// Route is the route of a "skill (route)" head.
	Route string `json:"route,omitempty"`
	// Playbook is the target of a [[Playbook]] head that does not name a
	// served skill, as written (alias and #heading dropped).
	Playbook string `json:"playbook,omitempty"`
	// Script is the file of a "script:file.py" head.
	Script string `json:"script,omitempty"`
	// Mentions are the other served skills the step links to, in order of
	// first link, without duplicates and without Skill.
	Mentions []string `json:"mentions,omitempty"`
	// Action is the step's text after the head and arrow: the item's first
	// paragraph with the actor parenthesis removed and whitespace collapsed.
	// It never holds a line break.
	Action string `json:"action"`
	// Actor says who performs the step: AGENT, HUMAN, AUTO, MANUAL, BOTH or
	// a combination such as "HUMAN + AGENT", or a note that starts with one
	// of them as written ("HUMAN, 5 min").
	Actor string `json:"actor,omitempty"`
}

// ParseSteps reads the steps of a playbook note body (frontmatter already
// removed). served reports whether a name is a skill served by the library;
// it decides whether a [[name]] head or link is a skill. A nil served
// serves nothing.
//
// The steps are the numbered items of the "## Steps" section. Without such
// a section, or when it holds no numbered item, the "Phase N" / "Step N"
// headings (levels 2 to 4) are the steps, and without those, every
// numbered line of the body outside code fences. The result is never nil.
//
// Grammar choices where the specification is silent:
//   - The section heading is "Steps" at level 2, any case, with an
//     optional trailing colon; the first such heading is the one read.
//   - A numbered line starts a new item when it is indented no more than
//     the current item's number, or, with no current item, by at most
//     three columns (more is a code block). Deeper numbered lines belong
//     to the current item, even when a long "3 (T-1)." marker puts its
//     text further right than theirs. Tabs count as four columns. "0."
//     and numbers of ten or more digits are not items.
//   - A recognised head (skill, skill (route), [[link]], script:file) is
//     removed from the action. When the text before the arrow is free text
//     it is kept, arrow included, as part of the action, so nothing the
//     author wrote is lost. Without an arrow, a lead that is only a
//     [[link]] or script:file (plus an actor) is a head with an empty
//     action; a bare word is not a head.
//   - [[folder/SKILL.md]] as a head names the skill "folder" even when it
//     is not served, since it plainly points at a skill.
//   - An actor parenthesis made only of actor words is recognised in any
//     case ("(agent)" gives AGENT) when it ends a paragraph; elsewhere, and
//     for an actor word followed by a note, the actor word must be written
//     in capitals, so "(both files)" or "(manual steps)" in prose are not
//     actors.
//   - "Phase N" headings: the level of the first one fixes the level of
//     the others; a step runs to the next heading of that level or higher.
//     The heading's title is the lead; the paragraphs under it are the
//     later paragraphs.
func ParseSteps(body string, served func(name string) bool) []Step {
	if served == nil {
		served = func(string) bool { return false }
	}
	d := scanDoc(body)
	if s, e, ok := d.stepsSection(); ok {
		if steps := d.itemSteps(s, e, served); len(steps) > 0 {
			return steps
		}
	}
	if steps := d.headingSteps(served); len(steps) > 0 {
		return steps
	}
	if steps := d.itemSteps(0, len(d.lines), served); len(steps) > 0 {
		return steps
	}
	return []Step{}
}

// Line kinds in doc.meta: the heading level (1 to 6) in the low bits, or
// metaFence for a line that belongs to a fenced code block.
const (
	metaLevel = 7
	metaFence = 8
)

// doc is a body split into lines, with what each line is.
type doc struct {
	lines []string
	meta  []uint8
}

// scanDoc splits body into lines (LF or CRLF) and marks headings and
// fenced lines.
func scanDoc(body string) doc {
	lines := strings.Split(normalizeNewlines(body), "\n")
	meta := make([]uint8, len(lines))
	var f fence
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		lines[i] = l
		if f.step(l) {
			meta[i] = metaFence
			continue
		}
		if lv, _ := headingOf(l); lv > 0 {
			meta[i] = uint8(lv)
		}
	}
	return doc{lines, meta}
}

// level returns the heading level of line i, 0 if it is no heading.
func (d doc) level(i int) int {
	if d.meta[i]&metaFence != 0 {
		return 0
	}
	return int(d.meta[i] & metaLevel)
}

// stepsSection returns the lines of the first "## Steps" section, heading
// excluded, up to the next heading of level 1 or 2.
func (d doc) stepsSection() (start, end int, ok bool) {
	for i := range d.lines {
		if d.level(i) != 2 {
			continue
		}
		_, text := headingOf(d.lines[i])
		text = strings.TrimSuffix(strings.Trim(text, "*_ \t"), ":")
		if !strings.EqualFold(strings.TrimSpace(text), "steps") {
			continue
		}
		end = i + 1
		for end < len(d.lines) && (d.level(end) == 0 || d.level(end) > 2) {
			end++
		}
		return i + 1, end, true
	}
	return 0, 0, false
}

// itemSteps parses the numbered items of lines [s, e). Headings end the
// current item; lines in code fences are never items.
func (d doc) itemSteps(s, e int, served func(string) bool) []Step {
	type item struct {
		n        int
		first    string
		from, to int
	}
	var items []item
	cur, curIndent := -1, 0
	for i := s; i < e; i++ {
		if d.meta[i]&metaFence != 0 {
			if cur >= 0 {
				items[cur].to = i + 1
			}
			continue
		}
		if d.meta[i] != 0 {
			cur = -1
			continue
		}
		n, indent, text, ok := matchItem(d.lines[i])
		if ok && (cur < 0 && indent <= 3 || cur >= 0 && indent <= curIndent) {
			items = append(items, item{n, text, i + 1, i + 1})
			cur, curIndent = len(items)-1, indent
			continue
		}
		if cur >= 0 {
			items[cur].to = i + 1
		}
	}
	steps := make([]Step, 0, len(items))
	for _, it := range items {
		steps = append(steps, d.buildStep(it.n, it.first, it.from, it.to, false, served))
	}
	return steps
}

// matchItem parses a numbered list line: indentation, the number, an
// optional parenthesised countdown, "." or ")", then the text. indent is
// in columns (tabs stop every four columns).
func matchItem(line string) (n, indent int, text string, ok bool) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		if line[i] == '\t' {
			indent += 4 - indent%4
		} else {
			indent++
		}
		i++
	}
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i || j-i > 9 {
		return 0, 0, "", false
	}
	n, _ = strconv.Atoi(line[i:j])
	if n <= 0 {
		return 0, 0, "", false
	}
	k := j
	t := k
	for t < len(line) && (line[t] == ' ' || line[t] == '\t') {
		t++
	}
	if t < len(line) && line[t] == '(' {
		if c := strings.IndexAny(line[t+1:], "()"); c >= 0 && line[t+1+c] == ')' {
			k = t + 1 + c + 1
		}
	}
	if k >= len(line) || line[k] != '.' && line[k] != ')' {
		return 0, 0, "", false
	}
	k++
	if k < len(line) && line[k] != ' ' && line[k] != '\t' {
		return 0, 0, "", false
	}
	return n, indent, strings.TrimSpace(line[k:]), true
}

// phaseRe matches the text of a "Phase N" / "Step N" heading; group 2 is
// what follows the number.
var phaseRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(?:phase|step)[ \t]+([0-9]{1,9})\b(.*)$`) })

// headingSteps reads the "Phase N" / "Step N" headings of levels 2 to 4
// as steps. The first such heading fixes the level.
func (d doc) headingSteps(served func(string) bool) []Step {
	type hs struct {
		i, n  int
		title string
	}
	var found []hs
	level := 0
	for i := range d.lines {
		lv := d.level(i)
		if lv < 2 || lv > 4 || level != 0 && lv != level {
			continue
		}
		_, text := headingOf(d.lines[i])
		m := phaseRe().FindStringSubmatch(strings.Trim(text, "*_` \t"))
		if m == nil {
			continue
		}
		level = lv
		n, _ := strconv.Atoi(m[1])
		title := strings.TrimLeft(m[2], " \t:.)—–-")
		found = append(found, hs{i, n, strings.TrimSpace(strings.Trim(title, "*_ \t"))})
	}
	steps := make([]Step, 0, len(found))
	for k, h := range found {
		end := h.i + 1
		for end < len(d.lines) && (d.level(end) == 0 || d.level(end) > level) {
			end++
		}
		n := h.n
		if n == 0 {
			n = k + 1
		}
		steps = append(steps, d.buildStep(n, h.title, h.i+1, end, true, served))
	}
	return steps
}

// buildStep makes a step from its first text (the item line after the
// number, or a heading's title) and its following lines [from, to).
// titleOnly says that first alone is the lead (a heading title).
func (d doc) buildStep(n int, first string, from, to int, titleOnly bool, served func(string) bool) Step {
	lines, meta := d.lines[from:to], d.meta[from:to]
	lead, after := leadOf(first, lines, meta, titleOnly)

	st := Step{N: n}
	var hd head
	action := lead
	arrow := false
	if i, w := arrowIndex(lead); i >= 0 {
		arrow = true
		if h := parseHead(lead[:i], served); h.kind != headFree {
			hd, action = h, lead[i+w:]
		}
	}
	actor, rest := findActor(action)
	if actor == "" {
		actor = laterActor(lines[after:], meta[after:])
	}
	action = tidyAction(rest)
	if !arrow {
		if h := parseHead(action, served); h.kind == headLink || h.kind == headPlaybook || h.kind == headScript {
			hd, action = h, ""
		}
	}
	st.Skill, st.Route, st.Playbook, st.Script = hd.skill, hd.route, hd.playbook, hd.script
	st.Action, st.Actor = action, actor

	var linked []string
	var seen map[string]bool // made on the first line that may hold a link
	for i := -1; i < len(lines); i++ {
		l := first
		if i >= 0 {
			l = lines[i]
		}
		if seen == nil {
			if !mayLink(l) {
				continue
			}
			seen = map[string]bool{st.Skill: true}
		}
		linked = linkedSkills(l, served, seen, linked)
	}
	if st.Skill == "" && len(linked) > 0 {
		st.Skill, linked = linked[0], linked[1:]
	}
	if len(linked) > 0 {
		st.Mentions = linked
	}
	return st
}

// leadOf returns the first paragraph of a step and the index of the first
// line after it. The paragraph starts with first (or, when first is empty,
// at the first non-blank line) and stops at a blank line, a list item, a
// fence, a table row, a quote or a heading.
func leadOf(first string, lines []string, meta []uint8, titleOnly bool) (string, int) {
	first = strings.TrimSpace(first)
	var parts []string
	i := 0
	if first != "" {
		if titleOnly {
			return first, 0
		}
		parts = append(parts, first)
	} else {
		for i < len(lines) && meta[i] == 0 && strings.TrimSpace(lines[i]) == "" {
			i++
		}
	}
	for ; i < len(lines); i++ {
		if meta[i] != 0 || breaksParagraph(strings.TrimSpace(lines[i])) {
			break
		}
		parts = append(parts, strings.TrimSpace(lines[i]))
	}
	return strings.Join(parts, " "), i
}

// breaksParagraph reports whether a trimmed line cannot continue a
// paragraph: blank, a list item, a table row or a quote.
func breaksParagraph(t string) bool {
	return t == "" || t[0] == '|' || t[0] == '>' || listItem(t)
}

// listItem reports whether a trimmed line starts a bulleted or numbered
// list item.
func listItem(t string) bool {
	if t == "" {
		return false
	}
	if t[0] == '-' || t[0] == '*' || t[0] == '+' {
		return len(t) == 1 || t[1] == ' ' || t[1] == '\t'
	}
	_, _, _, ok := matchItem(t)
	return ok
}

// stripListMarker removes the bullet or number of a trimmed list item.
func stripListMarker(t string) string {
	if t[0] == '-' || t[0] == '*' || t[0] == '+' {
		return strings.TrimSpace(t[1:])
	}
	if _, _, text, ok := matchItem(t); ok {
		return text
	}
	return t
}

// arrowIndex returns the position and byte width of the first "→" or "->"
// in s, or -1.
func arrowIndex(s string) (int, int) {
	a, b := strings.Index(s, "→"), strings.Index(s, "->")
	switch {
	case a >= 0 && (b < 0 || a < b):
		return a, len("→")
	case b >= 0:
		return b, 2
	}
	return -1, 0
}

// headKind says what a step's head names.
type headKind int

const (
	headFree     headKind = iota // free text: no skill
	headName                     // a bare skill name
	headLink                     // a [[link]] to a served skill or to a SKILL.md
	headPlaybook                 // a [[link]] to anything else
	headScript                   // script:file
)

// head is a parsed step head.
type head struct {
	kind                           headKind
	skill, route, playbook, script string
}

// stripDeco removes bold, italic, underscore and backtick decoration and
// white space (any, not only blanks and tabs) around s.
func stripDeco(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return r == '*' || r == '_' || r == '`' || unicode.IsSpace(r)
	})
}

// parseHead reads the text before a step's arrow.
func parseHead(raw string, served func(string) bool) head {
	s := stripDeco(raw)
	if len(s) >= 7 && strings.EqualFold(s[:7], "script:") {
		if f := stripDeco(s[7:]); f != "" {
			return head{kind: headScript, script: f}
		}
		return head{}
	}
	name, route := s, ""
	if strings.HasSuffix(s, ")") {
		if i := matchOpen(s, len(s)-1); i > 0 {
			name = stripDeco(s[:i])
			route = strings.Join(strings.Fields(stripDeco(s[i+1:len(s)-1])), " ")
		}
	}
	if inner, ok := wikiOnly(name); ok {
		t := linkTarget(inner)
		if folder, isMD := skillMDFolder(t); isMD {
			if validSkillName(folder) {
				return head{kind: headLink, skill: folder, route: route}
			}
			return head{}
		}
		if t == "" {
			return head{}
		}
		if served(t) {
			return head{kind: headLink, skill: t, route: route}
		}
		return head{kind: headPlaybook, playbook: t}
	}
	if validSkillName(name) {
		return head{kind: headName, skill: name, route: route}
	}
	return head{}
}

// wikiOnly reports whether s is exactly one [[wiki link]] and returns the
// text between its brackets.
func wikiOnly(s string) (string, bool) {
	if len(s) < 4 || !strings.HasPrefix(s, "[[") || !strings.HasSuffix(s, "]]") {
		return "", false
	}
	inner := s[2 : len(s)-2]
	if strings.Contains(inner, "[[") || strings.Contains(inner, "]]") {
		return "", false
	}
	return inner, true
}

// matchOpen returns the index of the "(" that the ")" at close closes, or
// -1.
func matchOpen(s string, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// parenRe matches a parenthesis without nested parentheses.
var parenRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\([^()]*\)`) })

// findActor finds the actor parenthesis of a lead: the one ending it, else
// the first one anywhere in it. It returns the actor and the lead without
// that parenthesis.
func findActor(s string) (actor, rest string) {
	if inner, start, end, ok := trailingParen(s); ok {
		if a := actorOf(inner, true); a != "" {
			// A full stop after the actor goes with it; emphasis markers
			// stay, so that tidyAction can balance them.
			return a, s[:start] + strings.TrimLeft(s[end:], ".;")
		}
	}
	if !strings.Contains(s, "(") {
		return "", s
	}
	for _, m := range parenRe().FindAllStringIndex(s, -1) {
		if a := actorOf(s[m[0]+1:m[1]-1], false); a != "" {
			return a, s[:m[0]] + " " + s[m[1]:]
		}
	}
	return "", s
}

// trailingParen finds the parenthesis that ends s, ignoring trailing
// spaces, emphasis markers and a full stop or semicolon ("(AGENT)." and
// "**... (HUMAN)**" both end with their actor), and returns its inside and
// its span.
func trailingParen(s string) (inner string, start, end int, ok bool) {
	end = len(s)
	for end > 0 && strings.IndexByte(" \t*_.;", s[end-1]) >= 0 {
		end--
	}
	if end == 0 || s[end-1] != ')' {
		return "", 0, 0, false
	}
	start = matchOpen(s, end-1)
	if start < 0 {
		return "", 0, 0, false
	}
	return s[start+1 : end-1], start, end, true
}

// laterActor returns the actor of the first later paragraph of a step (one
// after its lead) that ends with an actor parenthesis. List items start
// paragraphs; fences, tables, quotes and headings are not paragraphs.
func laterActor(lines []string, meta []uint8) string {
	var cur []string
	check := func() string {
		if len(cur) == 0 {
			return ""
		}
		p := strings.Join(cur, " ")
		cur = cur[:0]
		if inner, _, _, ok := trailingParen(p); ok {
			return actorOf(inner, true)
		}
		return ""
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case meta[i] != 0 || t == "" || t[0] == '|' || t[0] == '>':
			if a := check(); a != "" {
				return a
			}
		case listItem(t):
			if a := check(); a != "" {
				return a
			}
			cur = append(cur, stripListMarker(t))
		default:
			cur = append(cur, t)
		}
	}
	return check()
}

// actorWords are the words an actor is made of.
var actorWords = []string{"AGENT", "HUMAN", "AUTO", "MANUAL", "BOTH"}

// actorOf returns the actor that the inside of a parenthesis declares, or
// "". A list of actor words joined by "+", "/", "&" or "," is upper-cased
// and its spacing normalised; it may be written in any case when trailing
// is true. Otherwise an inside that starts with a capitalised actor word
// followed by a note is returned as written, whitespace collapsed.
func actorOf(inner string, trailing bool) string {
	in := strings.TrimSpace(inner)
	if in == "" {
		return ""
	}
	if a := actorList(in, trailing); a != "" {
		return a
	}
	for _, w := range actorWords {
		if strings.HasPrefix(in, w) && len(in) > len(w) && !isLetter(in[len(w)]) {
			return strings.Join(strings.Fields(in), " ")
		}
	}
	return ""
}

// actorList parses "HUMAN + AGENT" and the like; anyCase accepts "human".
func actorList(in string, anyCase bool) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(in); i++ {
		if i < len(in) && strings.IndexByte("+/&,", in[i]) < 0 {
			continue
		}
		word := strings.TrimSpace(in[start:i])
		ok := false
		for _, w := range actorWords {
			if word == w || anyCase && strings.EqualFold(word, w) {
				ok = true
				break
			}
		}
		if !ok {
			return ""
		}
		b.WriteString(strings.ToUpper(word))
		if i < len(in) {
			if in[i] == ',' {
				b.WriteString(", ")
			} else {
				b.WriteByte(' ')
				b.WriteByte(in[i])
				b.WriteByte(' ')
			}
		}
		start = i + 1
	}
	return b.String()
}

// isLetter reports whether b is an ASCII letter.
func isLetter(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// tidyAction collapses whitespace, drops a dash left dangling where the
// actor was ("Draft it — (AGENT)"), and removes bold markers around the
// whole action or left unbalanced by the head split.
func tidyAction(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for {
		t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, " —"), " –"), " -")
		if t == s {
			break
		}
		s = t
	}
	if s == "—" || s == "–" || s == "-" {
		s = ""
	}
	if strings.Count(s, "**")%2 == 1 {
		if strings.HasSuffix(s, "**") {
			s = strings.TrimSpace(s[:len(s)-2])
		} else if strings.HasPrefix(s, "**") {
			s = strings.TrimSpace(s[2:])
		}
	}
	if len(s) >= 4 && strings.HasPrefix(s, "**") && strings.HasSuffix(s, "**") && !strings.Contains(s[2:len(s)-2], "**") {
		s = strings.TrimSpace(s[2 : len(s)-2])
	}
	return s
}
