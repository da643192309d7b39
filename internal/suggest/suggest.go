// Package suggest finds, among known names, those a mistyped one was
// likely meant to be: the "did you mean" of both command lines.
package suggest

import (
	"slices"
	"strings"
)

// Closest returns up to three of names within an edit distance of 2 of
// typed (1 when typed has 3 characters or fewer), or that start with it
// (when it has 3 characters or more), sorted.
func Closest(typed string, names []string) []string {
	limit := 2
	if len(typed) <= 3 {
		limit = 1
	}
	var out []string
	for _, n := range names {
		if n == typed {
			continue
		}
		if Distance(typed, n) <= limit || (len(typed) > 2 && strings.HasPrefix(n, typed)) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// Distance is the Levenshtein distance of a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
