package search

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// TestVectors checks the embedded table: it parses, its terms are sorted
// index terms, and its vectors are unit vectors scaled by 127.
func TestVectors(t *testing.T) {
	v := defaultVectors
	if v.n < 1000 || v.dims != 64 {
		t.Fatalf("embedded vectors: %d terms of %d dimensions; regenerate them with go generate ./internal/search", v.n, v.dims)
	}
	for i := range v.n {
		term := v.term(i)
		if i > 0 && term <= v.term(i-1) {
			t.Fatalf("terms out of order: %q after %q", term, v.term(i-1))
		}
		if term == "" || len(term) > maxTermLen {
			t.Errorf("term %d is %q, not an index term", i, term)
		}
		if d := v.dot(i, i); math.Abs(float64(d)-1) > 0.05 {
			t.Errorf("vector of %q has squared length %v, want 1", term, d)
		}
		if v.find(term) != i {
			t.Errorf("find(%q) = %d, want %d", term, v.find(term), i)
		}
	}
	if v.find("no-such-term") >= 0 || v.find("") >= 0 {
		t.Error("found a term the table does not hold")
	}
	for _, bad := range []string{"", "nonsense", vectorsMagic, vectorsMagic + "\xff\xff\xff\x7f\x40\x00\x00\x00",
		vectorsData[:len(vectorsData)-1], vectorsData + "x"} {
		if w := openVectors(bad); w.n != 0 {
			t.Errorf("openVectors(%.30q...) = %d terms, want an empty table", bad, w.n)
		}
	}
}

// TestVectorsGenerated trains the vectors again and compares them with
// the embedded ones byte for byte. Floating point sums are reproducible
// on amd64, where Go fuses no multiply-add on its own.
func TestVectorsGenerated(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("SKIPPED: the embedded vectors are reproduced on amd64, not %s", runtime.GOARCH)
	}
	out := filepath.Join(t.TempDir(), "vectors.bin")
	cmd := exec.Command("go", "run", "gen_vectors.go", "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen_vectors: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(vectorsData)) {
		t.Errorf("vectors.bin differs from what gen_vectors.go writes (%d bytes, embedded %d): go generate ./internal/search", len(got), len(vectorsData))
	}
}

// neighbours returns two terms of the table whose vectors are close, and
// one far from the first, all of four letters or more.
func neighbours(t *testing.T) (term, near, far string) {
	t.Helper()
	v := &defaultVectors
	best, worst := float32(-2), float32(2)
	for i := range v.n {
		if len(v.term(i)) < 4 {
			continue
		}
		for j := range v.n {
			if j == i || len(v.term(j)) < 4 {
				continue
			}
			d := v.dot(i, j)
			if d > best {
				best, term, near = d, v.term(i), v.term(j)
			}
		}
		if term != "" {
			break
		}
	}
	i := v.find(term)
	for j := range v.n {
		if d := v.dot(i, j); len(v.term(j)) >= 4 && d < worst {
			worst, far = d, v.term(j)
		}
	}
	if best < 0.5 || worst > 0.2 {
		t.Fatalf("no close pair and far term: %q~%q %v, %q %v", term, near, best, far, worst)
	}
	return term, near, far
}

// TestSecondStage: of two skills BM25F scores alike, the one whose words
// are close in meaning to the query's comes first, and with the second
// stage off the name decides.
func TestSecondStage(t *testing.T) {
	term, near, far := neighbours(t)
	docs := []Doc{
		{ID: 0, Name: "alpha-tool", Description: term + " " + far},
		{ID: 1, Name: "beta-tool", Description: term + " " + near},
	}
	q := Query{Text: term}
	if got := names(docs, Build(docs, 1).Search(q)); !slices.Equal(got, []string{"beta-tool", "alpha-tool"}) {
		t.Errorf("Search(%q) = %v, want beta-tool (%q) first", term, got, near)
	}
	if got := names(docs, BuildRanked(docs, 1, Ranking{BM25FOnly: true}).Search(q)); !slices.Equal(got, []string{"alpha-tool", "beta-tool"}) {
		t.Errorf("BM25F only: Search(%q) = %v, want the names' order", term, got)
	}
	// A query word that no skill holds counts through its vector.
	docs = []Doc{
		{ID: 0, Name: "alpha-tool", Description: "widget " + far},
		{ID: 1, Name: "beta-tool", Description: "widget " + near},
	}
	q = Query{Text: "widget " + term}
	if got := names(docs, Build(docs, 1).Search(q)); !slices.Equal(got, []string{"beta-tool", "alpha-tool"}) {
		t.Errorf("Search(%q) = %v, want beta-tool (%q) first", q.Text, got, near)
	}
	// The features say why.
	cs := Build(docs, 1).Candidates(q)
	if len(cs) != 2 || cs[0].Features[FeatBM25F] != 1 || cs[1].Features[FeatBM25F] != 1 ||
		cs[1].Features[FeatVector] <= cs[0].Features[FeatVector] {
		t.Errorf("Candidates(%q) = %+v, want equal BM25F and beta-tool's vector closer", q.Text, cs)
	}
	// The second stage's weights can be replaced, which is how they are
	// fitted: the vectors alone against BM25F alone.
	against := Weights{FeatBM25F: 1, FeatVector: -1}
	if got := names(docs, BuildRanked(docs, 1, Ranking{Rerank: &against}).Search(q)); !slices.Equal(got, []string{"alpha-tool", "beta-tool"}) {
		t.Errorf("vectors weighed against: Search(%q) = %v, want alpha-tool first", q.Text, got)
	}
}

// TestSecondStageKeepsExactNames: a skill named as the query still comes
// first, and the results do not depend on the limit.
func TestSecondStageKeepsExactNames(t *testing.T) {
	docs := corpus()
	ix := Build(docs, 0)
	for _, text := range []string{"pdf-forms", "invoice reminders", "deploy the cluster", "weekly report"} {
		all := ix.Search(Query{Text: text, Limit: MaxLimit})
		for limit := 1; limit <= len(all); limit++ {
			got := ix.Search(Query{Text: text, Limit: limit})
			if !slices.EqualFunc(got, all[:limit], func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }) {
				t.Errorf("Search(%q, limit %d) = %v, want the first %d of %v", text, limit, got, limit, all)
			}
		}
	}
	if got := names(docs, ix.Search(Query{Text: "pdf-forms"})); len(got) == 0 || got[0] != "pdf-forms" {
		t.Errorf("Search(pdf-forms) = %v, want pdf-forms first", got)
	}
}
