package search

import "bytes"

// stem strips common English suffixes from a lowercase ASCII word, in
// place (it may append to w's backing array). Other words are returned
// unchanged. It is deliberately light: it folds inflections (plurals,
// -ing, -ed) and a few derivations whose noun and verb appear together in
// requests ("automate"/"automation", "configure"/"configuration",
// "remind"/"reminder", "secure"/"security"), and it need only be
// consistent, since documents and queries go through the same steps. It
// is no Porter stemmer: short words are left alone, because a wrong merge
// on a three-letter stem costs more than a missed one.
func stem(w []byte) []byte {
	if len(w) < 3 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}

	// Step 1: plurals. "-es" is left to the final "e" rule, so "matches",
	// "match" and "taxes", "tax" meet without a list of sibilants.
	// Three-letter words keep their "s": "dns", "aws", "gas".
	switch {
	case hasSuffix(w, "ies") && len(w) > 4:
		w = append(w[:len(w)-3], 'y')
	case len(w) >= 4 && hasSuffix(w, "s") && !hasSuffix(w, "ss") && !hasSuffix(w, "us") && !hasSuffix(w, "is"):
		w = w[:len(w)-1]
	}

	// Step 2: -ed and -ing, when a syllable is left.
	switch {
	case hasSuffix(w, "ied") && len(w) > 4:
		w = append(w[:len(w)-3], 'y')
	case hasSuffix(w, "eed"):
		// "need", "speed", "feed": not a past tense.
	case hasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	case hasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	}

	// Step 3: derivations, twice, so that "quarterly" → "quarter" →
	// "quart" meets "quarter" → "quart".
	for range 2 {
		before := len(w)
		w = derive(w)
		if len(w) == before {
			break
		}
	}

	// Step 4: a final "e", so that "create", "creating" and "created" meet,
	// and so do "use", "uses", "used" and "using".
	if len(w) >= 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

// derivations are tried in order; the first suffix that matches with at
// least min bytes left before it is replaced.
var derivations = []struct {
	suffix, repl string
	min          int
}{
	{"ization", "iz", 3}, // organization → organiz(e)
	{"isation", "iz", 3},
	{"ational", "at", 3},   // operational → operat(e)
	{"entation", "ent", 3}, // documentation → document
	{"uration", "ur", 3},   // configuration → configur(e)
	{"ment", "", 3},        // payment → pay, engagement → engag(e)
	{"ation", "at", 3},     // automation → automat(e)
	{"ability", "abl", 3},  // availability → availabl(e)
	{"ness", "", 3},        // readiness → readi
	{"ity", "", 4},         // security → secur(e)
	{"ify", "ificat", 2},   // verify → verificat(ion)
	{"ery", "er", 3},       // recovery → recover
	{"ly", "", 4},          // monthly → month
	{"er", "", 4},          // reminder → remind
}

func derive(w []byte) []byte {
	for _, d := range derivations {
		if hasSuffix(w, d.suffix) && len(w)-len(d.suffix) >= d.min {
			w = append(w[:len(w)-len(d.suffix)], d.repl...)
			if d.suffix == "er" {
				w = undouble(w) // planner → plan
			}
			return w
		}
	}
	return w
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

// hasVowel reports whether w has a vowel and at least two bytes, which is
// what makes "used" → "us" a stem but "bed" or "string" a word.
func hasVowel(w []byte) bool {
	return len(w) >= 2 && bytes.ContainsAny(w, "aeiouy")
}

// undouble drops one of a final double consonant ("running" → "run"),
// except l, s and z ("billing" → "bill") and on short stems ("added").
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !bytes.ContainsRune([]byte("aeioulsz"), rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}
