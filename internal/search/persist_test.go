package search

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/binrec"
)

// persistDocs is a small corpus with every field, two libraries, repeated
// names and non-ASCII text.
func persistDocs() []Doc {
	return []Doc{
		{ID: 7, Name: "pdf-forms", Library: "docs", Category: "Documents", Description: "Fill PDF forms and flatten them.", Tags: []string{"pdf", "forms"}, Body: "Open the form, fill each field, then flatten."},
		{ID: 3, Name: "invoice-reminders", Library: "finance", Category: "Finance", Description: "Send reminders for overdue invoices.", Tags: []string{"invoices", "overdue"}, Body: "Find overdue invoices and draft a reminder."},
		{ID: 11, Name: "pdf-forms", Library: "finance", Category: "documents", Description: "Forms for tax filings.", Body: "Überprüfung der Formulare."},
		{ID: 0, Name: "生成文档", Description: "生成技术文档", Body: "camelCaseWord deployment deploying"},
		{ID: -4, Name: "empty"},
	}
}

func encoded(t testing.TB, ix *Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodeDecode checks that a decoded index is the index that was
// encoded, field for field, and answers every query alike.
func TestEncodeDecode(t *testing.T) {
	for _, docs := range [][]Doc{nil, persistDocs()} {
		ix := Build(docs, 0)
		got, err := Decode(encoded(t, ix))
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if !reflect.DeepEqual(normalized(got), normalized(ix)) {
			t.Errorf("decoded index differs:\n got %+v\nwant %+v", normalized(got), normalized(ix))
		}
		for _, q := range []Query{
			{Text: "pdf forms"}, {Text: "overdue invoices", Library: "finance"},
			{Text: "forms", Category: "DOCUMENTS"}, {Text: "文档"}, {Text: "deplo"}, {Text: "pdf-forms"},
		} {
			if a, b := ix.Search(q), got.Search(q); !reflect.DeepEqual(a, b) {
				t.Errorf("%+v: built index %v, decoded %v", q, a, b)
			}
		}
	}
}

// TestDecodeRefusesDamage flips, cuts and extends an encoded index: each
// is refused with ErrDamaged.
func TestDecodeRefusesDamage(t *testing.T) {
	data := encoded(t, Build(persistDocs(), 0))
	cases := map[string][]byte{
		"empty":     nil,
		"truncated": data[:len(data)-9],
		"extended":  append(bytes.Clone(data), 0),
		"no crc":    data[:len(data)-4],
	}
	for _, i := range []int{0, 5, len(data) / 2, len(data) - 5, len(data) - 1} {
		b := bytes.Clone(data)
		b[i] ^= 0x40
		cases[fmt.Sprintf("bit flipped at %d", i)] = b
	}
	for name, b := range cases {
		if ix, err := Decode(b); !errors.Is(err, ErrDamaged) || ix != nil {
			t.Errorf("%s: Decode = %v, %v; want ErrDamaged", name, ix, err)
		}
	}
}

// TestDecodeChecksInvariants rewrites the checksum of an index whose
// content was altered, as a deliberately crafted file would: the
// structural checks still refuse it.
func TestDecodeChecksInvariants(t *testing.T) {
	for name, spoil := range map[string]func(ix *Index){
		"posting past the documents": func(ix *Index) { ix.fields[fieldBody].docs[0] = uint32(ix.n) },
		"offsets backwards":          func(ix *Index) { ix.fields[fieldName].off[1] = ix.fields[fieldName].off[2] + 1 },
		"terms unsorted":             func(ix *Index) { ix.terms[0], ix.terms[1] = ix.terms[1], ix.terms[0] },
		"short norms":                func(ix *Index) { ix.fields[fieldTags].norm = ix.fields[fieldTags].norm[1:] },
		"byName out of range":        func(ix *Index) { ix.byName[0] = 99 },
	} {
		ix := Build(persistDocs(), 0)
		spoil(ix)
		if _, err := Decode(encoded(t, ix)); !errors.Is(err, ErrDamaged) {
			t.Errorf("%s: Decode error %v, want ErrDamaged", name, err)
		}
	}
}

// FuzzDecode feeds Decode arbitrary data, with a valid checksum appended
// or not: it must refuse or return an index that searches without
// panicking.
func FuzzDecode(f *testing.F) {
	f.Add(encoded(f, Build(persistDocs(), 0)), false)
	f.Add(encoded(f, Build(nil, 0)), false)
	f.Add([]byte("skills-mcp search index v1"), true)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC {
			data = binrec.Seal(data)
		}
		ix, err := Decode(data)
		if err != nil {
			if ix != nil || !errors.Is(err, ErrDamaged) {
				t.Fatalf("Decode = %v, %v", ix, err)
			}
			return
		}
		for _, q := range []Query{{Text: "pdf forms"}, {Text: "a", Library: "docs", Category: "x"}, {Text: "z"}, {Text: "empty"}} {
			for _, h := range ix.Search(q) {
				if !slices.Contains(ix.ids, h.ID) {
					t.Fatalf("hit %v names no document", h)
				}
			}
		}
	})
}

// normalized copies what an index holds, without its scratch pool, with
// empty slices as nil: what Build and Decode must agree on.
func normalized(ix *Index) any {
	type view struct {
		N                    int
		IDs                  []int
		Names, Libs, Cats    []string
		LibOf, CatOf, ByName []uint32
		Keys, Terms          []string
		DF                   []uint32
		Off, Docs            [numFields][]uint32
		TFs                  [numFields][]uint16
		Norm                 [numFields][]float32
		DocVec               []int8
	}
	v := view{
		N: ix.n, IDs: orNil(ix.ids), Names: orNil(ix.names), Libs: orNil(ix.libs), Cats: orNil(ix.cats),
		LibOf: orNil(ix.libOf), CatOf: orNil(ix.catOf), ByName: orNil(ix.byName),
		Keys: orNil(ix.keys), Terms: orNil(ix.terms), DF: orNil(ix.df), DocVec: orNil(ix.docVec),
	}
	for f := range ix.fields {
		p := &ix.fields[f]
		v.Off[f], v.Docs[f], v.TFs[f], v.Norm[f] = orNil(p.off), orNil(p.docs), orNil(p.tfs), orNil(p.norm)
	}
	return v
}

func orNil[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}
