package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// corpus is a small library with near-duplicates, two libraries and mixed
// category spellings.
func corpus() []Doc {
	return []Doc{
		{ID: 0, Name: "invoice-reminders", Library: "acme", Category: "Finance",
			Description: "Send polite reminders for overdue invoices. Use when customers pay late.",
			Tags:        []string{"invoices", "overdue", "get paid faster"}},
		{ID: 1, Name: "invoice-creation", Library: "acme", Category: "finance",
			Description: "Create and send invoices with line items and tax. Use when billing a client.",
			Tags:        []string{"invoices", "billing"}},
		{ID: 2, Name: "pdf-forms", Library: "docs", Category: "Documents",
			Description: "Fill in PDF forms and flatten them.",
			Tags:        []string{"pdf", "forms"}},
		{ID: 3, Name: "pdf-merge", Library: "docs", Category: "documents",
			Description: "Merge PDF files. Works with PDF forms, PDF forms and more PDF forms.",
			Tags:        []string{"pdf", "forms", "pdf forms"},
			Body:        "PDF forms PDF forms PDF forms"},
		{ID: 4, Name: "kubernetes-deploy", Library: "", Category: "devops",
			Description: "Deploy services to a cluster with manifests.",
			Body:        "Roll out with kubectl apply and watch the deployment."},
		{ID: 5, Name: "release-notes", Library: "", Category: "docs",
			Description: "Write release notes from commits.",
			Body:        "Group the changes; mention deployment steps if any."},
	}
}

func names(docs []Doc, hits []Hit) []string {
	byID := map[int]string{}
	for _, d := range docs {
		byID[d.ID] = d.Name
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = byID[h.ID]
	}
	return out
}

func TestSearchEmpty(t *testing.T) {
	ix := Build(corpus(), 0)
	for _, text := range []string{"", " ", "\t\n", "the and to", "¿¡ — …", "a-the"} {
		if hits := ix.Search(Query{Text: text}); hits != nil {
			t.Errorf("Search(%q) = %v, want nil", text, hits)
		}
	}
	if hits := Build(nil, 0).Search(Query{Text: "invoice"}); hits != nil {
		t.Errorf("empty index: %v, want nil", hits)
	}
}

func TestSearchRanking(t *testing.T) {
	docs := corpus()
	ix := Build(docs, 0)
	tests := []struct {
		query string
		first string
	}{
		{"customers paying late", "invoice-reminders"},
		{"bill a client", "invoice-creation"},
		{"Overdue INVOICES", "invoice-reminders"},
		{"roll out to the cluster", "kubernetes-deploy"},
		{"deployed", "kubernetes-deploy"},
	}
	for _, tt := range tests {
		hits := ix.Search(Query{Text: tt.query})
		got := names(docs, hits)
		if len(got) == 0 || got[0] != tt.first {
			t.Errorf("Search(%q) = %v, want %s first", tt.query, got, tt.first)
		}
	}
}

func TestSearchExactName(t *testing.T) {
	docs := corpus()
	ix := Build(docs, 0)
	// pdf-merge is stuffed with "pdf forms" and outscores pdf-forms on
	// BM25F; the name still wins.
	for _, q := range []string{"pdf-forms", "pdf forms", "PDF Forms", " pdf_forms ", "pdf  -  forms"} {
		hits := ix.Search(Query{Text: q})
		got := names(docs, hits)
		if len(got) < 2 || got[0] != "pdf-forms" || got[1] != "pdf-merge" {
			t.Errorf("Search(%q) = %v, want pdf-forms then pdf-merge", q, got)
			continue
		}
		if hits[0].Score <= hits[1].Score {
			t.Errorf("Search(%q): exact score %v not above %v", q, hits[0].Score, hits[1].Score)
		}
		if hits[0].Matched[0] != "name" {
			t.Errorf("Search(%q): exact hit matched %v, want name first", q, hits[0].Matched)
		}
	}
	// A name made only of stop words is still found by its exact name.
	docs = append(docs, Doc{ID: 6, Name: "how-to", Description: "Guides."})
	ix = Build(docs, 0)
	if got := names(docs, ix.Search(Query{Text: "how to"})); !slices.Equal(got, []string{"how-to"}) {
		t.Errorf(`Search("how to") = %v, want [how-to]`, got)
	}
	// The fast path obeys the filters.
	if got := names(docs, ix.Search(Query{Text: "pdf forms", Library: "acme"})); len(got) != 0 {
		t.Errorf("exact name outside the library filter: %v", got)
	}
	// Only the whole query counts: one more word and BM25F decides.
	if got := names(docs, ix.Search(Query{Text: "pdf forms merge"})); got[0] != "pdf-merge" {
		t.Errorf(`Search("pdf forms merge") = %v, want pdf-merge first`, got)
	}
}

func TestSearchPrefix(t *testing.T) {
	docs := corpus()
	ix := Build(docs, 0)
	hits := ix.Search(Query{Text: "deplo"})
	got := names(docs, hits)
	if len(got) == 0 || got[0] != "kubernetes-deploy" {
		t.Errorf(`Search("deplo") = %v, want kubernetes-deploy first`, got)
	}
	if !slices.Contains(got, "release-notes") {
		t.Errorf(`Search("deplo") = %v, want release-notes ("deployment") too`, got)
	}
	// A completed word is not expanded.
	if got := ix.Search(Query{Text: "deplo "}); got != nil {
		t.Errorf(`Search("deplo ") = %v, want nil`, got)
	}
	// Only the last word is.
	if got := ix.Search(Query{Text: "deplo cluster"}); len(got) != 1 || got[0].ID != 4 {
		t.Errorf(`Search("deplo cluster") = %v, want only kubernetes-deploy`, got)
	}
	// Too short to expand.
	if got := ix.Search(Query{Text: "de"}); got != nil {
		t.Errorf(`Search("de") = %v, want nil`, got)
	}
	// A stem shorter than the typed word completes it.
	for _, q := range []string{"deploym", "deploymen", "kubernete"} {
		if got := names(docs, ix.Search(Query{Text: q})); len(got) == 0 || got[0] != "kubernetes-deploy" {
			t.Errorf("Search(%q) = %v, want kubernetes-deploy first", q, got)
		}
	}
	// A completion scores less than the word typed in full in BM25F
	// (the second stage's scores are relative to the best candidate's,
	// so comparable within one result only).
	first := BuildRanked(docs, 0, Ranking{BM25FOnly: true})
	full := first.Search(Query{Text: "deployment"})
	part := first.Search(Query{Text: "deploymen"})
	if len(full) == 0 || len(part) == 0 || part[0].Score >= full[0].Score {
		t.Errorf("prefix score %v, full word %v; want the prefix lower", part, full)
	}
}

func TestSearchFilters(t *testing.T) {
	docs := corpus()
	ix := Build(docs, 0)
	tests := []struct {
		name string
		q    Query
		want []string
	}{
		{"library", Query{Text: "invoices pdf", Library: "acme"}, []string{"invoice-creation", "invoice-reminders"}},
		{"library is case-sensitive", Query{Text: "invoices", Library: "ACME"}, nil},
		{"unknown library", Query{Text: "invoices", Library: "nope"}, nil},
		{"category folds case", Query{Text: "pdf", Category: "DOCUMENTS"}, []string{"pdf-forms", "pdf-merge"}},
		{"category mixed spellings", Query{Text: "invoices", Category: "finance"}, []string{"invoice-creation", "invoice-reminders"}},
		{"category and library", Query{Text: "pdf invoices", Category: "finance", Library: "docs"}, nil},
		{"unknown category", Query{Text: "pdf", Category: "x"}, nil},
		{"category trimmed", Query{Text: "pdf", Category: " documents "}, []string{"pdf-forms", "pdf-merge"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(docs, ix.Search(tt.q))
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%+v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestSearchLimit(t *testing.T) {
	var docs []Doc
	for i := range 80 {
		docs = append(docs, Doc{ID: i, Name: fmt.Sprintf("skill-%02d", i), Description: "common word"})
	}
	ix := Build(docs, 0)
	for _, tt := range []struct{ limit, want int }{
		{0, DefaultLimit}, {-5, 1}, {1, 1}, {7, 7}, {50, 50}, {51, MaxLimit}, {1 << 30, MaxLimit},
	} {
		if got := len(ix.Search(Query{Text: "common", Limit: tt.limit})); got != tt.want {
			t.Errorf("Limit %d: %d hits, want %d", tt.limit, got, tt.want)
		}
	}
}

func TestSearchTieBreak(t *testing.T) {
	// Identical documents score the same: the order is by name, then ID,
	// whatever the order the documents were given in.
	base := []Doc{
		{ID: 10, Name: "b-skill"}, {ID: 11, Name: "a-skill"}, {ID: 3, Name: "c-skill"},
		{ID: 2, Name: "a-skill"}, {ID: 7, Name: "b-skill"},
	}
	want := []int{2, 11, 7, 10, 3}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		docs := slices.Clone(base)
		r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		for i := range docs {
			docs[i].Description = "same text"
			docs[i].Category = "x"
		}
		hits := Build(docs, 0).Search(Query{Text: "same text"})
		var ids []int
		for _, h := range hits {
			ids = append(ids, h.ID)
			if h.Score != hits[0].Score {
				t.Fatalf("scores differ: %v", hits)
			}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("order %v, want %v", ids, want)
		}
	}
}

func TestSearchMatched(t *testing.T) {
	docs := []Doc{{ID: 1, Name: "alpha-tool", Category: "alpha", Description: "alpha beta",
		Tags: []string{"alpha"}, Body: "alpha"}, {ID: 2, Name: "other", Body: "beta"}}
	ix := Build(docs, 0)
	hits := ix.Search(Query{Text: "alpha beta"})
	if len(hits) != 2 {
		t.Fatalf("hits = %v", hits)
	}
	if want := []string{"name", "tags", "description", "category", "body"}; !slices.Equal(hits[0].Matched, want) {
		t.Errorf("Matched = %v, want %v", hits[0].Matched, want)
	}
	if want := []string{"body"}; !slices.Equal(hits[1].Matched, want) {
		t.Errorf("Matched = %v, want %v", hits[1].Matched, want)
	}
	// Scratch space is reset between queries: a second query sees no
	// fields of the first.
	hits = ix.Search(Query{Text: "beta"})
	for _, h := range hits {
		if slices.Contains(h.Matched, "name") || slices.Contains(h.Matched, "tags") {
			t.Errorf("stale Matched %v", h.Matched)
		}
	}
}

func TestBodyTruncated(t *testing.T) {
	body := strings.Repeat("filler ", MaxBodyBytes/7+1) + "needle"
	ix := Build([]Doc{{ID: 1, Name: "x", Body: body}, {ID: 2, Name: "y", Body: "needle"}}, 0)
	hits := ix.Search(Query{Text: "needle"})
	if len(hits) != 1 || hits[0].ID != 2 {
		t.Errorf("hits = %v, want only the short body", hits)
	}
	if got := truncate("aé", 2); got != "a" {
		t.Errorf("truncate cut a rune: %q", got)
	}
}

func TestSearchCJK(t *testing.T) {
	docs := []Doc{
		{ID: 1, Name: "doc-gen", Description: "生成技术文档"},
		{ID: 2, Name: "other", Description: "发送邮件"},
	}
	ix := Build(docs, 0)
	for _, q := range []string{"文档", "生成技术文档", "技术文档"} {
		if hits := ix.Search(Query{Text: q}); len(hits) == 0 || hits[0].ID != 1 {
			t.Errorf("Search(%q) = %v, want doc 1", q, hits)
		}
	}
}

func TestSearchConcurrent(t *testing.T) {
	docs := corpus()
	ix := Build(docs, 0)
	want := map[string][]Hit{}
	queries := []string{"invoices", "pdf forms", "deplo", "release notes", "overdue"}
	for _, q := range queries {
		want[q] = ix.Search(Query{Text: q})
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				q := queries[(g+i)%len(queries)]
				got := ix.Search(Query{Text: q})
				if fmt.Sprint(got) != fmt.Sprint(want[q]) {
					t.Errorf("concurrent Search(%q) = %v, want %v", q, got, want[q])
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLongQuery(t *testing.T) {
	ix := Build(corpus(), 0)
	q := strings.Repeat("invoices overdue pdf ", 10000) + strings.Repeat("x", 100)
	if hits := ix.Search(Query{Text: q}); len(hits) == 0 {
		t.Error("long query found nothing")
	}
	// Only the first maxQueryTerms known terms are searched: with the
	// words in reverse, docs 0..35 are out of reach.
	var docs []Doc
	var words []string
	for i := range 100 {
		docs = append(docs, Doc{ID: i, Name: fmt.Sprintf("s%03d", i), Description: fmt.Sprintf("w%d", i)})
		words = append(words, fmt.Sprintf("w%d", 99-i))
	}
	hits := Build(docs, 0).Search(Query{Text: strings.Join(words, " "), Limit: MaxLimit})
	if len(hits) != MaxLimit {
		t.Fatalf("%d hits, want %d", len(hits), MaxLimit)
	}
	for _, h := range hits {
		if h.ID < 100-maxQueryTerms {
			t.Errorf("doc %d matched a term past the first %d", h.ID, maxQueryTerms)
		}
	}
}

// TestPruningIsExact checks that skipping the documents that cannot reach
// the results changes nothing, on a generated library and the benchmark
// queries, with and without filters and at several limits.
func TestPruningIsExact(t *testing.T) {
	docs := benchDocs(3000)
	// Exact names made of common words, found late if pruning applied.
	for i, name := range []string{"use-when", "review-deploy", "data-file-test"} {
		docs = append(docs, Doc{ID: 5000 + i, Name: name, Description: "x"})
	}
	ix := Build(docs, 0)
	qs := benchQueries(docs)
	for i, q := range qs {
		q.Limit = []int{1, 5, 10, 50}[i%4]
		if i%7 == 0 {
			q.Library = libraries[i%len(libraries)]
		}
		if i%9 == 0 {
			q.Text = strings.ReplaceAll(docs[3000+i%3].Name, "-", " ")
		}
		want, got := ix.search(q, false), ix.search(q, true)
		if !slices.EqualFunc(got, want, func(a, b Hit) bool {
			return a.ID == b.ID && a.Score == b.Score && slices.Equal(a.Matched, b.Matched)
		}) {
			t.Errorf("query %+v:\npruned     %v\nexhaustive %v", q, got, want)
		}
	}
}

func TestNameKey(t *testing.T) {
	for in, want := range map[string]string{
		"pdf-forms":      "pdf-forms",
		"PDF Forms":      "pdf-forms",
		"  pdf__forms  ": "pdf-forms",
		"pdf - forms":    "pdf-forms",
		"-x-":            "x",
		"Ünïcode name":   "ünïcode-name",
		"":               "",
		" ":              "",
	} {
		if got := nameKey(in); got != want {
			t.Errorf("nameKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// The number of build workers changes how documents are sharded, never
// what a search finds or how it ranks.
func TestBuildWorkersAgree(t *testing.T) {
	docs := benchDocs(3*minShardDocs + 17)
	one, four := Build(docs, 1), Build(docs, 4)
	found := 0
	for _, q := range benchQueries(docs) {
		q.Limit = 20
		a, b := one.Search(q), four.Search(q)
		if !slices.EqualFunc(a, b, func(x, y Hit) bool { return x.ID == y.ID && x.Score == y.Score }) {
			t.Fatalf("query %+v: one worker found %v, four found %v", q, a, b)
		}
		found += len(a)
	}
	if found < 1000 {
		t.Fatalf("the queries found %d hits in all; the comparison proves little", found)
	}
}

// TestBodyWeight: the body weighs far below the description (build.go),
// so a skill whose description is about the request outranks one whose
// procedure only mentions its words; at the prior weights it did not.
func TestBodyWeight(t *testing.T) {
	docs := []Doc{
		{ID: 0, Name: "treatment-plans", Description: "Write treatment plans for patients."},
		{ID: 1, Name: "clinical-reports", Description: "Write clinical case reports for journals.",
			Body: "Quote the patient's treatment plan and therapy. Summarise the therapy, the plan and the patient's follow-up treatment. " +
				"Therapy, treatment and plan: the patient's therapy plan, the treatment plan, the therapy."},
	}
	q := Query{Text: "treatment plan and therapy for a patient"}
	if got := names(docs, Build(docs, 1).Search(q)); len(got) != 2 || got[0] != "treatment-plans" {
		t.Errorf("Search = %v, want treatment-plans first", got)
	}
	if got := names(docs, BuildRanked(docs, 1, Ranking{PriorWeights: true}).Search(q)); len(got) != 2 || got[0] != "clinical-reports" {
		t.Errorf("prior weights: Search = %v, want clinical-reports first (the case the weights fix)", got)
	}
}
