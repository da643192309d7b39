package search

import (
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"only separators", " \t-_.,;!? ", nil},
		{"stop words only", "How do I want to do it?", nil},
		{"case and stemming", "Deploying Services", []string{"deploy", "servic"}},
		{"accents folded", "Café Überprüfung", []string{"caf", "uberprufung"}},
		{"decomposed accents", "Cafe\u0301 U\u0308berpru\u0308fung", []string{"caf", "uberprufung"}},
		{"sharp s", "Straße STRASSE", []string{"strass", "strass"}},
		{"greek final sigma", "ΣΟΦΟΣ σοφος σοφοσ", []string{"σοφοσ", "σοφοσ", "σοφοσ"}},
		{"cyrillic kept whole", "Привет, мир", []string{"привет", "мир"}},
		{"devanagari marks stay in the word", "हिन्दी भाषा", []string{"हिन्दी", "भाषा"}},
		{"hangul kept whole", "한국어 문서", []string{"한국어", "문서"}},
		{"cjk run and bigrams", "生成文档", []string{"生成文档", "生成", "成文", "文档"}},
		{"cjk two runes", "文档", []string{"文档"}},
		{"kana", "テスト", []string{"テスト", "テス", "スト"}},
		{"script change splits", "pdf文档", []string{"pdf", "文档", "pdf文档"}},
		{"hyphen", "pdf-forms", []string{"pdf", "form", "pdfform"}},
		{"underscore", "snake_case_name", []string{"snak", "cas", "nam", "snakecasenam"}},
		{"camel case", "camelCase", []string{"camel", "cas", "camelcas"}},
		{"acronym then word", "PDFForms", []string{"pdf", "form", "pdfform"}},
		{"leading lowercase letter", "iPhone", []string{"phon", "iphon"}},
		{"joined form keeps stop words", "state-of-the-art", []string{"stat", "art", "stateoftheart"}},
		{"camel segments of a hyphenated word", "GitHub-Actions", []string{"git", "hub", "action", "github", "githubaction"}},
		{"single camel segment joined once", "GitHub", []string{"git", "hub", "github"}},
		{"stray joiners", "--x-- y_", []string{"x", "y"}},
		{"double hyphen splits words", "build--deploy", []string{"build", "deploy"}},
		{"apostrophe inside a word", "user's guide, don’t", []string{"user", "guid"}},
		{"digits stay with letters", "401k sha256 v1.2", []string{"401k", "sha256", "v1", "2"}},
		{"too long is dropped", strings.Repeat("x", 65) + " ok", []string{"ok"}},
		{"64 bytes is kept", strings.Repeat("x", 64), []string{strings.Repeat("x", 64)}},
		{"invalid utf-8 separates", "abc\xffdef", []string{"abc", "def"}},
		{"punctuation", "CI/CD: docker-compose!", []string{"ci", "cd", "dock", "compos", "dockercompos"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokenize(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestTokenizeCaseInsensitive checks that case never changes the terms,
// in any script with case.
func TestTokenizeCaseInsensitive(t *testing.T) {
	for _, s := range []string{"Invoice Reminders", "KUBERNETES deploy", "Ünïcödé Tëxt", "ΑΒΓ"} {
		if a, b := Tokenize(s), Tokenize(strings.ToUpper(s)); !slices.Equal(a, b) {
			t.Errorf("Tokenize(%q) = %q but Tokenize(upper) = %q", s, a, b)
		}
	}
}

func TestLastWord(t *testing.T) {
	tests := []struct {
		in          string
		last        string
		endsInSpace bool
	}{
		{"deplo", "deplo", false},
		{"kubernetes deplo", "deplo", false},
		{"deplo ", "deplo", true},
		{"pdf-fo", "fo", false},
		{"pdf-", "pdf", true},
		{"deploy the", "the", false},
		{"", "", true},
	}
	for _, tt := range tests {
		var a analyzer
		a.run(tt.in, func([]byte) {})
		if string(a.lastPart) != tt.last || a.endsInSpace != tt.endsInSpace {
			t.Errorf("run(%q): last %q, endsInSpace %v; want %q, %v", tt.in, a.lastPart, a.endsInSpace, tt.last, tt.endsInSpace)
		}
	}
}

func TestStem(t *testing.T) {
	// Each group must share one stem; the stem itself is an implementation
	// detail, except that it is the same on both sides of the index.
	groups := [][]string{
		{"remind", "reminds", "reminder", "reminders", "reminding", "reminded"},
		{"invoice", "invoices", "invoicing", "invoiced"},
		{"deploy", "deploys", "deploying", "deployed", "deployment", "deployments"},
		{"create", "creates", "creating", "created", "creation"},
		{"automate", "automating", "automated", "automation"},
		{"configure", "configuring", "configured", "configuration"},
		{"document", "documents", "documentation"},
		{"secure", "security"},
		{"available", "availability"},
		{"verify", "verifies", "verified", "verifying", "verification"},
		{"organize", "organizing", "organization", "organisation"},
		{"policy", "policies"},
		{"tax", "taxes"},
		{"match", "matches", "matching", "matched"},
		{"process", "processes", "processing"},
		{"run", "running"},
		{"plan", "planned", "planning", "planner"},
		{"bill", "bills", "billing", "billed"},
		{"ship", "shipping", "shipped", "shipment"},
		{"month", "monthly"},
		{"quarter", "quarterly", "quarters"},
		{"recover", "recovery", "recovering"},
		{"pay", "payment", "payments"},
		{"engaged", "engagement"},
		{"schedule", "scheduling", "scheduler"},
		{"use", "uses", "used", "using"},
	}
	for _, g := range groups {
		want := string(stem([]byte(g[0])))
		for _, w := range g[1:] {
			if got := string(stem([]byte(w))); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q; want them equal", g[0], want, w, got)
			}
		}
	}

	// Pairs that must stay apart: stemming must not merge unrelated words.
	apart := [][2]string{
		{"analysis", "analyst"},
		{"status", "state"},
		{"string", "str"},
		{"need", "ne"},
		{"order", "ord"},
		{"user", "us"},
		{"add", "ad"},
	}
	for _, p := range apart {
		if a, b := string(stem([]byte(p[0]))), string(stem([]byte(p[1]))); a == b {
			t.Errorf("stem(%q) = stem(%q) = %q; want them apart", p[0], p[1], a)
		}
	}

	// Words left alone.
	for _, w := range []string{"sso", "k8s", "café", "naïve", "status", "analysis", "bus", "gpu"} {
		if got := string(stem([]byte(w))); got != w {
			t.Errorf("stem(%q) = %q, want it unchanged", w, got)
		}
	}
}
