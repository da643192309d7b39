package lint

// Cautionary cues, read word by word: a clause is cautionary when a cue
// word ("avoid", "unsafe", "attackers", …) or a negation governing a verb
// of running or using ("never run", "do not pipe", "never `…`") comes
// shortly before the match, or a verdict ("is dangerous", "is not
// recommended") shortly after it. "Do not forget to run" and "if it is not
// installed, run" are not cautionary: the negation governs another verb.

// cueReach is how far before a match a cue may end, in bytes.
const cueReach = 80

var (
	cueWords = wordsOf("avoid avoids avoiding unsafe insecure dangerous risky beware warning caution careful " +
		"discouraged forbid forbids forbidden prohibit prohibits prohibited refuse refuses reject rejects " +
		"block blocks blocked flag flags flagged detect detects detected catch catches malicious attack " +
		"attacks attacker attackers anti-pattern antipattern")
	// cuePairs are two-word cues, by first word.
	cuePairs = map[string]string{"instead": "of", "rather": "than", "bad": "practice", "red": "flag"}
	negation = wordsOf("never not don't dont doesn't shouldn't mustn't can't cannot")
	adverbs  = wordsOf("ever just simply blindly directly actually really even")
	runVerbs = wordsOf("run runs running pipe pipes piping use uses using execute executes executing exec " +
		"paste pasting copy type call invoke eval source trust do chain feed")
	verdictVerbs = wordsOf("is are was were be look looks seem seems")
	verdictFill  = wordsOf("considered always very really quite extremely a")
	verdicts     = wordsOf("dangerous unsafe insecure risky discouraged forbidden prohibited harmful")
	// verdictPairs are two-word verdicts, by first word.
	verdictPairs = map[string][]string{"bad": {"idea", "practice"}, "not": {"safe", "recommended", "allowed", "acceptable"}, "red": {"flag"}}
)

func wordsOf(s string) map[string]bool {
	m := map[string]bool{}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if i > start {
				m[s[start:i]] = true
			}
			start = i + 1
		}
	}
	return m
}

// cueWord is a word of a clause: folded text and where it ends.
type cueWord struct {
	w   []byte
	end int
}

// clauseWords splits b (already folded) into words of letters, digits,
// apostrophes and inner hyphens; a backtick is a word of its own, so that
// "never `" reads as a negation governing a code span. It keeps at most
// max words, the last ones.
func clauseWords(b []byte, dst []cueWord) []cueWord {
	const max = 48
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '`':
			dst = append(dst, cueWord{b[i : i+1], i + 1})
			i++
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '\'':
			j := i
			for j < len(b) && (b[j] >= 'a' && b[j] <= 'z' || b[j] >= '0' && b[j] <= '9' || b[j] == '\'' || b[j] == '-' && j+1 < len(b) && b[j+1] >= 'a' && b[j+1] <= 'z') {
				j++
			}
			dst = append(dst, cueWord{b[i:j], j})
			i = j
		default:
			i++
		}
		if len(dst) > max {
			dst = append(dst[:0], dst[1:]...)
		}
	}
	return dst
}

// cueBefore reports whether the folded text before a match holds a cue
// ending within cueReach bytes of the match.
func cueBefore(before []byte) bool {
	var buf [49]cueWord
	ws := clauseWords(before, buf[:0])
	n := len(ws)
	for i, w := range ws {
		near := len(before)-w.end <= cueReach
		next := func(k int) string {
			if i+k < n {
				return string(ws[i+k].w)
			}
			return ""
		}
		switch {
		case cueWords[string(w.w)] && near:
			return true
		case cuePairs[string(w.w)] != "" && next(1) == cuePairs[string(w.w)] && len(before)-ws[i+1].end <= cueReach:
			return true
		case isNegation(ws, i):
			if i == n-1 {
				return near // "never curl … | sh"
			}
			j := i + 1
			if adverbs[string(ws[j].w)] && j+1 < n {
				j++
			}
			if (runVerbs[string(ws[j].w)] || string(ws[j].w) == "`") && len(before)-ws[j].end <= cueReach {
				return true
			}
		case string(w.w) == "no" && i == n-1 && near:
			return true // "no `curl … | sh`"
		}
	}
	return false
}

// isNegation reports whether ws[i] negates: never, not, don't, …, and
// "nobody should", "no one should".
func isNegation(ws []cueWord, i int) bool {
	w := string(ws[i].w)
	if negation[w] {
		return true
	}
	if w != "should" || i == 0 {
		return false
	}
	p := string(ws[i-1].w)
	return p == "nobody" || p == "one" && i >= 2 && string(ws[i-2].w) == "no"
}

// cueAfter reports whether the folded text after a match holds a verdict:
// "is dangerous", "is not recommended", "considered harmful".
func cueAfter(after []byte) bool {
	var buf [49]cueWord
	ws := clauseWords(after, buf[:0])
	at := func(k int) string {
		if k < len(ws) {
			return string(ws[k].w)
		}
		return ""
	}
	for i := range ws {
		w := at(i)
		if w == "considered" && at(i+1) == "harmful" {
			return true
		}
		if !verdictVerbs[w] {
			continue
		}
		j := i + 1
		for verdictFill[at(j)] {
			j++
		}
		if verdicts[at(j)] {
			return true
		}
		for _, second := range verdictPairs[at(j)] {
			if at(j+1) == second {
				return true
			}
		}
	}
	return false
}
