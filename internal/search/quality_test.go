package search_test

import (
	"bytes"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/search"
	"github.com/skills-mcp/skills-mcp/internal/search/eval"
)

const (
	testLibrary = "../../testdata/search/library"
	testQueries = "../../testdata/search/queries.json"
)

func loadEvalSet(t testing.TB) ([]search.Doc, []eval.Query) {
	t.Helper()
	docs, err := eval.LoadLibrary(os.DirFS(testLibrary))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(testQueries)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := eval.LoadQueries(f)
	if err != nil {
		t.Fatal(err)
	}
	return docs, qs
}

// Floors sit under the figures of this synthetic set (Hit@1 0.797,
// Recall@5 0.813, MRR@10 0.865, nDCG@10 0.851 on 231 queries; one query
// is worth 0.004 of Hit@1). They were set 0.02 under the figures of the
// ranking before the realistic set (testdata/searcheval), which was then
// tuned on that set and lost three first places here; a change that loses
// two more fails.
var floors = eval.Metrics{Hit1: 0.79, Recall5: 0.78, MRR10: 0.85, NDCG10: 0.84}

func TestQuality(t *testing.T) {
	docs, qs := loadEvalSet(t)
	ix := search.Build(docs, 0)
	ours, results := eval.Evaluate(qs, eval.Engine(ix, docs))
	base, _ := eval.Evaluate(qs, eval.Baseline(docs))
	t.Logf("engine:   %+v", ours)
	t.Logf("baseline: %+v", base)

	for _, m := range []struct {
		name        string
		got, want   float64
		baseline    float64
		wantAboveBy float64
	}{
		{"Hit@1", ours.Hit1, floors.Hit1, base.Hit1, 0.1},
		{"Recall@5", ours.Recall5, floors.Recall5, base.Recall5, 0.1},
		{"MRR@10", ours.MRR10, floors.MRR10, base.MRR10, 0.1},
		{"nDCG@10", ours.NDCG10, floors.NDCG10, base.NDCG10, 0.1},
	} {
		if m.got < m.want {
			t.Errorf("%s = %.3f, below the floor %.3f", m.name, m.got, m.want)
		}
		// The comparison stays honest only while the baseline is clearly
		// worse; if it catches up, the eval set has become too easy.
		if m.baseline+m.wantAboveBy > m.got {
			t.Errorf("%s: baseline %.3f is within %.2f of the engine's %.3f", m.name, m.baseline, m.wantAboveBy, m.got)
		}
	}
	if t.Failed() {
		for _, r := range results {
			if !r.Hit1 {
				t.Logf("miss %q: want %v, got %v", r.Query.Query, r.Query.Relevant, r.Ranked)
			}
		}
	}
}

var skillNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// TestEvalLibrary checks that the library is the one the issue asks for:
// enough valid skills, spread over domains.
func TestEvalLibrary(t *testing.T) {
	docs, _ := loadEvalSet(t)
	if len(docs) < 150 {
		t.Errorf("library has %d skills, want at least 150", len(docs))
	}
	categories := map[string]int{}
	names := map[string]bool{}
	for _, d := range docs {
		categories[d.Category]++
		if !skillNameRE.MatchString(d.Name) || len(d.Name) > 64 {
			t.Errorf("invalid name %q", d.Name)
		}
		if names[d.Name] {
			t.Errorf("duplicate name %q", d.Name)
		}
		names[d.Name] = true
		if d.Description == "" || len(d.Description) > 1024 {
			t.Errorf("%s: description has %d bytes, want 1..1024", d.Name, len(d.Description))
		}
		if len(d.Tags) == 0 {
			t.Errorf("%s: no tags", d.Name)
		}
		if !strings.Contains(d.Description, "Use ") {
			t.Errorf("%s: description does not say when to use the skill", d.Name)
		}
	}
	if len(categories) < 10 {
		t.Errorf("library spans %d categories, want at least 10", len(categories))
	}
	// Folder names equal skill names.
	entries, err := os.ReadDir(testLibrary)
	if err != nil {
		t.Fatal(err)
	}
	folders := 0
	for _, cat := range entries {
		if !cat.IsDir() {
			continue
		}
		skills, err := os.ReadDir(path.Join(testLibrary, cat.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range skills {
			folders++
			if !names[s.Name()] {
				t.Errorf("folder %s/%s is not named after its skill", cat.Name(), s.Name())
			}
		}
	}
	if folders != len(docs) {
		t.Errorf("%d skill folders, %d skills", folders, len(docs))
	}
}

// TestEvalQueries checks the query set: size, mix, labels that name real
// skills, and no query that uses a word of a relevant skill's name, which
// would turn the test into name lookup.
func TestEvalQueries(t *testing.T) {
	docs, qs := loadEvalSet(t)
	if len(qs) < 120 {
		t.Errorf("%d queries, want at least 120", len(qs))
	}
	names := map[string]bool{}
	for _, d := range docs {
		names[d.Name] = true
	}
	multi := 0
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q.Query] {
			t.Errorf("duplicate query %q", q.Query)
		}
		seen[q.Query] = true
		if len(q.Relevant) > 1 {
			multi++
		}
		top := 0
		terms := search.Tokenize(q.Query)
		for name, grade := range q.Relevant {
			top = max(top, grade)
			if !names[name] {
				t.Errorf("query %q: no skill %q", q.Query, name)
			}
			for _, part := range strings.Split(name, "-") {
				for _, nt := range search.Tokenize(part) {
					if slices.Contains(terms, nt) {
						t.Errorf("query %q uses %q from the name of %s", q.Query, nt, name)
					}
				}
			}
		}
		if top < 2 {
			t.Errorf("query %q: no skill graded 2 or 3", q.Query)
		}
	}
	if multi < 30 {
		t.Errorf("%d multi-answer queries, want at least 30", multi)
	}
}

// TestDecodedIndexAnswersAlike saves and reloads the index of the
// evaluation library and asks both every labelled query.
func TestDecodedIndexAnswersAlike(t *testing.T) {
	docs, qs := loadEvalSet(t)
	ix := search.Build(docs, 0)
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	size := buf.Len()
	got, err := search.Decode(buf.Bytes())
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got.Docs() != len(docs) || !got.IDsBelow(len(docs)) {
		t.Fatalf("decoded index: %d documents, IDs below %d: %v", got.Docs(), len(docs), got.IDsBelow(len(docs)))
	}
	for _, q := range qs {
		for _, sq := range []search.Query{{Text: q.Query, Limit: 10}, {Text: q.Query, Limit: 1, Category: "engineering"}} {
			if a, b := ix.Search(sq), got.Search(sq); !reflect.DeepEqual(a, b) {
				t.Fatalf("%+v: built index %v, decoded %v", sq, a, b)
			}
		}
	}
	t.Logf("%d documents, %d queries: %d bytes encoded", len(docs), len(qs), size)
}
