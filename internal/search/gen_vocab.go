//go:build ignore

// gen_vocab writes vocab.bin, the related-term table that the second
// stage of ranking reads (vocab.go, rerank.go), from the WordNet 3.0
// database that Debian packages as wordnet-base (licence:
// /usr/share/doc/wordnet-base/copyright, which allows copying and
// distributing derived data with its notice, which vocab_LICENSE.txt
// carries).
//
//	go run gen_vocab.go [-wordnet /usr/share/wordnet] [-out vocab.bin]
//
// (go generate ./internal/search runs it.) The table relates index terms
// to index terms: WordNet's words are analysed as the index analyses
// text (search.Tokenize), so the table depends on the analysis, and
// TestVocabGenerated fails when it differs from what this program
// writes. The same WordNet gives the same bytes.
//
// For each single word of WordNet, in its most frequent senses, the
// related terms are of four kinds, which the re-ranker weighs apart:
//
//   - close: the other words of the sense (synonyms) and the words it is
//     derived from or to ("treat" and "treatment");
//   - broad: the words of the senses one step more general or more
//     specific ("care" and "treatment");
//   - topic: the words of the sense's topic domain, and of the senses in
//     a domain named by the word ("planet" and "astronomy");
//   - gloss: the content words of the sense's definition ("mascot" and
//     "luck", "symbol").
package main

import (
	"bufio"
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

// Kinds of relation, in the order of their bits in an entry.
const (
	relClose = iota
	relBroad
	relTopic
	relGloss
	numRel
)

// Limits of the table, which keep it small and its relations on topic.
const (
	// closeSenses and broadSenses are how many of a word's senses, most
	// frequent first, give close relations, and broad, topic and gloss
	// ones: a word's rare senses ("care" as a verb meaning to mind)
	// mostly add noise.
	closeSenses = 3
	broadSenses = 2
	// maxPerKind bounds the related terms of one term per kind, in
	// WordNet's order (the most frequent sense first).
	maxPerKind = 24
	// maxBroadFanout skips the broad relations of a sense that has more
	// specific senses than this: "act" has hundreds, none of them close.
	maxBroadFanout = 40
	// maxDomainMembers skips the members of a topic domain larger than
	// this ("medicine" has hundreds).
	maxDomainMembers = 60
)

type synset struct {
	words      []string
	close      []ptr // derivations
	broad      []ptr // hypernyms and hyponyms
	domain     []ptr // topic domains of the synset
	members    []ptr // synsets in the topic domain this synset names
	gloss      string
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
			head, gloss, _ := strings.Cut(line, " | ")
			fields := strings.Fields(head)
			off, _ := strconv.Atoi(fields[0])
			wcnt, err := strconv.ParseInt(fields[3], 16, 32)
			if err != nil {
				return fmt.Errorf("%s: word count %q", p.file, fields[3])
			}
			s := &synset{gloss: definition(gloss)}
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
				case ";c": // domain of synset: topic
					s.domain = append(s.domain, pt)
				case "-c": // member of this domain: topic
					s.members = append(s.members, pt)
				}
			}
			synsets[key(p.pos, off)] = s
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	related := map[string]*[numRel][]string{} // by term
	var self string
	add := func(from, to string, kind int) {
		if to == self || from == to {
			return
		}
		r := related[from]
		if r == nil {
			r = new([numRel][]string)
			related[from] = r
		}
		// A term is related once, by its closest kind.
		for k := range kind + 1 {
			if slices.Contains(r[k], to) {
				return
			}
		}
		if len(r[kind]) < maxPerKind {
			r[kind] = append(r[kind], to)
		}
	}
	addWords := func(from string, words []string, kind int) {
		for _, w := range words {
			if t, ok := termOf(w); ok {
				add(from, t, kind)
			}
		}
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
			from := self
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
				// A word no tagged text uses still has its first sense.
				if sense >= max(1, min(closeSenses, tagged)) {
					break // a rare sense: "git" as a person
				}
				me := slices.Index(s.words, lemma) + 1
				addWords(from, s.words, relClose)
				for _, pt := range s.close {
					if pt.src != 0 && pt.src != me {
						continue // another word's derivation
					}
					d := synsets[key(pt.pos, pt.offset)]
					for j, w := range d.words {
						if pt.dst == 0 || pt.dst == j+1 {
							addWords(from, []string{w}, relClose)
						}
					}
				}
				if sense >= max(1, min(broadSenses, tagged)) {
					continue
				}
				if s.narrowerCt <= maxBroadFanout {
					for _, pt := range s.broad {
						addWords(from, synsets[key(pt.pos, pt.offset)].words, relBroad)
					}
				}
				for _, pt := range s.domain {
					addWords(from, synsets[key(pt.pos, pt.offset)].words, relTopic)
				}
				if len(s.members) <= maxDomainMembers {
					for _, pt := range s.members {
						addWords(from, synsets[key(pt.pos, pt.offset)].words, relTopic)
					}
				}
				addWords(from, strings.FieldsFunc(s.gloss, notLetter), relGloss)
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
		for _, l := range rs {
			for _, t := range l {
				if !seen[t] {
					seen[t] = true
					terms = append(terms, t)
				}
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
	// each entry a term number shifted left by two, its low bits the kind
	// of relation; close relations first, then broad, topic and gloss.
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
		if rs := related[t]; rs != nil {
			for kind, l := range rs {
				for _, r := range l {
					lists[i] = append(lists[i], num[r]<<2|uint32(kind))
				}
			}
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
const vocabMagic = "skills-mcp vocab v2\n"

// termOf returns the index term of a WordNet word, or false for a
// collocation, an abbreviation, a short word or a stop word.
func termOf(word string) (string, bool) {
	if strings.ContainsAny(word, "_-'.") || len(word) < 3 {
		return "", false
	}
	for _, r := range word {
		if r < 'a' || r > 'z' {
			return "", false
		}
	}
	ts := search.Tokenize(word)
	if len(ts) != 1 || len(ts[0]) < 3 {
		return "", false
	}
	return ts[0], true
}

// definition returns the definition of a gloss, without the examples
// that follow it in quotes.
func definition(gloss string) string {
	if i := strings.IndexByte(gloss, '"'); i >= 0 {
		gloss = gloss[:i]
	}
	return strings.ToLower(gloss)
}

func notLetter(r rune) bool { return r < 'a' || r > 'z' }

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
