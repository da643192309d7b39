package lint

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Hidden text: invisible characters, Unicode tags, bidi controls, HTML
// comments in markdown, and prompt-injection phrasing.

type charClass int

const (
	clsNone charClass = iota
	clsInvisible
	clsTag
	clsBidi
	clsVS
)

func classify(r rune) charClass {
	switch {
	case r == 0xad || r >= 0x200b && r <= 0x200d || r >= 0x2060 && r <= 0x2064 || r == 0xfeff:
		return clsInvisible
	case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return clsBidi
	case r >= 0xe0000 && r <= 0xe007f:
		return clsTag
	case isVariationSelector(r):
		return clsVS
	}
	return clsNone
}

// unicodeChars reports invisible, tag and bidi characters in u, and
// returns u without them (so the other rules see the words a model reads),
// or nil when nothing was removed.
func (s *fileScan) unicodeChars(u *unit) *unit {
	t := u.t
	var clean []byte
	var pos []int
	removed := false
	defer func() {
		if removed {
			s.cleanBuf, s.posBuf = clean[:0], pos[:0] // reuse for the next line
		}
	}()
	prev := rune(-1)
	for i := 0; i < len(t); {
		c := t[i]
		if c < 0x80 {
			if removed {
				clean = append(clean, c)
				pos = append(pos, u.lineOffset(i))
			}
			prev = rune(c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(t[i:])
		cls := classify(r)
		if cls == clsNone {
			if removed {
				clean = append(clean, t[i:i+n]...)
				for k := range n {
					pos = append(pos, u.lineOffset(i+k))
				}
			}
			prev = r
			i += n
			continue
		}
		// A run of one class.
		j, count := i, 0
		var tags []byte
		for j < len(t) {
			r2, n2 := utf8.DecodeRune(t[j:])
			if classify(r2) != cls {
				break
			}
			if cls == clsTag && r2 >= 0xe0020 && r2 <= 0xe007e && len(tags) < 80 {
				tags = append(tags, byte(r2-0xe0000))
			}
			count++
			j += n2
		}
		next := rune(-1)
		if j < len(t) {
			next, _ = utf8.DecodeRune(t[j:])
		}
		s.reportRun(u, cls, r, i, j, count, prev, next, tags)
		if !removed {
			removed = true
			clean = append(s.cleanBuf[:0], t[:i]...)
			pos = s.posBuf[:0]
			for k := range i {
				pos = append(pos, u.lineOffset(k))
			}
		}
		i = j
	}
	if !removed {
		return nil
	}
	return &unit{t: clean, pos: pos, ownEnd: u.ownEnd, segs: u.segs, lineCtx: u.lineCtx}
}

// reportRun reports one run of count characters of class cls at t[i:j],
// unless it is a legitimate use: a BOM, an emoji ZWJ sequence, a joiner in
// a script that needs it, a tag sequence of a flag emoji, or a single
// variation selector.
func (s *fileScan) reportRun(u *unit, cls charClass, first rune, i, j, count int, prev, next rune, tags []byte) {
	rule := RuleInvisibleChar
	switch cls {
	case clsBidi:
		rule = RuleBidiControl
	case clsTag:
		rule = RuleUnicodeTag
	}
	if s.col.budget(rule) <= 0 {
		return
	}
	switch cls {
	case clsInvisible:
		switch {
		case first == 0xfeff && s.cur.off == 0 && u.lineOffset(i) == 0:
			return // a byte-order mark
		case count == 1 && first == 0x200d && isEmojiish(prev) && isEmojiish(next):
			return
		case count == 1 && (first == 0x200c || first == 0x200d) && (isJoiningScript(prev) || isJoiningScript(next)):
			return
		case count == 1 && first == 0x200b && (isNoSpaceScript(prev) || isNoSpaceScript(next)):
			return
		}
		msg := fmt.Sprintf("invisible character U+%04X", first)
		if count > 1 {
			msg = fmt.Sprintf("%d invisible characters (U+%04X…)", count, first)
		}
		s.emit(u, RuleInvisibleChar, Warning, i, j, msg)
	case clsVS:
		if count < 2 {
			return
		}
		s.emit(u, RuleInvisibleChar, Warning, i, j, fmt.Sprintf("%d variation selectors in a row can carry hidden data", count))
	case clsBidi:
		s.emit(u, RuleBidiControl, Warning, i, j, fmt.Sprintf("bidirectional control U+%04X", first))
	case clsTag:
		if prev == 0x1f3f4 && bytes.HasSuffix(u.t[i:j], []byte("\U000e007f")) && count <= 8 {
			return // a subdivision flag such as England's
		}
		msg := fmt.Sprintf("%d Unicode tag characters", count)
		if len(tags) > 0 {
			msg += fmt.Sprintf(" hiding the text %q", escapeText(truncateRunes(string(tags), 60)))
		}
		s.emit(u, RuleUnicodeTag, Error, i, j, msg)
	}
}

func isEmojiish(r rune) bool {
	return r >= 0x1f000 && r <= 0x1faff || r >= 0x2600 && r <= 0x27bf || r == 0xfe0f || r == 0x2640 || r == 0x2642 || r == 0x2695 || r == 0x2708 || r == 0x2764
}

// isJoiningScript reports scripts whose orthography uses ZWJ/ZWNJ.
func isJoiningScript(r rune) bool {
	return r >= 0x0600 && r <= 0x08ff || r >= 0x0900 && r <= 0x0dff || r >= 0x0f00 && r <= 0x0fff ||
		r >= 0x1000 && r <= 0x109f || r >= 0x1780 && r <= 0x17ff || r >= 0xa8e0 && r <= 0xa8ff ||
		r >= 0xfb50 && r <= 0xfdff || r >= 0xfe70 && r <= 0xfefe
}

// isNoSpaceScript reports scripts written without spaces, where U+200B
// marks word breaks.
func isNoSpaceScript(r rune) bool {
	return r >= 0x0e00 && r <= 0x0eff || r >= 0x1000 && r <= 0x109f || r >= 0x1780 && r <= 0x17ff ||
		r >= 0x3000 && r <= 0x9fff || r >= 0xac00 && r <= 0xd7af || r >= 0xf900 && r <= 0xfaff
}

// HTML comments.

// maxCommentRunes is the longest comment reported only for its length.
const maxCommentRunes = 200

var (
	reCommentCue = ci(`\b(?:ignore|disregard|system\s+prompt|assistant|you\s+(?:must|should|will|are|need\s+to|have\s+to)|(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show)|instructions?|agents?|llms?|claude|gpt|chatgpt|gemini|copilot|ai|language\s+model|secretly|exfiltrat\w*|curl|wget|iwr|powershell|bash\s+-c|execute|run\s+(?:the|this)\s+(?:command|script)|send\s+(?:the|all|your|it|them)\b)`)
	reDirective  = ci(`^(?:markdownlint|prettier|toc|/?toc|cspell|spell-?checker|vale|textlint|alex|eslint|lint-ignore|omit\s+in\s+toc|more|truncate|end\s*)`)
)

// closeComment evaluates the comment that started at s.cmtOff and ends at
// data offset end ("-->"), or at the end of the file when end < 0.
func (s *fileScan) closeComment(end int) {
	s.inComment = false
	unterminated := end < 0
	if unterminated {
		end = len(s.data)
	}
	bodyStart := min(s.cmtOff+4, end)
	body := bytes.TrimSpace(s.data[bodyStart:end])
	if len(body) == 0 {
		return
	}
	head := body[:min(len(body), 4<<10)]
	var cue []byte
	if loc := reCommentCue.find(s, head); loc != nil {
		cue = head[loc[0]:loc[1]]
	}
	long := utf8.RuneCount(body[:min(len(body), 4*(maxCommentRunes+1))]) > maxCommentRunes
	var msg string
	switch {
	case unterminated:
		msg = "unterminated HTML comment hides the rest of the file"
	case cue != nil:
		msg = fmt.Sprintf("hidden HTML comment with instruction-like text (%q)", escapeText(truncateRunes(string(cue), 40)))
	case long && !reDirective.match(s, body):
		msg = fmt.Sprintf("hidden HTML comment longer than %d characters", maxCommentRunes)
	default:
		return
	}
	// Report at the "<!--", on the line that holds it.
	lineEnd := bytes.IndexByte(s.data[s.cmtLineOff:], '\n')
	if lineEnd < 0 {
		lineEnd = len(s.data) - s.cmtLineOff
	}
	text := s.data[s.cmtLineOff : s.cmtLineOff+lineEnd]
	text = bytes.TrimSuffix(text, []byte("\r"))
	saved := s.cur
	if s.cmtLine != s.cur.no {
		s.cur = lineRef{no: s.cmtLine, off: s.cmtLineOff, text: text}
	}
	s.emitLine(RuleHiddenComment, Warning, s.cmtColBytes, s.cmtColBytes+4, msg, false)
	s.cur = saved
}

// Prompt injection.

var reInjection = []gated{
	// ignore/disregard/forget … previous/prior/above/system … instructions
	{all: bOverride, re: ci(`\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the|your|my|these|those|every|each)\s+){0,3}(?:previous|prior|earlier|above|preceding|foregoing|original|initial|system|developer|safety)\s+(?:\w+\s+)?(?:instructions?|prompts?|directives?|directions|guidelines|guardrails|rules|messages|context|constraints|polic(?:y|ies)|restrictions|commands)\b`)},
	{all: bPrompt, re: ci(`\b(?:disregard|ignore|forget|override|reveal|print|leak|output|repeat|dump)\s+(?:(?:the|your|this|its)\s+)?system\s+prompt\b`)},
	{all: bYou, words: [][]string{{"now", "longer"}}, re: ci(`\byou\s+are\s+(?:now|no\s+longer)\s+(?:(?:a|an|in|the)\s+)?(?:dan\b|do\s+anything\s+now|unrestricted|unfiltered|uncensored|jailbroken|evil|free\s+(?:from|of)|(?:developer|god|admin|jailbreak|unrestricted|dan)\s+mode|bound\s+by|restricted|limited\s+by|an?\s+ai\s+without)`)},
	{all: bUser, words: [][]string{{"not", "never", "don't", "dont"}, {"tell", "inform", "notif", "mention", "reveal"}}, re: ci(`\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:tell|inform|notify|mention\s+(?:this|it|that|anything)\s+to|reveal\s+(?:this|it|that)\s+to)\s+(?:the\s+)?user\b`)},
	{all: bUser, words: [][]string{{"without"}}, re: ci(`\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+)?user\b`)},
	{all: bUser, words: [][]string{{"hide", "conceal", "keep"}}, re: ci(`\b(?:hide|conceal|keep)\s+(?:this|it|that|these|them)\s+(?:secret\s+)?from\s+(?:the\s+)?user\b`)},
	{all: bSecretly, re: ci(`\bsecretly\s+(?:send|upload|post|transmit|exfiltrate|copy|forward|run|execute|install|read|collect)\b`)},
	{all: bChatTok, re: ci(`<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?INST\]|<</?SYS>>`)},
}

func (s *fileScan) promptInjection(u *unit, m family) {
	var seen [][]int
	s.findAll(RulePromptInjection, reInjection, u, m, func(loc []int) {
		for _, o := range seen {
			if loc[0] < o[1] && o[0] < loc[1] {
				return // one phrase matched by two patterns
			}
		}
		seen = append(seen, loc)
		s.emit(u, RulePromptInjection, Error, loc[0], loc[1], "")
	})
}

// inlineExec reports !`command` in markdown prose: the "!" right before a
// code span.
func (s *fileScan) inlineExec(u *unit) {
	for _, sg := range u.segs {
		if sg.kind == segSpan && sg.start > 0 && s.cur.text[sg.start-1] == '!' && u.ctxAt(sg.start) == ctxProse {
			cmd := strings.Trim(string(s.cur.text[sg.start:sg.end]), "` ")
			s.emitLine(RuleInlineExec, Warning, sg.start-1, sg.end,
				fmt.Sprintf("!`%s` asks the host to run a command while loading the skill", escapeText(truncateRunes(cmd, 40))), false)
		}
	}
}
