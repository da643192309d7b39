package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// The raw client reads skills/list answers with a skimmer instead of
// encoding/json: it finds where each value starts and ends (strings by a
// vectorised search for their closing quote) without decoding it, so that
// the client's CPU during a listing stays small next to the server's. What
// it slices out is checked by encoding/json after the timed part (see
// parseEntries), and anything it cannot place fails the run.

var errSkim = errors.New("not a JSON value where one was expected")

// skipSpace returns b without leading JSON white space.
func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// skipString returns the length of the JSON string at the start of b,
// quotes included.
func skipString(b []byte) (int, error) {
	for i := 1; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errSkim
		}
		end := i + j
		backslashes := 0
		for k := end - 1; k >= i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return end + 1, nil
		}
		i = end + 1
	}
}

// skipValue splits the JSON value at the start of b (after white space)
// from what follows it.
func skipValue(b []byte) (val, rest []byte, err error) {
	b = skipSpace(b)
	if len(b) == 0 {
		return nil, nil, errSkim
	}
	switch b[0] {
	case '"':
		n, err := skipString(b)
		if err != nil {
			return nil, nil, err
		}
		return b[:n], b[n:], nil
	case '{', '[':
		closers := make([]byte, 0, 16)
		for i := 0; i < len(b); {
			switch c := b[i]; c {
			case '"':
				n, err := skipString(b[i:])
				if err != nil {
					return nil, nil, err
				}
				i += n
			case '{':
				closers = append(closers, '}')
				i++
			case '[':
				closers = append(closers, ']')
				i++
			case '}', ']':
				if len(closers) == 0 || closers[len(closers)-1] != c {
					return nil, nil, errSkim
				}
				closers = closers[:len(closers)-1]
				i++
				if len(closers) == 0 {
					return b[:i], b[i:], nil
				}
			default:
				i++
			}
		}
		return nil, nil, errSkim
	}
	i := 0
scalar:
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break scalar
		}
	}
	if i == 0 {
		return nil, nil, errSkim
	}
	return b[:i], b[i:], nil
}

// skimMembers calls fn with the key and raw value of each member of the
// JSON object at the start of b, and returns what follows the object.
func skimMembers(b []byte, fn func(key string, val []byte) error) ([]byte, error) {
	b = skipSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, errSkim
	}
	b = skipSpace(b[1:])
	if len(b) > 0 && b[0] == '}' {
		return b[1:], nil
	}
	for {
		b = skipSpace(b)
		if len(b) == 0 || b[0] != '"' {
			return nil, errSkim
		}
		n, err := skipString(b)
		if err != nil {
			return nil, err
		}
		key := string(b[1 : n-1])
		if bytes.IndexByte(b[:n], '\\') >= 0 {
			if err := json.Unmarshal(b[:n], &key); err != nil {
				return nil, err
			}
		}
		b = skipSpace(b[n:])
		if len(b) == 0 || b[0] != ':' {
			return nil, errSkim
		}
		var val []byte
		if val, b, err = skipValue(b[1:]); err != nil {
			return nil, err
		}
		if err := fn(key, val); err != nil {
			return nil, err
		}
		b = skipSpace(b)
		if len(b) == 0 {
			return nil, errSkim
		}
		switch b[0] {
		case ',':
			b = b[1:]
		case '}':
			return b[1:], nil
		default:
			return nil, errSkim
		}
	}
}

// skimElements calls fn with each raw element of the JSON array val.
func skimElements(val []byte, fn func(elem []byte)) error {
	b := skipSpace(val)
	if len(b) == 0 || b[0] != '[' {
		return errSkim
	}
	b = skipSpace(b[1:])
	if len(b) > 0 && b[0] == ']' {
		return nil
	}
	for {
		elem, rest, err := skipValue(b)
		if err != nil {
			return err
		}
		fn(elem)
		b = skipSpace(rest)
		if len(b) == 0 {
			return errSkim
		}
		switch b[0] {
		case ',':
			b = b[1:]
		case ']':
			return nil
		default:
			return errSkim
		}
	}
}

// keyIs matches member names as encoding/json matches them to fields:
// exactly, or else ignoring case.
func keyIs(key, name string) bool { return key == name || strings.EqualFold(key, name) }

// skimmedFrame is a JSON-RPC message as the raw client's listing reads it.
type skimmedFrame struct {
	id, method, err []byte // raw values; nil when absent
	skills          []json.RawMessage
	nextCursor      string
	hasResult       bool
}

// skimListFrame reads one message that may be a skills/list answer. The
// skills are slices of frame, which the caller must not reuse.
func skimListFrame(frame []byte) (*skimmedFrame, error) {
	var f skimmedFrame
	rest, err := skimMembers(frame, func(key string, val []byte) error {
		if string(val) == "null" {
			return nil // as encoding/json leaves a field it decodes null into
		}
		switch {
		case keyIs(key, "id"):
			f.id = val
		case keyIs(key, "method"):
			f.method = val
		case keyIs(key, "error"):
			f.err = val
		case keyIs(key, "result"):
			f.hasResult = true
			_, err := skimMembers(val, func(key string, val []byte) error {
				if string(val) == "null" {
					return nil
				}
				switch {
				case keyIs(key, "skills"):
					f.skills = f.skills[:0]
					return skimElements(val, func(elem []byte) { f.skills = append(f.skills, elem) })
				case keyIs(key, "nextCursor"):
					return json.Unmarshal(val, &f.nextCursor)
				}
				return nil
			})
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(skipSpace(rest)) != 0 {
		return nil, errSkim
	}
	return &f, nil
}
