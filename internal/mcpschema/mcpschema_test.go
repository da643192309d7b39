package mcpschema_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/mcpschema"
)

const digest = "sha256:d2489d6c182e8df9c178563ff9f2eac7998a0c1bb1278c52a7fd5306e4259160"

// cacheFields are what results of 2026-07-28 carry (and older revisions
// ignore).
const cacheFields = `"resultType":"complete","ttlMs":300000,"cacheScope":"public"`

func response(result string) string { return `{"jsonrpc":"2.0","id":1,"result":` + result + `}` }

func TestValidate(t *testing.T) {
	entry := `{"uri":"skill://code-review/SKILL.md","frontmatter":{"name":"code-review","description":"Review."},"resources":[{"uri":"skill://code-review/SKILL.md","digest":"` + digest + `","size":149}]}`
	tests := []struct {
		name, method, msg string
		// want is the pointer of each violation, on every revision; nil
		// means valid.
		want []string
	}{
		{"empty text", "resources/read",
			response(`{` + cacheFields + `,"contents":[{"uri":"skill://a/b.py","mimeType":"text/x-python","text":""}]}`), nil},
		{"no text nor blob", "resources/read",
			response(`{` + cacheFields + `,"contents":[{"uri":"skill://a/b.py","mimeType":"text/x-python"}]}`), []string{"/result/contents/0"}},
		{"blob", "resources/read",
			response(`{` + cacheFields + `,"contents":[{"uri":"skill://a/b.bin","blob":"AAE="}]}`), nil},
		{"blob not base64", "resources/read",
			response(`{` + cacheFields + `,"contents":[{"uri":"skill://a/b.bin","blob":"not base64!"}]}`), []string{"/result/contents/0/blob"}},
		{"uri with a space", "resources/read",
			response(`{` + cacheFields + `,"contents":[{"uri":"skill://a/b c.md","text":"x"}]}`), []string{"/result/contents/0/uri"}},
		{"skills/list", "skills/list", response(`{` + cacheFields + `,"skills":[` + entry + `]}`), nil},
		{"skills/list bad digest", "skills/list",
			response(`{` + cacheFields + `,"skills":[` + strings.Replace(entry, digest, "sha256:abc", 1) + `]}`), []string{"/result/skills/0/resources/0/digest"}},
		{"skills/list no resources", "skills/list",
			response(`{` + cacheFields + `,"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"}}]}`), []string{"/result/skills/0"}},
		{"skills/get", "skills/get", response(`{` + cacheFields + `,"skill":` + entry + `}`), nil},
		{"skills/get with a cursor", "skills/get", response(`{` + cacheFields + `,"skill":` + entry + `,"nextCursor":"x"}`), []string{"/result"}},
		{"directory", "resources/directory/read",
			response(`{"resultType":"complete","resources":[{"uri":"skill://a/templates","name":"templates","mimeType":"inode/directory"}]}`), nil},
		{"directory entry without a name", "resources/directory/read",
			response(`{"resultType":"complete","resources":[{"uri":"skill://a/templates"}]}`), []string{"/result/resources/0"}},
		{"error", "resources/read", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no such file"}}`, nil},
		{"error without a message", "resources/read", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602}}`, []string{"/error"}},
		{"batch", "", `[` + response(`{}`) + `]`, []string{""}},
		{"not JSON", "", `{"jsonrpc":`, []string{""}},
		{"notification", "", `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, nil},
		{"notification with bad params", "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"lots"}}`, []string{"/params"}},
	}
	for _, rev := range mcpschema.Revisions() {
		s, err := mcpschema.For(rev)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(rev+"/"+tt.name, func(t *testing.T) {
				got := s.Validate([]byte(tt.msg), tt.method)
				var ptrs []string
				for _, v := range got {
					ptrs = append(ptrs, v.Pointer)
				}
				if !prefixes(ptrs, tt.want) {
					t.Errorf("violations %q, want at %q", got, tt.want)
				}
				for _, v := range got {
					if v.Message == "" || (tt.method != "" && v.Method != tt.method && !strings.HasPrefix(tt.msg, `{"jsonrpc":"2.0","method"`)) {
						t.Errorf("violation %+v: want method %q and a message", v, tt.method)
					}
				}
			})
		}
	}
}

// prefixes reports whether every want pointer begins some got pointer and
// got has none elsewhere (an anyOf may report below where it failed).
func prefixes(got, want []string) bool {
	if len(got) == 0 || len(want) == 0 {
		return len(got) == len(want)
	}
	for _, g := range got {
		ok := false
		for _, w := range want {
			ok = ok || strings.HasPrefix(g, w)
		}
		if !ok {
			return false
		}
	}
	for _, w := range want {
		ok := false
		for _, g := range got {
			ok = ok || strings.HasPrefix(g, w)
		}
		if !ok {
			return false
		}
	}
	return true
}

// The base fields follow the revision: resultType and the cache fields are
// required from 2026-07-28 on, and unknown before.
func TestRevisionFields(t *testing.T) {
	bare := response(`{"contents":[{"uri":"skill://a/SKILL.md","text":"x"}]}`)
	list := response(`{"skills":[]}`)
	for rev, want := range map[string]bool{"2025-06-18": true, "2025-11-25": true, "2026-07-28": false} {
		s, err := mcpschema.For(rev)
		if err != nil {
			t.Fatal(err)
		}
		for method, msg := range map[string]string{"resources/read": bare, "skills/list": list} {
			got := s.Validate([]byte(msg), method)
			if (len(got) == 0) != want {
				t.Errorf("%s %s without resultType and cache fields: %q, want valid %v", rev, method, got, want)
			}
			if !want && !strings.Contains(fmt.Sprint(got), "resultType") {
				t.Errorf("%s %s: %q does not name resultType", rev, method, got)
			}
		}
	}
}

func TestUnknownRevision(t *testing.T) {
	if _, err := mcpschema.For("2024-11-05"); !errors.Is(err, mcpschema.ErrUnknownRevision) {
		t.Errorf("For(2024-11-05) = %v, want ErrUnknownRevision", err)
	}
}

func TestStream(t *testing.T) {
	st, err := mcpschema.NewStream("2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	st.Sent([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	init := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	if v := st.Received([]byte(init)); v != nil {
		t.Errorf("initialize result: %q", v)
	}
	if st.Revision() != "2025-06-18" {
		t.Errorf("revision %s after initialize, want 2025-06-18", st.Revision())
	}
	// Ids 2 and "2" are different requests.
	st.Sent([]byte(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://a/b"}}`))
	st.Sent([]byte(`{"jsonrpc":"2.0","id":"2","method":"skills/list"}`))
	got := st.Received([]byte(`{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"skill://a/b"}]}}`))
	if len(got) != 1 || got[0].Method != "resources/read" || got[0].Pointer != "/result/contents/0" {
		t.Errorf("read without text: %q", got)
	}
	got = st.Received([]byte(`{"jsonrpc":"2.0","id":"2","result":{"skills":[{"uri":"skill://a/SKILL.md"}]}}`))
	if len(got) == 0 || got[0].Method != "skills/list" {
		t.Errorf("bad listing: %q", got)
	}
	st.Sent([]byte(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`))
	st.Received([]byte(`{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`))
	if st.Unsupported() != "2024-11-05" {
		t.Errorf("Unsupported() = %q after an unknown revision was negotiated", st.Unsupported())
	}
}

func TestURITemplateFormat(t *testing.T) {
	s, err := mcpschema.For("2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	for tmpl, valid := range map[string]bool{
		"skill://{+path}":                true,
		"skill://{+archive}.tar.gz":      true,
		"file:///{path}{?q,lang:2}{#f*}": true,
		"skill://{+path":                 false,
		"skill://a}b":                    false,
		"skill://{}":                     false,
		"skill://{a b}":                  false,
		"skill://a b/{x}":                false,
		"skill://{x:0}":                  false,
	} {
		msg := response(`{"resourceTemplates":[{"name":"t","uriTemplate":` + fmt.Sprintf("%q", tmpl) + `}]}`)
		if got := s.Validate([]byte(msg), "resources/templates/list"); (len(got) == 0) != valid {
			t.Errorf("%q: violations %q, want valid %v", tmpl, got, valid)
		}
	}
}

// FuzzValidate: no message, however malformed, panics the validator.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(response(`{"contents":[{"uri":"skill://a/b"}]}`)), "resources/read")
	f.Add([]byte(response(`[1,2]`)), "skills/list")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":[]}`), "")
	f.Add([]byte(`{"method":7,"id":{}}`), "initialize")
	f.Fuzz(func(t *testing.T, msg []byte, method string) {
		for _, rev := range mcpschema.Revisions() {
			s, err := mcpschema.For(rev)
			if err != nil {
				t.Fatal(err)
			}
			s.Validate(msg, method)
			st, _ := mcpschema.NewStream(rev)
			st.Sent(msg)
			st.Received(msg)
		}
	})
}
