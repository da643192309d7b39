//go:build ignore

// gen_vectors writes vectors.bin, the word vectors that the second stage
// of ranking compares queries and skills with (vectors.go, vecindex.go).
// We train them here from text we ship: the names and descriptions of
// the bundled hub catalog (internal/hub/index/bundled.json), each one
// context, leaving out the libraries of the search evaluation set
// (testdata/searcheval/libraries.txt) and other libraries' skills named
// as the set's labelled ones, so that the vectors do not learn from the
// skills they are measured on.
//
// Words are analysed as the index analyses text (search.Tokenize). Two
// terms co-occur when a context holds both; their association is the
// positive pointwise mutual information with the context distribution
// smoothed (exponent 0.75), and the vectors are the leading left singular
// vectors of that matrix, computed by randomised subspace iteration from
// a fixed seed, normalised and quantised to int8. The flags that vary
// this were measured on the tuning half of the realistic set and are left
// at their defaults (docs/decisions/2026-12-04-search-second-stage.md,
// which also says why WordNet's senses, measured as a second corpus,
// are not used).
//
//	go run gen_vectors.go [-dims 64] [-p 0] [-out vectors.bin]
//
// (go generate ./internal/search runs it.) The same inputs give the same
// bytes on the same architecture; TestVectorsGenerated checks them.
package main

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"flag"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

const (
	// dims is the length of a vector, oversample the extra dimensions the
	// randomised decomposition carries, and powerIters its subspace
	// iterations.
	dims       = 64
	oversample = 16
	powerIters = 4
	// minDF is the fewest contexts a term must be in to get a vector:
	// rarer terms have too few neighbours to place.
	minDF = 3
	// maxContext bounds the distinct terms of a context that count: a
	// long description pairs every word with every other.
	maxContext = 48
	// cdsAlpha smooths the context distribution of the PMI, which
	// otherwise overrates rare contexts.
	cdsAlpha = 0.75
)

func main() {
	catalog := flag.String("catalog", "../hub/index/bundled.json", "the bundled hub catalog")
	exclude := flag.String("exclude", "../../testdata/searcheval/libraries.txt", "libraries whose descriptions are left out")
	labels := flag.String("labels", "../../testdata/searcheval/queries.json", "the evaluation set, whose labelled skills' namesakes are left out")
	out := flag.String("out", "vectors.bin", "file to write")
	dims := flag.Int("dims", dims, "dimensions of a vector")
	power := flag.Float64("p", 0, "exponent of the singular values that scale the vectors")
	flag.Parse()
	log.SetFlags(0)

	var contexts [][]string
	{
		skip := map[string]bool{}
		if err := eachLine(*exclude, func(line string) error {
			if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(line, "#") {
				skip[f[1]] = true
			}
			return nil
		}); err != nil {
			log.Fatal(err)
		}
		data, err := os.ReadFile(*catalog)
		if err != nil {
			log.Fatal(err)
		}
		var snap struct {
			Items []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Repository  string `json:"repository"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &snap); err != nil {
			log.Fatalf("%s: %v", *catalog, err)
		}
		// Copies of the evaluation's skills in other libraries are left
		// out too: a skill of the same name as one the set labels.
		var qs []struct {
			Relevant map[string]int `json:"relevant"`
		}
		data, err = os.ReadFile(*labels)
		if err == nil {
			err = json.Unmarshal(data, &qs)
		}
		if err != nil {
			log.Fatalf("%s: %v", *labels, err)
		}
		labelled := map[string]bool{}
		for _, q := range qs {
			for key := range q.Relevant {
				labelled[key[strings.LastIndexByte(key, '/')+1:]] = true
			}
		}
		for _, it := range snap.Items {
			if !skip[it.Repository] && !labelled[it.Name] {
				contexts = append(contexts, search.Tokenize(it.Name+" "+it.Description))
			}
		}
	}
	log.Printf("%d contexts (catalog descriptions)", len(contexts))

	// The terms, by the number of contexts that hold them.
	df := map[string]int{}
	for i, c := range contexts {
		c = distinct(c)
		contexts[i] = c
		for _, t := range c {
			df[t]++
		}
	}
	var terms []string
	for t, n := range df {
		if n >= minDF && len(t) >= 2 && strings.Trim(t, "0123456789") != "" {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	num := make(map[string]int32, len(terms))
	for i, t := range terms {
		num[t] = int32(i)
	}
	n := len(terms)

	// Co-occurrence counts, then PPMI, as a sparse symmetric matrix in
	// compressed rows.
	pairs := map[uint64]float64{}
	var ids []int32
	for _, c := range contexts {
		ids = ids[:0]
		for _, t := range c {
			if i, ok := num[t]; ok {
				ids = append(ids, i)
			}
		}
		if len(ids) > maxContext {
			ids = ids[:maxContext]
		}
		for a := range ids {
			for b := range ids {
				if a != b {
					pairs[uint64(ids[a])<<32|uint64(ids[b])]++
				}
			}
		}
	}
	row := make([]float64, n)
	var total float64
	for k, v := range pairs {
		row[k>>32] += v
		total += v
	}
	ctx := make([]float64, n)
	var ctxTotal float64
	for i, v := range row {
		ctx[i] = math.Pow(v, cdsAlpha)
		ctxTotal += ctx[i]
	}
	keys := make([]uint64, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	m := sparse{n: n, off: make([]int, n+1)}
	for _, k := range keys {
		i, j := int(k>>32), int(k&0xffffffff)
		pmi := math.Log(pairs[k] / total / (row[i] / total * ctx[j] / ctxTotal))
		if pmi > 0 {
			m.col = append(m.col, int32(j))
			m.val = append(m.val, pmi)
			m.off[i+1]++
		}
	}
	for i := range n {
		m.off[i+1] += m.off[i]
	}
	pairs = nil
	log.Printf("%d terms, %d positive associations", n, len(m.val))

	u, s := decompose(&m, *dims+oversample, powerIters)

	// Vectors: U·Σ^p over the first dims, normalised, as int8. A term
	// with no positive association has none and is left out.
	var kept []string
	var vecs []int8
	v := make([]float64, *dims)
	for i := range n {
		var norm float64
		for k := range *dims {
			v[k] = u[k][i] * math.Pow(s[k], *power)
			norm += v[k] * v[k]
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		kept = append(kept, terms[i])
		for k := range *dims {
			vecs = append(vecs, int8(math.Round(127*v[k]/norm)))
		}
	}
	terms, n = kept, len(kept)

	// The layout vectors.go reads in place: a header, the term offsets
	// and bytes, then the vectors, dims bytes each, in term order.
	var b []byte
	b = append(b, vectorsMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	b = binary.LittleEndian.AppendUint32(b, uint32(*dims))
	off := uint32(0)
	for _, t := range terms {
		b = binary.LittleEndian.AppendUint32(b, off)
		off += uint32(len(t))
	}
	b = binary.LittleEndian.AppendUint32(b, off)
	for _, t := range terms {
		b = append(b, t...)
	}
	for _, x := range vecs {
		b = append(b, byte(x))
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %d terms of %d dimensions, %d bytes", *out, n, *dims, len(b))
}

// vectorsMagic opens the file; vectors.go checks it.
const vectorsMagic = "skills-mcp vectors v1\n"

// sparse is a square matrix in compressed rows.
type sparse struct {
	n   int
	off []int
	col []int32
	val []float64
}

// mul returns m·x for a block of column vectors x (k vectors of m.n).
func (m *sparse) mul(x [][]float64) [][]float64 {
	y := make([][]float64, len(x))
	for k := range x {
		y[k] = make([]float64, m.n)
		xk, yk := x[k], y[k]
		for i := range m.n {
			var sum float64
			for p := m.off[i]; p < m.off[i+1]; p++ {
				sum += m.val[p] * xk[m.col[p]]
			}
			yk[i] = sum
		}
	}
	return y
}

// decompose returns the leading singular vectors (as columns, u[k]) and
// values of the symmetric matrix m, by randomised subspace iteration
// with l vectors and iters iterations from a fixed seed.
func decompose(m *sparse, l, iters int) (u [][]float64, s []float64) {
	r := rand.New(rand.NewPCG(1, 2))
	q := make([][]float64, l)
	for k := range q {
		q[k] = make([]float64, m.n)
		for i := range q[k] {
			q[k][i] = r.NormFloat64()
		}
	}
	orthonormalise(q)
	for range iters {
		q = m.mul(q)
		orthonormalise(q)
	}
	// B = Qᵀ·M·Q is small and symmetric; its eigenvectors rotate Q into
	// the singular vectors.
	mq := m.mul(q)
	b := make([][]float64, l)
	for a := range l {
		b[a] = make([]float64, l)
		for c := range l {
			b[a][c] = dot(q[a], mq[c])
		}
	}
	vals, vecs := jacobi(b)
	order := make([]int, l)
	for i := range order {
		order[i] = i
	}
	// PPMI is not positive definite: order by magnitude, keep the sign's
	// dimensions as they are (negative ones are rare and small).
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(math.Abs(vals[y]), math.Abs(vals[x])) })
	u = make([][]float64, l)
	s = make([]float64, l)
	for k, o := range order {
		s[k] = math.Abs(vals[o])
		u[k] = make([]float64, m.n)
		for a := range l {
			if c := vecs[a][o]; c != 0 {
				for i := range m.n {
					u[k][i] += c * q[a][i]
				}
			}
		}
	}
	return u, s
}

// orthonormalise makes the vectors of q orthonormal in place (modified
// Gram-Schmidt, twice for stability).
func orthonormalise(q [][]float64) {
	for range 2 {
		for k := range q {
			for j := range k {
				d := dot(q[k], q[j])
				for i := range q[k] {
					q[k][i] -= d * q[j][i]
				}
			}
			norm := math.Sqrt(dot(q[k], q[k]))
			if norm == 0 {
				continue
			}
			for i := range q[k] {
				q[k][i] /= norm
			}
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// jacobi returns the eigenvalues and eigenvectors (as columns) of the
// symmetric matrix a, by cyclic Jacobi rotations.
func jacobi(a [][]float64) ([]float64, [][]float64) {
	n := len(a)
	v := make([][]float64, n)
	for i := range v {
		v[i] = make([]float64, n)
		v[i][i] = 1
	}
	for range 100 {
		off := 0.0
		for p := range n {
			for q := p + 1; q < n; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				if math.Abs(a[p][q]) < 1e-300 {
					continue
				}
				theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range n {
					akp, akq := a[k][p], a[k][q]
					a[k][p], a[k][q] = c*akp-s*akq, s*akp+c*akq
				}
				for k := range n {
					apk, aqk := a[p][k], a[q][k]
					a[p][k], a[q][k] = c*apk-s*aqk, s*apk+c*aqk
				}
				for k := range n {
					vkp, vkq := v[k][p], v[k][q]
					v[k][p], v[k][q] = c*vkp-s*vkq, s*vkp+c*vkq
				}
			}
		}
	}
	vals := make([]float64, n)
	for i := range n {
		vals[i] = a[i][i]
	}
	return vals, v
}

// distinct returns the distinct terms of c in their first order.
func distinct(c []string) []string {
	seen := make(map[string]bool, len(c))
	out := c[:0]
	for _, t := range c {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func eachLine(name string, f func(string) error) error {
	file, err := os.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := f(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
