package server

import (
	"slices"
	"unicode/utf8"
)

// appendJSONString appends src as encoding/json encodes a string by default
// (HTML characters and U+2028/U+2029 escaped, invalid UTF-8 as U+FFFD), byte
// for byte, growing dst once to the encoding's length. The front end
// writes a file's text this way: json.Marshal(string(data)) would make two
// more copies of a file of megabytes (the string and the encoding) before
// appending it.
func appendJSONString(dst, src []byte) []byte {
	dst = slices.Grow(dst, jsonStringLen(src))
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			if jsonSafe(b) {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(src[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, src[start:]...)
	return append(dst, '"')
}

// jsonStringLen is the length of appendJSONString's encoding of src.
func jsonStringLen(src []byte) int {
	n := 2
	for i := 0; i < len(src); {
		if b := src[i]; b < utf8.RuneSelf {
			switch {
			case jsonSafe(b):
				n++
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		c, size := utf8.DecodeRune(src[i:])
		if c == utf8.RuneError && size == 1 || c == '\u2028' || c == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// jsonSafe reports whether encoding/json writes the ASCII byte b as it is
// with HTML escaping on: not a control character (DEL is written as it
// is), and none of " \ < > &.
func jsonSafe(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}

const hexDigits = "0123456789abcdef"
