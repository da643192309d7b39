package skillsext

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Cursors are keyset positions: the sort key of the last item returned,
// encoded so that clients treat them as opaque. A keyset cursor stays valid
// across catalog swaps: a listing resumed on a newer catalog neither repeats
// nor skips an entry that existed when it started, whatever changed in
// between, and it works unchanged across stateless HTTP replicas.

const cursorPrefix = "k1:"

// maxCursorLength bounds a cursor before it is decoded.
const maxCursorLength = 2 * MaxURILength

// ErrBadCursor is returned for a cursor this server did not issue.
var ErrBadCursor = errors.New("skillsext: invalid cursor; restart the listing without a cursor")

// EncodeCursor returns the cursor that resumes a listing after key.
func EncodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + key))
}

// DecodeCursor returns the key a cursor resumes after. The empty cursor
// decodes to the empty key, which sorts before everything.
func DecodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	if len(c) > maxCursorLength {
		return "", ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", ErrBadCursor
	}
	key, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok || key == "" {
		return "", ErrBadCursor
	}
	return key, nil
}
