package search

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestVocab checks the embedded table: it parses, its terms are sorted,
// its relations point into it, and it relates what it should.
// (TestVocabGenerated catches a table the analysis has moved under.)
func TestVocab(t *testing.T) {
	v := defaultVocab
	if v.n < 10_000 {
		t.Fatalf("embedded vocabulary has %d terms; regenerate it with go generate ./internal/search", v.n)
	}
	prev := ""
	for i := range v.n {
		term := v.term(i)
		if i > 0 && term <= prev {
			t.Fatalf("terms out of order: %q after %q", term, prev)
		}
		prev = term
	}
	relations := 0
	for i := range v.n {
		v.related([]byte(v.term(i)), func(rt string, _ bool) {
			relations++
			if rt == "" || v.find([]byte(rt)) < 0 {
				t.Fatalf("related term %q of %q is not in the table", rt, v.term(i))
			}
		})
	}
	if relations == 0 {
		t.Fatal("no relations")
	}
	var rel []string
	v.related([]byte("care"), func(rt string, broad bool) {
		if broad {
			rel = append(rel, rt)
		}
	})
	if !slices.Contains(rel, "treat") { // "treatment", a kind of care
		t.Errorf(`related("care") broad = %q, want "treat" among them`, rel)
	}
	if v.find([]byte("no-such-word")) >= 0 || v.find(nil) >= 0 {
		t.Error("found a word the table does not hold")
	}
	for _, bad := range []string{"", "nonsense", vocabMagic, vocabMagic + "\xff\xff\xff\x7f", vocabData[:len(vocabData)-1]} {
		if w := openVocab(bad); w.n != 0 {
			t.Errorf("openVocab(%.20q...) = %d terms, want an empty table", bad, w.n)
		}
	}
}

// TestVocabGenerated regenerates the table from WordNet and compares it
// with the embedded one byte for byte. It needs Debian's wordnet-base
// (.ci/run installs it).
func TestVocabGenerated(t *testing.T) {
	const wordnet = "/usr/share/wordnet"
	if _, err := os.Stat(filepath.Join(wordnet, "data.noun")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("WordNet is missing (%v): install wordnet-base", err)
		}
		t.Skipf("SKIPPED: WordNet is missing (%v): install wordnet-base to check vocab.bin", err)
	}
	if testing.Short() {
		t.Skip("regenerating the vocabulary takes seconds")
	}
	out := filepath.Join(t.TempDir(), "vocab.bin")
	cmd := exec.Command("go", "run", "gen_vocab.go", "-wordnet", wordnet, "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen_vocab: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(vocabData)) {
		t.Errorf("vocab.bin differs from what gen_vocab.go writes (%d bytes, embedded %d): go generate ./internal/search", len(got), len(vocabData))
	}
}

func TestExpansion(t *testing.T) {
	docs := []Doc{
		{ID: 0, Name: "treatment-plans", Description: "Write treatment plans for patients after surgery."},
		{ID: 1, Name: "car-rental", Description: "Book a rental car for a trip."},
		{ID: 2, Name: "care-homes", Description: "Find care homes for elderly relatives."},
	}
	ix := Build(docs, 0)
	// "care" relates to "treatment" (a kind of care); car-rental shares
	// its stem with "care" but no sense, and is found only by the stem.
	hits := ix.Search(Query{Text: "care plan for a patient"})
	if got := names(docs, hits); len(got) < 2 || got[0] != "treatment-plans" {
		t.Errorf("Search(care plan for a patient) = %v, want treatment-plans first", got)
	}
	// A word the skill holds outranks a related one.
	hits = ix.Search(Query{Text: "care"})
	if got := names(docs, hits); len(got) == 0 || got[0] != "care-homes" {
		t.Errorf("Search(care) = %v, want care-homes first", got)
	}
	// Without expansion the treatment plans are not found by "care".
	plain := BuildRanked(docs, 0, Ranking{NoExpansion: true})
	for _, h := range plain.Search(Query{Text: "care"}) {
		if h.ID == 0 {
			t.Errorf("found treatment-plans without expansion: %v", h)
		}
	}
	// Same query, same results.
	a, b := ix.Search(Query{Text: "care plan for a patient"}), ix.Search(Query{Text: "care plan for a patient"})
	if !slices.EqualFunc(a, b, func(x, y Hit) bool { return x.ID == y.ID && x.Score == y.Score }) {
		t.Errorf("two runs differ: %v, %v", a, b)
	}
}
