package skillsext

import (
	"strconv"
	"unicode/utf8"
)

// GarbledID reports whether tok, the raw id of a JSON-RPC message, is a
// string that a decoder cannot give back as sent: invalid UTF-8, or a \u escape of a
// lone UTF-16 surrogate. Go's decoder (and so the SDK) replaces either
// with U+FFFD, so an id holding one would come back as another id: the
// front ends refuse such a request, echoing its id byte for byte.
func GarbledID(tok []byte) bool {
	if len(tok) < 2 || tok[0] != '"' {
		return false
	}
	if !utf8.Valid(tok) {
		return true
	}
	high := false // the last escape was a high surrogate, awaiting its low half
	for i := 1; i < len(tok)-1; i++ {
		if tok[i] != '\\' {
			if high {
				return true
			}
			continue
		}
		i++
		if i >= len(tok)-1 || tok[i] != 'u' {
			if high {
				return true
			}
			continue
		}
		if i+4 >= len(tok) {
			return false // malformed: json.Valid refuses it first
		}
		r, err := strconv.ParseUint(string(tok[i+1:i+5]), 16, 16)
		if err != nil {
			return false
		}
		i += 4
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if high {
				return true
			}
			high = true
		case r >= 0xdc00 && r < 0xe000:
			if !high {
				return true
			}
			high = false
		default:
			if high {
				return true
			}
		}
	}
	return high
}
