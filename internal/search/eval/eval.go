// Package eval measures search quality on a labelled query set: it loads a
// skills library and its queries, runs a ranker over them, and computes
// Hit@1, Recall@5, MRR@10 and nDCG@10. It also holds the plain keyword
// baseline that the engine is compared with, so that the comparison is
// made the same way by the skills-searcheval command and by the tests.
package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/skills-mcp/skills-mcp/internal/search"
	yaml "go.yaml.in/yaml/v3"
)

// ErrNoFrontmatter is returned by LoadLibrary for a SKILL.md that does not
// open with a "---" frontmatter block.
var ErrNoFrontmatter = errors.New("eval: SKILL.md has no frontmatter")

// LoadLibrary reads every SKILL.md under the root of fsys, in path order,
// into search.Docs numbered from 0. Tags and trigger phrases are merged
// into Tags. It reads the frontmatter leniently (a missing category or tag
// list is fine) since it serves the evaluation, not validation.
func LoadLibrary(fsys fs.FS) ([]search.Doc, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "SKILL.md" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking the library: %w", err)
	}
	sort.Strings(paths)
	docs := make([]search.Doc, 0, len(paths))
	for _, p := range paths {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		doc, err := parseSkill(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if doc.Name == "" {
			doc.Name = path.Base(path.Dir(p))
		}
		doc.ID = len(docs)
		docs = append(docs, doc)
	}
	return docs, nil
}

// frontmatter holds the keys LoadLibrary reads. Tags and trigger phrases
// may be a YAML list or one comma-separated string.
type frontmatter struct {
	Name           string    `yaml:"name"`
	Description    string    `yaml:"description"`
	Category       string    `yaml:"category"`
	Tags           yaml.Node `yaml:"tags"`
	TriggerPhrases yaml.Node `yaml:"trigger-phrases"`
}

func parseSkill(data []byte) (search.Doc, error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return search.Doc{}, ErrNoFrontmatter
	}
	head, body, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		head, ok = bytes.CutSuffix(rest, []byte("\n---"))
		if !ok {
			return search.Doc{}, ErrNoFrontmatter
		}
	}
	var fm frontmatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return search.Doc{}, fmt.Errorf("parsing frontmatter: %w", err)
	}
	return search.Doc{
		Name:        fm.Name,
		Category:    fm.Category,
		Description: fm.Description,
		Tags:        append(stringList(&fm.Tags), stringList(&fm.TriggerPhrases)...),
		Body:        string(body),
	}, nil
}

func stringList(n *yaml.Node) []string {
	switch n.Kind {
	case yaml.ScalarNode:
		var out []string
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Value != "" {
				out = append(out, c.Value)
			}
		}
		return out
	}
	return nil
}

// LoadLibraries reads a folder of libraries: each folder at the root of
// fsys is one library, read by LoadLibrary, whose skills get the folder's
// name as their Library. Docs are numbered from 0 across all of them, in
// folder order. A skill is then named by Key: "library/name".
func LoadLibraries(fsys fs.FS) ([]search.Doc, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("listing the libraries: %w", err)
	}
	var docs []search.Doc
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := fs.Sub(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		lib, err := LoadLibrary(sub)
		if err != nil {
			return nil, fmt.Errorf("library %s: %w", e.Name(), err)
		}
		for _, d := range lib {
			d.ID = len(docs)
			d.Library = e.Name()
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// Key is the name labels give a skill: its name, after its library and a
// slash when it has one ("kdense/treatment-plans").
func Key(d search.Doc) string {
	if d.Library == "" {
		return d.Name
	}
	return d.Library + "/" + d.Name
}

// Query is one labelled request: the text as a user would type it, and
// the skills that answer it with a grade from 1 (related) to 3 (the
// answer). Split, if set, puts it in the half of the set that ranking is
// tuned on ("tune") or in the half kept for judging it ("held-out").
type Query struct {
	Query    string         `json:"query"`
	Split    string         `json:"split,omitempty"`
	Relevant map[string]int `json:"relevant"`
}

// The halves of a query set.
const (
	SplitTune    = "tune"
	SplitHeldOut = "held-out"
)

// Hard reports whether q shares no word with the name of any skill that
// answers it (grade 3): "care plan for a patient" for a skill called
// treatment-plans. Words are runs of letters and digits, lowercased, not
// stemmed: "reviewer" and "code-review" share none.
func Hard(q Query) bool {
	words := map[string]bool{}
	for _, w := range plainWords(q.Query) {
		words[w] = true
	}
	for key, g := range q.Relevant {
		if g < 3 {
			continue
		}
		name := key[strings.LastIndexByte(key, '/')+1:]
		for _, w := range plainWords(name) {
			if words[w] {
				return false
			}
		}
	}
	return true
}

// Only returns the queries of one half of the set, or all for "".
func Only(qs []Query, split string) []Query {
	if split == "" {
		return qs
	}
	var out []Query
	for _, q := range qs {
		if q.Split == split {
			out = append(out, q)
		}
	}
	return out
}

// LoadQueries decodes a JSON array of queries strictly and checks that
// each has a text and grades between 1 and 3.
func LoadQueries(r io.Reader) ([]Query, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var qs []Query
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("decoding queries: %w", err)
	}
	for i, q := range qs {
		if strings.TrimSpace(q.Query) == "" || len(q.Relevant) == 0 {
			return nil, fmt.Errorf("query %d: needs a text and at least one relevant skill", i)
		}
		if q.Split != "" && q.Split != SplitTune && q.Split != SplitHeldOut {
			return nil, fmt.Errorf("query %d (%q): split %q is neither %q nor %q", i, q.Query, q.Split, SplitTune, SplitHeldOut)
		}
		for name, g := range q.Relevant {
			if g < 1 || g > 3 {
				return nil, fmt.Errorf("query %d (%q): grade %d of %s is not in 1..3", i, q.Query, g, name)
			}
		}
	}
	return qs, nil
}

// Ranker returns skill names for a query text, best first.
type Ranker func(text string) []string

// Depth is how many results the metrics look at.
const Depth = 10

// Metrics are averages over a query set. A skill is relevant when it has
// any grade; nDCG uses the grades (gain 2^g - 1).
type Metrics struct {
	Queries int     `json:"queries"`
	Hit1    float64 `json:"hit@1"`    // share of queries whose first result is relevant
	Recall5 float64 `json:"recall@5"` // share of the relevant skills in the top 5
	MRR10   float64 `json:"mrr@10"`   // 1/rank of the first relevant result, 0 past 10
	NDCG10  float64 `json:"ndcg@10"`
	// Hard is the number of hard queries (see Hard) and HardHit1 their
	// Hit@1.
	Hard     int     `json:"hard"`
	HardHit1 float64 `json:"hard_hit@1"`
}

// Result is the outcome of one query.
type Result struct {
	Query   Query
	Ranked  []string // the top Depth names returned
	Hit1    bool
	Recall5 float64
	RR      float64
	NDCG    float64
}

// Evaluate runs rank over every query and averages the metrics.
func Evaluate(qs []Query, rank Ranker) (Metrics, []Result) {
	var m Metrics
	results := make([]Result, 0, len(qs))
	for _, q := range qs {
		ranked := rank(q.Query)
		ranked = ranked[:min(len(ranked), Depth)]
		r := Result{Query: q, Ranked: ranked}
		r.Hit1 = len(ranked) > 0 && q.Relevant[ranked[0]] > 0
		found := 0
		for i, name := range ranked {
			g := q.Relevant[name]
			if g == 0 {
				continue
			}
			if r.RR == 0 {
				r.RR = 1 / float64(i+1)
			}
			if i < 5 {
				found++
			}
			r.NDCG += gain(g) / math.Log2(float64(i+2))
		}
		r.Recall5 = float64(found) / float64(len(q.Relevant))
		grades := make([]int, 0, len(q.Relevant))
		for _, g := range q.Relevant {
			grades = append(grades, g)
		}
		slices.SortFunc(grades, func(a, b int) int { return b - a })
		var ideal float64
		for i, g := range grades[:min(len(grades), Depth)] {
			ideal += gain(g) / math.Log2(float64(i+2))
		}
		r.NDCG /= ideal
		results = append(results, r)

		if r.Hit1 {
			m.Hit1++
		}
		if Hard(q) {
			m.Hard++
			if r.Hit1 {
				m.HardHit1++
			}
		}
		m.Recall5 += r.Recall5
		m.MRR10 += r.RR
		m.NDCG10 += r.NDCG
	}
	if n := float64(len(qs)); n > 0 {
		m.Queries = len(qs)
		m.Hit1 /= n
		m.Recall5 /= n
		m.MRR10 /= n
		m.NDCG10 /= n
	}
	if m.Hard > 0 {
		m.HardHit1 /= float64(m.Hard)
	}
	return m, results
}

func gain(grade int) float64 { return math.Exp2(float64(grade)) - 1 }

// Engine returns a Ranker that answers from ix, which must have been
// built from docs, with skills named by Key.
func Engine(ix *search.Index, docs []search.Doc) Ranker {
	return func(text string) []string {
		hits := ix.Search(search.Query{Text: text, Limit: Depth})
		names := make([]string, len(hits))
		for i, h := range hits {
			names[i] = Key(docs[h.ID])
		}
		return names
	}
}

// Baseline returns the plain keyword ranker the engine is compared with,
// in the manner of the search of the server we replace: a skill scores
// the number of distinct query words found among the words of its name
// and description, with no weighting by rarity, no stemming and no other
// field; ties go by name. Words are split on anything but letters and
// digits and lowercased. Query stop words are dropped (those that
// search.Tokenize drops), so that the comparison is not won on "the" and
// "to" alone.
func Baseline(docs []search.Doc) Ranker {
	words := make([]map[string]bool, len(docs))
	for i, d := range docs {
		words[i] = map[string]bool{}
		for _, w := range plainWords(d.Name + " " + d.Description) {
			words[i][w] = true
		}
	}
	return func(text string) []string {
		var q []string
		for _, w := range plainWords(text) {
			if len(search.Tokenize(w)) > 0 && !slices.Contains(q, w) {
				q = append(q, w)
			}
		}
		type scored struct {
			name  string
			score int
		}
		var hits []scored
		for i, d := range docs {
			n := 0
			for _, w := range q {
				if words[i][w] {
					n++
				}
			}
			if n > 0 {
				hits = append(hits, scored{Key(d), n})
			}
		}
		slices.SortFunc(hits, func(a, b scored) int {
			if a.score != b.score {
				return b.score - a.score
			}
			return strings.Compare(a.name, b.name)
		})
		names := make([]string, 0, Depth)
		for _, h := range hits[:min(len(hits), Depth)] {
			names = append(names, h.name)
		}
		return names
	}
}

func plainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
