package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/config"
)

func TestParseValid(t *testing.T) {
	c, err := config.Parse(strings.NewReader(`{
	  "libraries": [
	    {"namespace": "bob", "root": "skills", "title": "BOB", "metadata": {"channel": "stable"}},
	    {"namespace": "gbl", "root": "/abs/gbl", "noScripts": true, "vault": false},
	    {"namespace": "acme", "root": "acme/skills", "vault": "acme"},
	    {"namespace": "sales", "url": "https://example.invalid/p.zip", "sha256": "` + strings.Repeat("a", 64) + `"}
	  ],
	  "noScripts": false, "lint": true, "excludeTiers": "pro, enterprise", "devStatus": ["stable"]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Resolve("/etc/skills"); err != nil {
		t.Fatal(err)
	}
	if c.Libraries[0].Root != "/etc/skills/skills" || c.Libraries[1].Root != "/abs/gbl" || c.Libraries[2].Vault.Path != "/etc/skills/acme" {
		t.Errorf("resolved = %+v", c.Libraries)
	}
	if !c.Libraries[1].Vault.Disabled || *c.Lint != true || c.NoScripts == nil || c.Playbooks != nil {
		t.Errorf("switches = %+v", c)
	}
	if got := *c.ExcludeTiers; len(got) != 2 || got[1] != "enterprise" {
		t.Errorf("excludeTiers = %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"not json":    {`libraries: []`, "not valid JSON"},
		"empty":       {``, "empty"},
		"unknown key": {`{"libraries": [], "colour": 1}`, `unknown key "colour"`},
		"nested key":  {`{"libraries": [{"namespace": "a", "rooot": "x"}]}`, `unknown key "rooot"`},
		"wrong type":  {`{"libraries": [{"namespace": 3}]}`, "libraries.namespace"},
		"two values":  {`{"libraries": []} {}`, "more than one"},
		"trailing":    {`{"libraries": []} ]`, "text after it"},
		"vault true":  {`{"libraries": [{"namespace": "a", "root": "x", "vault": true}]}`, "folder path or false"},
		"huge":        {`{"libraries": [], "x": "` + strings.Repeat("a", config.MaxBytes) + `"}`, "larger than"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestParseDuplicateKeys: a key given twice in one object is an error
// naming the key and where it is, at any depth, where encoding/json would
// keep the last value; keys that encoding/json matches to the same field
// (case is ignored) count as the same key, while metadata keys, a map's,
// are compared exactly.
func TestParseDuplicateKeys(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"top":          {`{"noScripts": true, "libraries": [{"namespace": "a", "root": "x"}], "noScripts": false}`, `key "noScripts" is given twice`},
		"top case":     {`{"noScripts": true, "libraries": [{"namespace": "a", "root": "x"}], "NoScripts": false}`, `keys "noScripts" and "NoScripts" are the same key`},
		"library":      {`{"libraries": [{"namespace": "a", "root": "x"}, {"namespace": "b", "root": "y", "noScripts": true, "noScripts": false}]}`, `libraries[1]: key "noScripts" is given twice`},
		"library case": {`{"libraries": [{"namespace": "a", "root": "x", "ROOT": "/"}]}`, `libraries[0]: keys "root" and "ROOT"`},
		"metadata":     {`{"libraries": [{"namespace": "a", "root": "x", "metadata": {"k": "1", "k": "2"}}]}`, `libraries[0].metadata: key "k" is given twice`},
		"libraries":    {`{"libraries": [], "libraries": [{"namespace": "a", "root": "x"}]}`, `key "libraries" is given twice`},
		"escaped":      {`{"libraries": [{"namespace": "a", "root": "x", "r\u006fot": "y"}]}`, `key "root" is given twice`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
	// Metadata keys that differ in case are two keys of a map.
	c, err := config.Parse(strings.NewReader(`{"libraries": [{"namespace": "a", "root": "x", "metadata": {"k": "1", "K": "2"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := c.Libraries[0].Metadata; m["k"] != "1" || m["K"] != "2" {
		t.Errorf("metadata = %v", m)
	}
}

// TestResolveSymlinkEscape: a relative path that stays in the config
// folder by its name but leaves it through a symlink inside the folder is
// refused; a symlink that stays inside is followed; a path not there yet
// is checked by the part that is.
func TestResolveSymlinkEscape(t *testing.T) {
	outside := t.TempDir()
	dir := t.TempDir()
	for _, d := range []string{"skills", "real/lib"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out":      outside,                         // absolute, out
		"up":       "..",                            // relative, out
		"inside":   "real",                          // relative, in
		"dangling": filepath.Join(outside, "later"), // not there yet
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for name, tt := range map[string]struct {
		root string
		want string // "" = accepted
	}{
		"plain":          {"skills", ""},
		"missing":        {"not/yet/there", ""},
		"inside link":    {"inside/lib", ""},
		"out link":       {"out", "through a symlink"},
		"out link below": {"out/sub/skills", "through a symlink"},
		"up link":        {"up/elsewhere", "through a symlink"},
		"up and back":    {"up/" + filepath.Base(dir) + "/skills", ""},
		"dangling link":  {"dangling/skills", "symlink dangling"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Parse(strings.NewReader(`{"libraries": [{"namespace": "a", "root": "x", "vault": "` + tt.root + `"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			c.Libraries[0].Root = tt.root
			err = c.Resolve(dir)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Resolve = %v, want it accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), "libraries[0].root") || !strings.Contains(err.Error(), "libraries[0].vault") || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Resolve = %v, want %q for root and vault", err, tt.want)
			}
		})
	}
	// The config folder may itself be reached through a symlink.
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(dir, via); err != nil {
		t.Fatal(err)
	}
	c, _ := config.Parse(strings.NewReader(`{"libraries": [{"namespace": "a", "root": "inside/lib"}]}`))
	if err := c.Resolve(via); err != nil {
		t.Errorf("Resolve through a linked folder = %v", err)
	}
}

func TestValidate(t *testing.T) {
	for name, tt := range map[string]struct{ in, want string }{
		"no libraries":  {`{"libraries": []}`, "at least one library"},
		"duplicate":     {`{"libraries": [{"namespace": "a", "root": "x"}, {"namespace": "a", "root": "y"}]}`, "libraries[1].namespace"},
		"bad namespace": {`{"libraries": [{"namespace": "-a", "root": "x"}]}`, "must match"},
		"no source":     {`{"libraries": [{"namespace": "a"}]}`, "needs root"},
		"both":          {`{"libraries": [{"namespace": "a", "root": "x", "url": "https://h/x.zip"}]}`, "both"},
		"http url":      {`{"libraries": [{"namespace": "a", "url": "http://h/x.zip"}]}`, "https"},
		"bad pin":       {`{"libraries": [{"namespace": "a", "url": "https://h/x.zip", "sha256": "abc"}]}`, "64 hex"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestResolveEscape(t *testing.T) {
	c, _ := config.Parse(strings.NewReader(`{"libraries": [{"namespace": "a", "root": "../outside"}, {"namespace": "b", "root": "x", "vault": "../../v"}]}`))
	err := c.Resolve("/etc/skills")
	if err == nil || !strings.Contains(err.Error(), "libraries[0].root") || !strings.Contains(err.Error(), "libraries[1].vault") {
		t.Errorf("Resolve = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"libraries": [{"namespace": "a", "root": "x"}]}`)
	f.Add(`{"libraries": [{"namespace": "a", "url": "https://h/x.zip", "vault": false}], "excludeTiers": "a,b"}`)
	f.Add(`[]`)
	f.Add(`{"libraries": [{"namespace": "a", "root": "x", "metadata": {"k": "1", "K": "2"}}], "noScripts": true, "NOSCRIPTS": false}`)
	f.Add(`{"libraries": [{"namespace": "a", "root": "x", "r\u006fot": "y", "vault": "v"}], "devStatus": ["a", "b"]}`)
	f.Fuzz(func(t *testing.T, in string) {
		c, err := config.Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		// What Parse accepts holds no key twice: decoding it into maps,
		// which keep one value per key, loses no key.
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("Parse accepted what encoding/json refuses: %v", err)
		}
		if got, want := mapKeys(v), tokenKeys(t, in); got != want {
			t.Fatalf("accepted %q: %d keys on the wire, %d in maps", in, want, got)
		}
		_ = c.Validate()
		_ = c.Resolve("/base")
	})
}

func TestRateLimits(t *testing.T) {
	const lib = `"libraries": [{"namespace": "a", "root": "x"}]`
	c, err := config.Parse(strings.NewReader(`{` + lib + `, "rateLimitAddress": 50, "rateLimitToken": 0, "rateLimitBurst": "1.5s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if *c.RateLimitAddress != 50 || *c.RateLimitToken != 0 || time.Duration(*c.RateLimitBurst) != 1500*time.Millisecond {
		t.Errorf("rate limits = %v, %v, %v", *c.RateLimitAddress, *c.RateLimitToken, *c.RateLimitBurst)
	}
	for name, tt := range map[string]struct{ in, want string }{
		"negative":     {`"rateLimitAddress": -1`, "rateLimitAddress: must be a number of requests per second from 0"},
		"huge":         {`"rateLimitToken": 1e9`, "rateLimitToken: must be"},
		"burst zero":   {`"rateLimitBurst": "0s"`, "rateLimitBurst: must be a duration above 0"},
		"burst day":    {`"rateLimitBurst": "24h"`, "at most 1h0m0s"},
		"burst number": {`"rateLimitBurst": 2`, `rateLimitBurst must be a duration such as "2s"`},
		"burst words":  {`"rateLimitBurst": "fast"`, `rateLimitBurst "fast" is not a duration`},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Parse(strings.NewReader(`{` + lib + `, ` + tt.in + `}`))
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

// mapKeys counts the keys of every object in v, a decoded JSON value.
func mapKeys(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += 1 + mapKeys(e)
		}
	case []any:
		for _, e := range v {
			n += mapKeys(e)
		}
	}
	return n
}

// tokenKeys counts the keys of every object in the JSON text in, as
// written, repeats included.
func tokenKeys(t *testing.T, in string) int {
	dec := json.NewDecoder(strings.NewReader(in))
	// For each open container: whether it is an object and, if so, whether
	// its next token is a key.
	type frame struct{ object, key bool }
	var stack []frame
	n := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return n
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].object {
			if stack[top].key {
				if _, ok := tok.(string); ok {
					n++
					stack[top].key = false
					continue
				}
			} else {
				stack[top].key = true // this token starts the value
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}
