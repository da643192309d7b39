package search

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks run on generated libraries of 1,000, 10,000 and 100,000
// skills. Words are drawn from a Zipf distribution over a vocabulary of
// real and synthetic words, so that a few terms are in most documents and
// most terms in few, as in real text; bodies have 80 to 400 words.

var benchSizes = []int{1_000, 10_000, 100_000}

var (
	realWords = strings.Fields(`use when the user asks to create review deploy invoice payment
		customer report data file test build release document security access policy team
		email meeting schedule plan budget forecast contract legal privacy design color image
		chart table query database server cluster container pipeline log alert incident
		backup restore migrate schema api endpoint token secret key password audit risk
		compliance tax expense receipt refund order product price discount shipping stock
		hire interview onboarding review feedback goal project sprint roadmap task ticket
		support reply escalate knowledge article blog post social campaign brand voice copy
		model prompt train evaluate label feature embed vector search index rank summary`)
	categories = []string{"finance", "devops", "data", "legal", "marketing", "security", "docs",
		"hr", "design", "sales", "support", "engineering", "productivity", "ml", "project",
		"ecommerce", "writing", "research", "operations", "education"}
	libraries = []string{"", "acme", "community"}
)

// benchVocab returns real words followed by synthetic ones: about 30,000
// words in all, enough that a 100,000-skill library has a long tail.
func benchVocab() []string {
	vocab := slices.Clone(realWords)
	syll := []string{"ka", "lo", "mi", "ren", "sta", "vor", "qui", "ban", "del", "tor", "ex", "pla", "gri", "nu", "zo"}
	for i := 0; len(vocab) < 30_000; i++ {
		var b strings.Builder
		n := i
		for range 2 + i%3 {
			b.WriteString(syll[n%len(syll)])
			n /= len(syll)
			n += i % 7
		}
		vocab = append(vocab, fmt.Sprintf("%s%d", b.String(), i%97))
	}
	return vocab
}

type benchGen struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newBenchGen(seed uint64) *benchGen {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	v := benchVocab()
	return &benchGen{r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(v)-1)), vocab: v}
}

func (g *benchGen) word() string { return g.vocab[g.zipf.Uint64()] }

func (g *benchGen) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ")
}

// benchDocs generates n documents, the same ones every time.
func benchDocs(n int) []Doc {
	g := newBenchGen(uint64(n))
	docs := make([]Doc, n)
	for i := range docs {
		tags := make([]string, 2+g.r.IntN(5))
		for j := range tags {
			tags[j] = g.words(1 + g.r.IntN(3))
		}
		docs[i] = Doc{
			ID:          i,
			Name:        fmt.Sprintf("%s-%s-%d", g.word(), g.word(), i),
			Library:     libraries[g.r.IntN(len(libraries))],
			Category:    categories[g.r.IntN(len(categories))],
			Description: g.words(15+g.r.IntN(30)) + ". Use when " + g.words(5+g.r.IntN(10)) + ".",
			Tags:        tags,
			Body:        g.words(80 + g.r.IntN(320)),
		}
	}
	return docs
}

// benchQueries returns the 200 fixed queries: one to five words, a fifth
// with a half-typed last word, a tenth filtered by category, a few exact
// names.
func benchQueries(docs []Doc) []Query {
	g := newBenchGen(42)
	qs := make([]Query, 200)
	for i := range qs {
		text := g.words(1 + g.r.IntN(5))
		switch {
		case i%5 == 0:
			last := g.word()
			text += " " + last[:max(minPrefixLen, len(last)*2/3)]
		case i%50 == 1:
			text = docs[g.r.IntN(len(docs))].Name
		default:
			text += " " // complete words: no prefix expansion
		}
		qs[i] = Query{Text: text}
		if i%10 == 3 {
			qs[i].Category = categories[g.r.IntN(len(categories))]
		}
	}
	return qs
}

var benchCache sync.Map // size → []Doc

func cachedDocs(n int) []Doc {
	if d, ok := benchCache.Load(n); ok {
		return d.([]Doc)
	}
	d := benchDocs(n)
	benchCache.Store(n, d)
	return d
}

// BenchmarkBuild reports the build time per library and the heap the
// index holds (heap-MB) once built.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			docs := cachedDocs(n)
			var ix *Index
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ix = Build(docs, 0)
			}
			b.StopTimer()
			ix = nil
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ix = Build(docs, 0)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
			b.ReportMetric(float64(len(ix.terms)), "terms")
			runtime.KeepAlive(ix)
		})
	}
}

// BenchmarkDecode reads back a saved index, as a warm start does instead
// of Build, and reports its size on disk.
func BenchmarkDecode(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			var buf bytes.Buffer
			if err := Build(cachedDocs(n), 0).Encode(&buf); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if _, err := Decode(buf.Bytes()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSearch runs the 200 fixed queries in turn and reports the
// median and 95th percentile latency of a single query besides the mean.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			docs := cachedDocs(n)
			ix := Build(docs, 0)
			qs := benchQueries(docs)
			for _, q := range qs { // warm the scratch pool
				ix.Search(q)
			}
			lat := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				start := time.Now()
				ix.Search(qs[i%len(qs)])
				if len(lat) < cap(lat) {
					lat = append(lat, time.Since(start))
				}
				i++
			}
			b.StopTimer()
			p50, p95 := percentiles(lat)
			b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(p95.Nanoseconds()), "p95-ns")
		})
	}
}

func percentiles(lat []time.Duration) (p50, p95 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)-1, len(s)*95/100)]
}

var latencyFlag = flag.Bool("latency", false, "print p50/p95 search latency at 1k/10k/100k generated docs")

// TestLatencyReport prints p50 and p95 over the 200 queries at each size
// (run with -v -run LatencyReport -latency). It asserts nothing about
// time: machines differ, and the benchmark is the measure.
func TestLatencyReport(t *testing.T) {
	if !*latencyFlag {
		t.Skip("run with -latency to print the latency report")
	}
	for _, n := range benchSizes {
		docs := cachedDocs(n)
		start := time.Now()
		ix := Build(docs, 0)
		build := time.Since(start)
		qs := benchQueries(docs)
		var lat []time.Duration
		hits := 0
		for round := range 5 {
			for _, q := range qs {
				s := time.Now()
				h := ix.Search(q)
				if round > 0 { // the first round warms the pool
					lat = append(lat, time.Since(s))
					hits += len(h)
				}
			}
		}
		p50, p95 := percentiles(lat)
		t.Logf("docs=%-7d build %-8v terms %-7d p50 %-8v p95 %-8v (%.1f hits/query)",
			n, build.Round(time.Millisecond), len(ix.terms), p50, p95, float64(hits)/float64(len(lat)))
	}
}
