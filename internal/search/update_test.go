package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestUpdateEqualsBuild changes random documents of an index (edits,
// removals, insertions, at random places) and checks that Update, given
// the bodies of the changed documents only, returns exactly the index
// Build returns for the new documents, again and again from its own
// result.
func TestUpdateEqualsBuild(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 9))
			g := newBenchGen(seed)
			docs := benchDocs(120)
			prev := Build(docs, 2)
			next := 1000
			for step := range 10 {
				var cur []Doc
				var from []int
				for o, d := range docs {
					switch r.IntN(20) {
					case 0: // removed
						continue
					case 1: // edited
						d.Body = g.words(50 + r.IntN(100))
						d.Description = g.words(10)
						cur, from = append(cur, d), append(from, -1)
					case 2: // a new one before it
						n := Doc{Name: fmt.Sprintf("new-%d", next), Library: d.Library, Category: "fresh", Tags: []string{g.word()}, Body: g.words(60)}
						next++
						cur, from = append(cur, n, d), append(from, -1, o)
					default:
						cur, from = append(cur, d), append(from, o)
					}
				}
				for i := range cur {
					cur[i].ID = i
				}
				blank := make([]Doc, len(cur))
				copy(blank, cur)
				for i, o := range from {
					if o >= 0 {
						blank[i].Body = "" // must not be read
					}
				}
				got := Update(prev, blank, from, 2)
				want := Build(cur, 2)
				if !reflect.DeepEqual(normalized(got), normalized(want)) || !reflect.DeepEqual(got.lens, want.lens) {
					t.Fatalf("step %d: Update differs from Build", step)
				}
				docs, prev = cur, got
			}
			if !prev.Updatable() {
				t.Error("an updated index cannot be updated")
			}
		})
	}
}

// A decoded index keeps no lengths: Update cannot start from it.
func TestDecodedIndexNotUpdatable(t *testing.T) {
	ix := Build(persistDocs(), 1)
	got, err := Decode(encoded(t, ix))
	if err != nil {
		t.Fatal(err)
	}
	if got.Updatable() || !ix.Updatable() {
		t.Errorf("Updatable: decoded %v, built %v", got.Updatable(), ix.Updatable())
	}
}

func BenchmarkUpdateOne(b *testing.B) {
	docs := benchDocs(5000)
	prev := Build(docs, 1)
	from := make([]int, len(docs))
	cur := make([]Doc, len(docs))
	copy(cur, docs)
	for i := range from {
		from[i] = i
		cur[i].Body = ""
	}
	from[2500] = -1
	cur[2500].Body = docs[2500].Body + " edited"
	for b.Loop() {
		Update(prev, cur, from, 1)
	}
}

func BenchmarkBuild5000(b *testing.B) {
	docs := benchDocs(5000)
	for b.Loop() {
		Build(docs, 1)
	}
}
