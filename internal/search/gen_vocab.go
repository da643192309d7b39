//go:build ignore

// gen_vocab writes vocab.bin, the related-word table that query expansion
// reads (vocab.go), from the WordNet 3.0 database that Debian packages as
// wordnet-base (licence: /usr/share/doc/wordnet-base/copyright, which
// allows copying and distributing derived data with its notice, which
// vocab_LICENSE.txt carries).
//
//	go run gen_vocab.go [-wordnet /usr/share/wordnet] [-out vocab.bin]
//
// (go generate ./internal/search runs it.) The table is keyed by words as
// a query holds them, folded but not stemmed ("care" and "car" share a
// stem and no sense), and relates each to index terms: related words are
// analysed as the index analyses text (search.Tokenize). So the table
// depends on the analysis, and TestVocabGenerated fails when it differs
// from what this program writes. The same WordNet gives the same bytes.
//
// For each single word of WordNet, in its most frequent senses, the
// related words are: the other words of the sense (synonyms), the words
// it is derived from or to ("treat" and "treatment"), and the words of
// the senses one step more general or more specific ("care" and
// "treatment"). The first are "close", the others "broad" (vocab.go gives
// them their weights).
package main

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/search"
)

// Limits of the table, which keep it small and its expansions on topic.
const (
	// closeSenses and broadSenses are how many of a word's senses, most
	// frequent first, give close and broad relations: a word's rare
	// senses ("care" as a verb meaning to mind) mostly add noise.
	closeSenses = 3
	broadSenses = 2
	// maxRelated bounds the related terms of one term, close first.
	maxRelated = 24
	// maxBroadFanout skips the broad relations of a sense that has more
	// specific senses than this: "act" has hundreds, none of them close.
	maxBroadFanout = 40
)

type synset struct {
	words      []string
	close      []ptr // derivations
	broad      []ptr // hypernyms and hyponyms
	pos        byte
	narrowerCt int
}

type ptr struct {
	pos    byte
	offset int
	// source and target word numbers (1-based), 0 for the whole synset
	src, dst int
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "folder of the WordNet 3.0 database files")
	out := flag.String("out", "vocab.bin", "file to write")
	flag.Parse()
	log.SetFlags(0)

	synsets := map[string]*synset{} // by pos + offset
	key := func(pos byte, off int) string { return string(pos) + strconv.Itoa(off) }
	for _, p := range []struct {
		file string
		pos  byte
	}{{"data.noun", 'n'}, {"data.verb", 'v'}, {"data.adj", 'a'}, {"data.adv", 'r'}} {
		err := eachLine(filepath.Join(*dir, p.file), func(line string) error {
			if strings.HasPrefix(line, " ") {
				return nil // the licence header
			}
			fields := strings.Fields(strings.SplitN(line, " | ", 2)[0])
			off, _ := strconv.Atoi(fields[0])
			wcnt, err := strconv.ParseInt(fields[3], 16, 32)
			if err != nil {
				return fmt.Errorf("%s: word count %q", p.file, fields[3])
			}
			s := &synset{pos: p.pos}
			i := 4
			for range wcnt {
				w := fields[i]
				if j := strings.IndexByte(w, '('); j > 0 {
					w = w[:j] // adjective markers: "(a)", "(p)"
				}
				s.words = append(s.words, strings.ToLower(w))
				i += 2
			}
			pcnt, _ := strconv.Atoi(fields[i])
			i++
			for range pcnt {
				sym, offs, pos, st := fields[i], fields[i+1], fields[i+2][0], fields[i+3]
				i += 4
				o, _ := strconv.Atoi(offs)
				src, _ := strconv.ParseInt(st[:2], 16, 32)
				dst, _ := strconv.ParseInt(st[2:], 16, 32)
				if pos == 's' {
					pos = 'a'
				}
				pt := ptr{pos: pos, offset: o, src: int(src), dst: int(dst)}
				switch sym {
				case "+": // derivationally related form
					s.close = append(s.close, pt)
				case "@", "@i": // hypernym
					s.broad = append(s.broad, pt)
				case "~", "~i": // hyponym
					s.broad = append(s.broad, pt)
					s.narrowerCt++
				}
			}
			synsets[key(p.pos, off)] = s
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	type rel struct {
		term  string
		broad bool
	}
	related := map[string][]rel{} // by term
	var self string
	add := func(from, to string, broad bool) {
		if to == self {
			return
		}
		for i, r := range related[from] {
			if r.term == to {
				if r.broad && !broad {
					related[from][i].broad = false
				}
				return
			}
		}
		related[from] = append(related[from], rel{to, broad})
	}
	termOf := func(word string) (string, bool) {
		if strings.ContainsAny(word, "_-'.") || len(word) < 3 {
			return "", false // collocations and abbreviations
		}
		for _, r := range word {
			if r < 'a' || r > 'z' {
				return "", false
			}
		}
		ts := search.Tokenize(word)
		if len(ts) != 1 {
			return "", false // a stop word
		}
		return ts[0], true
	}
	for _, p := range []struct {
		file string
		pos  byte
	}{{"index.noun", 'n'}, {"index.verb", 'v'}, {"index.adj", 'a'}, {"index.adv", 'r'}} {
		err := eachLine(filepath.Join(*dir, p.file), func(line string) error {
			if strings.HasPrefix(line, " ") {
				return nil
			}
			f := strings.Fields(line)
			lemma := f[0]
			var ok bool
			self, ok = termOf(lemma)
			if !ok {
				return nil
			}
			from := lemma
			nsyn, _ := strconv.Atoi(f[2])
			pcnt, _ := strconv.Atoi(f[3])
			tagged, _ := strconv.Atoi(f[4+pcnt+1])
			offs := f[4+pcnt+2:]
			if len(offs) != nsyn {
				return fmt.Errorf("%s: %s: %d senses listed, %d offsets", p.file, lemma, nsyn, len(offs))
			}
			for sense, o := range offs {
				off, _ := strconv.Atoi(o)
				s := synsets[key(p.pos, off)]
				if s == nil {
					return fmt.Errorf("%s: %s: no synset %s", p.file, lemma, o)
				}
				if sense >= min(closeSenses, tagged) {
					break // a rare sense: "git" as a person
				}
				me := slices.Index(s.words, lemma) + 1
				for _, w := range s.words {
					if t, ok := termOf(w); ok {
						add(from, t, false)
					}
				}
				for _, pt := range s.close {
					if pt.src != 0 && pt.src != me {
						continue // another word's derivation
					}
					d := synsets[key(pt.pos, pt.offset)]
					for j, w := range d.words {
						if pt.dst != 0 && pt.dst != j+1 {
							continue
						}
						if t, ok := termOf(w); ok {
							add(from, t, false)
						}
					}
				}
				if sense >= min(broadSenses, tagged) || s.narrowerCt > maxBroadFanout {
					continue
				}
				for _, pt := range s.broad {
					d := synsets[key(pt.pos, pt.offset)]
					for _, w := range d.words {
						if t, ok := termOf(w); ok {
							add(from, t, true)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	terms := make([]string, 0, len(related))
	seen := map[string]bool{}
	for from, rs := range related {
		if !seen[from] {
			seen[from] = true
			terms = append(terms, from)
		}
		for _, r := range rs {
			if !seen[r.term] {
				seen[r.term] = true
				terms = append(terms, r.term)
			}
		}
	}
	slices.Sort(terms)
	num := make(map[string]uint32, len(terms))
	for i, t := range terms {
		num[t] = uint32(i)
	}

	// The layout vocab.go reads in place: a header, the term offsets and
	// bytes, then per term the offsets of its related list and the lists,
	// each entry a term number shifted left once, its low bit set for a
	// broad relation.
	var b []byte
	b = append(b, vocabMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(terms)))
	off := uint32(0)
	for _, t := range terms {
		b = binary.LittleEndian.AppendUint32(b, off)
		off += uint32(len(t))
	}
	b = binary.LittleEndian.AppendUint32(b, off)
	for _, t := range terms {
		b = append(b, t...)
	}
	n := uint32(0)
	lists := make([][]uint32, len(terms))
	for i, t := range terms {
		rs := related[t]
		// Close relations first, then broad; each group in WordNet's
		// order (the most frequent sense first).
		slices.SortStableFunc(rs, func(x, y rel) int {
			return cmp.Compare(btoi(x.broad), btoi(y.broad))
		})
		rs = rs[:min(len(rs), maxRelated)]
		for _, r := range rs {
			e := num[r.term] << 1
			if r.broad {
				e |= 1
			}
			lists[i] = append(lists[i], e)
		}
	}
	for _, l := range lists {
		b = binary.LittleEndian.AppendUint32(b, n)
		n += uint32(len(l))
	}
	b = binary.LittleEndian.AppendUint32(b, n)
	for _, l := range lists {
		for _, e := range l {
			b = binary.LittleEndian.AppendUint32(b, e)
		}
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s: %d terms, %d relations, %d bytes", *out, len(terms), n, len(b))
}

// vocabMagic opens the file; vocab.go checks it.
const vocabMagic = "skills-mcp vocab v1\n"

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
