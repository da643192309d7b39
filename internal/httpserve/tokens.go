package httpserve

import (
	"fmt"
	"os"
	"strings"
)

// LoadTokens returns the bearer tokens of a token file (one a line; blank
// lines and lines starting with # are skipped) and extra, if not blank. A
// file that cannot be read or holds no token is an error; file "" is none.
func LoadTokens(file, extra string) ([]string, error) {
	var tokens []string
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading token file: %w", err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				tokens = append(tokens, t)
			}
		}
		if len(tokens) == 0 {
			return nil, &EmptyTokenFileError{File: file}
		}
	}
	if t := strings.TrimSpace(extra); t != "" {
		tokens = append(tokens, t)
	}
	return tokens, nil
}

// EmptyTokenFileError is a token file that holds no token.
type EmptyTokenFileError struct{ File string }

func (e *EmptyTokenFileError) Error() string { return "token file " + e.File + " holds no token" }
