package index

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse under small limits and checks
// that it never panics, that it returns a document or an error and never
// both, that every document it accepts holds to the format's rules and the
// limits, and that an accepted document survives Marshal and Parse
// unchanged. Searching an accepted document must not panic either.
func FuzzParse(f *testing.F) {
	f.Add([]byte(doc(goodItem(1), goodItem(2))))
	f.Add([]byte(`{"schema_version":1,"items":[]}`))
	f.Add([]byte(`{"items":[{"id":"x","name":"x","description":"d","repository":"file:///r","path":"a/b"}],"schema_version":1,"extra":[{}]}`))
	f.Add([]byte(`{"schema_version":2,"items":[{"id":"x"}]}`))
	f.Add([]byte(`{"schema_version":1,"items":[{"id":"x","name":"x","description":"d","repository":"https://h/r"},{"id":"x","name":"y","description":"d","repository":"https://h/r"}]}`))
	f.Add([]byte(`{"schema_version":1,"items":[` + strings.Repeat(`{},`, 40) + `{}]}`))
	f.Add([]byte(`{"schema_version":1,"items":[{"id":"x","name":"x","description":"d","repository":"ssh://git@h/r","tree_digest":"sha256:` + strings.Repeat("0", 64) + `"}]}`))
	f.Add([]byte("{\"schema_version\":1,\"items\":[{\"id\":\"\xff\",\"name\":\"x\"}]}"))
	lim := &Limits{MaxBytes: 4 << 10, MaxItems: 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := Parse(bytes.NewReader(data), lim)
		if (snap == nil) == (err == nil) {
			t.Fatalf("Parse returned %v and %v", snap, err)
		}
		if err != nil {
			if len(data) <= int(lim.MaxBytes) && errors.Is(err, ErrTooLarge) {
				t.Fatalf("%d bytes refused as too large", len(data))
			}
			return
		}
		if len(data) > int(lim.MaxBytes) || len(snap.Items) > lim.MaxItems || snap.SchemaVersion != SchemaVersion {
			t.Fatalf("accepted %d bytes, %d items, version %d", len(data), len(snap.Items), snap.SchemaVersion)
		}
		seen := map[string]bool{}
		for i := range snap.Items {
			it := &snap.Items[i]
			if err := it.validate(); err != nil {
				t.Fatalf("accepted item %d: %v", i, err)
			}
			if seen[it.ID] {
				t.Fatalf("accepted duplicate id %q", it.ID)
			}
			seen[it.ID] = true
			if strings.Contains("/"+it.Path+"/", "/../") || strings.HasPrefix(it.Path, "/") {
				t.Fatalf("accepted path %q", it.Path)
			}
		}
		raw, err := Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(bytes.NewReader(raw), nil)
		if err != nil {
			t.Fatalf("a marshalled document does not parse: %v\n%s", err, raw)
		}
		raw2, _ := Marshal(again)
		if !bytes.Equal(raw, raw2) {
			t.Fatalf("round trip changed the document:\n%s\n%s", raw, raw2)
		}
		ix := NewIndex(snap, "fuzz")
		for _, it := range snap.Items {
			if got, ok := ix.Item(it.ID); !ok || got.ID != it.ID {
				t.Fatalf("Item(%q) not found", it.ID)
			}
			ix.Search(Query{Text: it.Name + " " + it.Author, Category: it.Category})
		}
	})
}
