package suggest

import (
	"slices"
	"testing"
)

func TestClosest(t *testing.T) {
	names := []string{"pull", "lint", "check", "pack", "serve", "install", "inspect"}
	for typed, want := range map[string][]string{
		"pul":    {"pull"},
		"chekc":  {"check"},
		"ins":    {"inspect", "install"},
		"zzzzzz": nil,
	} {
		if got := Closest(typed, names); !slices.Equal(got, want) {
			t.Errorf("Closest(%q) = %v, want %v", typed, got, want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance = %d, want 3", d)
	}
}
