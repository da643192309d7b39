// Command skills-searcheval measures the quality of skills-mcp's search on
// a labelled query set and compares it with a plain keyword baseline.
//
//	go run ./cmd/skills-searcheval [-set synthetic|real] [-lib DIR] [-queries FILE] [-v] [-json] [-ablation]
//
// prints Hit@1, Recall@5, MRR@10, nDCG@10 and the Hit@1 of the hard
// queries (no word of the answer's name) for the engine (package
// internal/search), on each half of a set that has them, and for the
// baseline; -v also lists the queries the engine does not answer first,
// and -ablation compares the current ranking with the one it replaced
// on each half. Run it from the repository root: the synthetic set is
// testdata/search, the realistic one testdata/searcheval, whose
// libraries scripts/searcheval-libraries.sh extracts first.
//
//	go run ./cmd/skills-searcheval gen [-out DIR]
//
// regenerates the evaluation library from the table in skills.txt; it
// writes the same bytes every time.
package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/search"
	"github.com/skills-mcp/skills-mcp/internal/search/eval"
)

const (
	defaultLib     = "testdata/search/library"
	defaultQueries = "testdata/search/queries.json"
	// The realistic set (-set real): public libraries at pinned commits,
	// extracted by scripts/searcheval-libraries.sh, and needs written as
	// users state them, split into a tuning and a held-out half.
	realLibs    = "testdata/searcheval/library"
	realQueries = "testdata/searcheval/queries.json"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	var err error
	if len(args) > 0 && args[0] == "gen" {
		err = runGen(args[1:], stdout, stderr)
	} else {
		err = runEval(args, stdout, stderr)
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}

func runEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("skills-searcheval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	set := fs.String("set", "synthetic", "query set: synthetic (testdata/search) or real (testdata/searcheval, a folder of libraries)")
	lib := fs.String("lib", "", "skills library to search (default: the set's)")
	queries := fs.String("queries", "", "labelled queries, JSON (default: the set's)")
	verbose := fs.Bool("v", false, "list the queries whose first result is not relevant")
	asJSON := fs.Bool("json", false, "print the metrics as JSON")
	ablation := fs.Bool("ablation", false, "measure the ranking with each of its parts turned off, on each half of the set")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: skills-searcheval [-set synthetic|real] [-lib DIR] [-queries FILE] [-v] [-json] [-ablation]\n"+
			"       skills-searcheval gen [-out DIR]\n\n"+
			"Measure search quality on a labelled query set, against a keyword baseline.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	load := eval.LoadLibrary
	switch *set {
	case "synthetic":
		*lib, *queries = cmp.Or(*lib, defaultLib), cmp.Or(*queries, defaultQueries)
	case "real":
		*lib, *queries = cmp.Or(*lib, realLibs), cmp.Or(*queries, realQueries)
		load = eval.LoadLibraries
		if _, err := os.Stat(*lib); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s is missing: extract the libraries first with scripts/searcheval-libraries.sh", *lib)
		}
	default:
		return fmt.Errorf("-set %q: want synthetic or real", *set)
	}

	docs, err := load(os.DirFS(*lib))
	if err != nil {
		return fmt.Errorf("loading the library: %w", err)
	}
	f, err := os.Open(*queries)
	if err != nil {
		return err
	}
	qs, err := eval.LoadQueries(f)
	f.Close()
	if err != nil {
		return err
	}
	for _, q := range qs {
		for name := range q.Relevant {
			if !hasSkill(docs, name) {
				return fmt.Errorf("query %q: no skill named %s in %s", q.Query, name, *lib)
			}
		}
	}

	if *ablation {
		return runAblation(stdout, docs, qs, *asJSON)
	}
	start := time.Now()
	ix := search.Build(docs, 0)
	build := time.Since(start)
	ours, results := eval.Evaluate(qs, eval.Engine(ix, docs))
	baseline, _ := eval.Evaluate(qs, eval.Baseline(docs))
	tune, _ := eval.Evaluate(eval.Only(qs, eval.SplitTune), eval.Engine(ix, docs))
	held, _ := eval.Evaluate(eval.Only(qs, eval.SplitHeldOut), eval.Engine(ix, docs))

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"skills": len(docs), "engine": ours, "tune": tune, "held-out": held, "baseline": baseline})
	}
	fmt.Fprintf(stdout, "%d skills, %d queries (index built in %v)\n\n", len(docs), len(qs), build.Round(time.Microsecond))
	fmt.Fprintf(stdout, "%-30s %7s %9s %7s %8s %11s\n", "ranker", "Hit@1", "Recall@5", "MRR@10", "nDCG@10", "hard Hit@1")
	row := func(name string, m eval.Metrics) {
		fmt.Fprintf(stdout, "%-30s %7.3f %9.3f %7.3f %8.3f %6.3f/%-4d\n", name, m.Hit1, m.Recall5, m.MRR10, m.NDCG10, m.HardHit1, m.Hard)
	}
	row("engine (internal/search)", ours)
	if tune.Queries > 0 && held.Queries > 0 {
		row("  tuning half", tune)
		row("  held-out half", held)
	}
	row("keyword baseline", baseline)
	if *verbose {
		fmt.Fprintf(stdout, "\nQueries whose first result is not relevant:\n")
		for _, r := range results {
			if r.Hit1 {
				continue
			}
			fmt.Fprintf(stdout, "\n  %q\n    want %v\n    got  %s\n", r.Query.Query, r.Query.Relevant, strings.Join(r.Ranked[:min(5, len(r.Ranked))], ", "))
		}
	}
	return nil
}

func hasSkill(docs []search.Doc, name string) bool {
	for _, d := range docs {
		if eval.Key(d) == name {
			return true
		}
	}
	return false
}

// An ablation is a ranking -ablation measures: the index's ranking r,
// and for the second stage either its shipped weights (fit false) or
// weights fitted on the tuning half with only the features in use.
type ablation struct {
	name string
	r    search.Ranking
	fit  bool
	use  []int // features fitted, besides BM25F's
}

// ablations are the rankings -ablation compares: the current one, the
// first stage alone, the weights before the realistic set, and the second
// stage refitted on the tuning half. The parts measured and left out
// (more features, WordNet relatives, the vectors' nearest skills as
// candidates) are in docs/decisions/2026-12-04-search-second-stage.md.
var ablations = []ablation{
	{name: "current ranking"},
	{name: "BM25F only (no vectors)", r: search.Ranking{BM25FOnly: true}},
	{name: "prior weights (3147e6f)", r: search.Ranking{PriorWeights: true, BM25FOnly: true}},
	{name: "vectors refitted", fit: true, use: []int{search.FeatVector}},
}

// runAblation prints the metrics of each ranking in ablations on each
// half of the set, and for fitted ones the nDCG@10 of two-fold
// cross-validation within the tuning half (fitted on one half of it,
// measured on the other), which says whether fitting them overfits
// without looking at the held-out half.
func runAblation(stdout io.Writer, docs []search.Doc, qs []eval.Query, asJSON bool) error {
	type row struct {
		Ranking string       `json:"ranking"`
		Split   string       `json:"split"`
		Metrics eval.Metrics `json:"metrics"`
		CV      float64      `json:"cv_ndcg@10,omitempty"`
		Weights []float64    `json:"weights,omitempty"`
	}
	tune := eval.Only(qs, eval.SplitTune)
	var folds [2][]eval.Query
	for i, q := range tune {
		folds[i%2] = append(folds[i%2], q)
	}
	var rows []row
	pool := eval.NewPool(search.Build(docs, 0), docs, qs)
	for _, a := range ablations {
		if a.fit && len(tune) == 0 {
			continue // a set without halves has nothing to fit on
		}
		rank := eval.Engine(search.BuildRanked(docs, 0, a.r), docs)
		cv := 0.0
		var weights []float64
		if a.fit {
			var without []int
			for f := range search.NumFeatures {
				if f != search.FeatBM25F && !slices.Contains(a.use, f) {
					without = append(without, f)
				}
			}
			w := pool.Fit(tune, without)
			rank = pool.Ranker(&w)
			weights = w[:]
			for k := range folds {
				wk := pool.Fit(folds[k], without)
				m, _ := eval.Evaluate(folds[1-k], pool.Ranker(&wk))
				cv += m.NDCG10 / 2
			}
		}
		for _, split := range []string{eval.SplitTune, eval.SplitHeldOut, ""} {
			if split != "" && len(eval.Only(qs, split)) == 0 {
				continue
			}
			m, _ := eval.Evaluate(eval.Only(qs, split), rank)
			r := row{Ranking: a.name, Split: cmp.Or(split, "all"), Metrics: m}
			if split == eval.SplitTune {
				r.CV, r.Weights = cv, weights
			}
			rows = append(rows, r)
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	fmt.Fprintf(stdout, "%d skills, %d queries\n\n", len(docs), len(qs))
	fmt.Fprintf(stdout, "%-30s %-9s %7s %9s %7s %8s %11s %8s\n", "ranking", "half", "Hit@1", "Recall@5", "MRR@10", "nDCG@10", "hard Hit@1", "CV nDCG")
	for _, r := range rows {
		m := r.Metrics
		fmt.Fprintf(stdout, "%-30s %-9s %7.3f %9.3f %7.3f %8.3f %6.3f/%-4d", r.Ranking, r.Split, m.Hit1, m.Recall5, m.MRR10, m.NDCG10, m.HardHit1, m.Hard)
		if r.CV > 0 {
			fmt.Fprintf(stdout, " %8.3f", r.CV)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
