package web

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// FormatBytes writes a size for people: "812 B", "4.2 KiB", "3.0 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// CutEscaped returns the longest prefix of s whose HTML-escaped form (as
// html/template writes text) fits in budget bytes, cut at a rune boundary,
// and whether it cut anything. A page that shows hostile text thus keeps to
// its size however many characters escaping multiplies.
func CutEscaped(s string, budget int) (string, bool) {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		size := 1
		w := 1
		switch c {
		case '<', '>':
			w = 4
		case '&', '"', '\'', '+':
			w = 5
		case 0:
			w = 3
		default:
			if c >= utf8.RuneSelf {
				_, size = utf8.DecodeRuneInString(s[i:])
				w = size
				if size == 1 { // an invalid byte, written as U+FFFD
					w = 3
				}
			}
		}
		if n+w > budget {
			return s[:i], true
		}
		n += w
		i += size
	}
	return s, false
}

// Shorten returns s cut to at most n runes, with "…" when it was cut.
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			break
		}
		b.WriteRune(r)
		n--
	}
	return b.String() + "…"
}
