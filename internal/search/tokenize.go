package search

import (
	"unicode"
	"unicode/utf8"
)

// maxTermLen bounds a term in bytes. Longer runs are base64, hashes or
// minified code: they never match a query and would only bloat the
// dictionary.
const maxTermLen = 64

// stopWords are dropped from documents and queries alike. The list is small
// on purpose: it holds function words, their contractions with the
// apostrophe removed ("don't" → "dont") and the filler of a spoken request
// ("I want to ..."), never a word that could name what a skill does. IDF
// already discounts common words; the list only keeps them from adding
// noise to short queries. Entries are folded but not stemmed.
var stopWords = map[string]bool{
	"a": true, "about": true, "all": true, "also": true, "an": true, "and": true, "any": true,
	"are": true, "aren": true, "as": true, "at": true, "be": true, "been": true, "but": true,
	"by": true, "can": true, "cant": true, "could": true, "couldnt": true, "did": true,
	"didnt": true, "do": true, "does": true, "doesnt": true, "dont": true, "for": true,
	"from": true, "get": true, "got": true, "had": true, "has": true, "have": true,
	"here": true, "how": true, "i": true, "if": true, "im": true, "in": true, "into": true,
	"is": true, "isnt": true, "it": true, "its": true, "ive": true, "just": true, "me": true,
	"my": true, "need": true, "of": true, "on": true, "or": true, "our": true, "please": true,
	"should": true, "shouldnt": true, "so": true, "some": true, "than": true, "that": true,
	"the": true, "their": true, "them": true, "then": true, "there": true, "theres": true,
	"these": true, "theyd": true, "theyre": true, "this": true, "those": true, "to": true,
	"too": true, "us": true, "very": true, "want": true, "was": true, "way": true, "we": true,
	"were": true, "weve": true, "what": true, "whats": true, "when": true, "where": true,
	"whether": true, "which": true, "while": true, "who": true, "will": true, "with": true,
	"wont": true, "would": true, "wouldnt": true, "you": true, "youd": true, "your": true,
	"youre": true,
}

// diacritics maps a lowercase Latin letter with a diacritic (Latin-1 and
// Latin Extended-A) to its base letters, so that "cafe" finds "Café". The
// stdlib has no Unicode normalisation; combining marks of decomposed text
// are dropped separately, in fold.
var diacritics = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae", 'ç': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ð': "d", 'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'þ': "th", 'ÿ': "y", 'ß': "ss",
	'ā': "a", 'ă': "a", 'ą': "a", 'ć': "c", 'ĉ': "c", 'ċ': "c", 'č': "c", 'ď': "d",
	'đ': "d", 'ē': "e", 'ĕ': "e", 'ė': "e", 'ę': "e", 'ě': "e", 'ĝ': "g", 'ğ': "g",
	'ġ': "g", 'ģ': "g", 'ĥ': "h", 'ħ': "h", 'ĩ': "i", 'ī': "i", 'ĭ': "i", 'į': "i",
	'ı': "i", 'ĳ': "ij", 'ĵ': "j", 'ķ': "k", 'ĺ': "l", 'ļ': "l", 'ľ': "l", 'ŀ': "l",
	'ł': "l", 'ń': "n", 'ņ': "n", 'ň': "n", 'ŉ': "n", 'ŋ': "n", 'ō': "o", 'ŏ': "o",
	'ő': "o", 'œ': "oe", 'ŕ': "r", 'ŗ': "r", 'ř': "r", 'ś': "s", 'ŝ': "s", 'ş': "s",
	'š': "s", 'ţ': "t", 'ť': "t", 'ŧ': "t", 'ũ': "u", 'ū': "u", 'ŭ': "u", 'ů': "u",
	'ű': "u", 'ų': "u", 'ŵ': "w", 'ŷ': "y", 'ź': "z", 'ż': "z", 'ž': "z", 'ſ': "s",
}

// Tokenize returns the index terms of s, in order, exactly as documents and
// queries are analysed:
//
//   - words are maximal runs of letters, digits and combining marks
//     (package unicode); everything else separates them, except that an
//     apostrophe inside a word is dropped ("don't" → "dont");
//   - letters are case folded and Latin diacritics removed ("Café" → "cafe");
//   - a word joined by '-' or '_', or written in camelCase, yields its parts
//     and then the joined form ("pdf-forms" → "pdf", "form", "pdfform"), so
//     both the parts and the whole name match; a camelCase segment of a
//     hyphenated word is joined too ("GitHub-Actions" → ..., "github",
//     "githubaction");
//   - a run of Han, Hiragana or Katakana is a part of its own; runs of three
//     or more runes also yield their overlapping bigrams, since those scripts
//     do not separate words with spaces;
//   - stop words are dropped (a joined form keeps them) and lowercase ASCII
//     words are stemmed with a light English suffix stripper;
//   - parts longer than 64 bytes are dropped.
func Tokenize(s string) []string {
	var out []string
	var a analyzer
	a.run(s, func(term []byte) { out = append(out, string(term)) })
	return out
}

// analyzer splits text into terms. Its buffers are reused between calls,
// so indexing a document allocates nothing per token; it is not safe for
// concurrent use.
type analyzer struct {
	word   []byte // folded text of the current compound word
	bounds []int  // end offsets of the parts in word
	cjk    []bool // per part: Han/Kana run
	segEnd []bool // per part: a '-' or '_' or the end of the word follows
	term   []byte // scratch for the term passed to emit

	// Of the last part seen by run (the query's prefix candidate).
	lastPart    []byte
	lastIsStop  bool
	lastIsCJK   bool
	endsInSpace bool // the text ended in a separator, not a word
}

// partKind classifies a rune inside a word, for the part boundaries.
type partKind uint8

const (
	kindOther partKind = iota // digits, marks, uncased letters
	kindLower
	kindUpper
	kindCJK
)

func kindOf(r rune) partKind {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z':
			return kindLower
		case 'A' <= r && r <= 'Z':
			return kindUpper
		}
		return kindOther
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
		return kindCJK
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return kindUpper
	case unicode.IsLower(r):
		return kindLower
	}
	return kindOther
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }
func isJoiner(r rune) bool     { return r == '-' || r == '_' }

// run analyses s and calls emit with each term. The slice passed to emit is
// only valid during the call.
func (a *analyzer) run(s string, emit func(term []byte)) {
	a.lastPart, a.lastIsStop, a.lastIsCJK = a.lastPart[:0], false, false
	a.endsInSpace = true
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		i = a.scanWord(s, i)
		a.flush(emit)
		// A word stops only at a separator or at the end of the text.
		a.endsInSpace = i < len(s)
	}
}

func mustRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// scanWord reads the compound word starting at s[i] into a.word and
// a.bounds, and returns the offset just past it.
func (a *analyzer) scanWord(s string, i int) int {
	a.word, a.bounds, a.cjk, a.segEnd = a.word[:0], a.bounds[:0], a.cjk[:0], a.segEnd[:0]
	prev := kindOther
	prevUpperRun := 0 // uppercase runes just before i, within the part
	inPart := false
	endPart := func() {
		if inPart && len(a.word) > 0 && (len(a.bounds) == 0 || a.bounds[len(a.bounds)-1] < len(a.word)) {
			a.bounds = append(a.bounds, len(a.word))
			a.cjk = append(a.cjk, prev == kindCJK)
			a.segEnd = append(a.segEnd, false)
		}
		inPart, prev, prevUpperRun = false, kindOther, 0
	}
	for i < len(s) {
		// Fast path: a lowercase letter or digit that continues a part of
		// lowercase letters and digits cannot start a new part.
		if c := s[i]; inPart && (prev == kindLower || prev == kindOther) &&
			('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			a.word = append(a.word, c)
			prev, prevUpperRun = kindLower, 0
			if c <= '9' {
				prev = kindOther
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWordRune(r):
		case (isJoiner(r) || isApostrophe(r)) && i+n < len(s) && inPart && isWordRune(mustRune(s[i+n:])):
			if isJoiner(r) {
				endPart()
				a.endSegment()
			}
			// An apostrophe is dropped and the part goes on.
			i += n
			continue
		default:
			endPart()
			a.endSegment()
			return i
		}
		k := kindOf(r)
		if inPart {
			split := false
			switch {
			case (k == kindCJK) != (prev == kindCJK):
				split = true // script change: "pdf文档"
			case k == kindUpper && prev == kindLower:
				split = true // "camelCase"
			case k == kindLower && prev == kindUpper && prevUpperRun > 1:
				// "PDFForms": the last capital starts the next part. Move
				// it over by closing the part before it.
				a.splitBefore(a.foldedLen(s, i))
			}
			if split {
				endPart()
			}
		}
		inPart = true
		a.word = fold(a.word, r)
		if k == kindUpper {
			prevUpperRun++
		} else {
			prevUpperRun = 0
		}
		prev = k
		i += n
	}
	endPart()
	a.endSegment()
	return i
}

// endSegment marks the last part as the end of a joiner-separated segment.
func (a *analyzer) endSegment() {
	if n := len(a.segEnd); n > 0 {
		a.segEnd[n-1] = true
	}
}

// foldedLen returns the length in bytes that the rune just before s[i]
// took in a.word once folded.
func (a *analyzer) foldedLen(s string, i int) int {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return len(fold(nil, r))
}

// splitBefore ends a part n bytes before the end of a.word: the capital
// that starts "Forms" in "PDFForms" belongs to the next part.
func (a *analyzer) splitBefore(n int) {
	at := len(a.word) - n
	start := 0
	if len(a.bounds) > 0 {
		start = a.bounds[len(a.bounds)-1]
	}
	if at > start {
		a.bounds = append(a.bounds, at)
		a.cjk = append(a.cjk, false)
		a.segEnd = append(a.segEnd, false)
	}
}

// fold appends r case folded, without Latin diacritics, to b.
func fold(b []byte, r rune) []byte {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(b, byte(r))
	}
	if 0x300 <= r && r <= 0x36f {
		return b // a combining diacritic of decomposed Latin text
	}
	r = caseFold(r)
	if d, ok := diacritics[r]; ok {
		return append(b, d...)
	}
	return utf8.AppendRune(b, r)
}

// caseFold maps r to lowercase through uppercase, so that the members of
// a case-folding orbit agree ('ς' and 'σ', 'ſ' and 's', the Kelvin sign and
// 'k'), as unicode.SimpleFold would group them.
func caseFold(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// flush emits the terms of the compound word in a.word.
func (a *analyzer) flush(emit func([]byte)) {
	start := 0
	for p, end := range a.bounds {
		part := a.word[start:end]
		start = end
		if len(part) > maxTermLen {
			a.lastPart = a.lastPart[:0] // nothing to complete
			continue
		}
		isCJK := a.cjk[p]
		a.lastPart = append(a.lastPart[:0], part...)
		a.lastIsCJK = isCJK
		a.lastIsStop = false
		switch {
		case isCJK:
			emit(part)
			if utf8.RuneCount(part) >= 3 {
				for i := 0; i < len(part); {
					_, n1 := utf8.DecodeRune(part[i:])
					if i+n1 >= len(part) {
						break
					}
					_, n2 := utf8.DecodeRune(part[i+n1:])
					emit(part[i : i+n1+n2])
					i += n1
				}
			}
		default:
			var term []byte
			term, a.lastIsStop = a.wordTerm(part)
			if !a.lastIsStop {
				emit(term)
			}
		}
	}
	if len(a.bounds) < 2 {
		return
	}
	// The joined form of each camelCase segment of a hyphenated word
	// ("GitHub-Actions" → "github"), then of the whole word.
	segStart, segParts := 0, 0
	for p, end := range a.bounds {
		segParts++
		if !a.segEnd[p] {
			continue
		}
		if segParts > 1 && end < len(a.word) {
			a.emitJoined(a.word[segStart:end], emit)
		}
		segStart, segParts = end, 0
	}
	a.emitJoined(a.word, emit)
}

// wordTerm returns the term of a folded part, or reports that it is a
// stop word.
func (a *analyzer) wordTerm(part []byte) (term []byte, stop bool) {
	if stopWords[string(part)] {
		return nil, true
	}
	a.term = stem(append(a.term[:0], part...))
	return a.term, false
}

func (a *analyzer) emitJoined(w []byte, emit func([]byte)) {
	if len(w) <= maxTermLen {
		a.term = stem(append(a.term[:0], w...))
		emit(a.term)
	}
}
