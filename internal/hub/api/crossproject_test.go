package api_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/skills-mcp/skills-mcp/internal/hub/api"
	"github.com/skills-mcp/skills-mcp/internal/hub/store"
)

// TestProjectTokenOnEveryRoute sends a project's token to every documented
// route of the admin API, aimed at another project's objects: each is
// refused with 403 before anything is read or changed. (The endpoint's
// side, every MCP method and tool with the wrong project's token, is
// endpoint.TestWrongProjectToken.)
func TestProjectTokenOnEveryRoute(t *testing.T) {
	e := newEnv(t, store.Options{Dir: filepath.Join(t.TempDir(), "data")})
	version := e.install(map[string]string{"SKILL.md": skillMD})
	for _, p := range []string{"mine", "theirs"} {
		e.want(e.do("POST", "/api/projects", e.admin, map[string]string{"id": p, "name": p}), 201, "")
	}
	e.want(e.do("PUT", "/api/projects/theirs/skills/"+version, e.admin, nil), 200, "")
	var theirs, mine struct {
		Token  struct{ ID string } `json:"token"`
		Secret string              `json:"secret"`
	}
	e.do("POST", "/api/projects/theirs/tokens", e.admin, map[string]string{}).decode(t, &theirs)
	e.do("POST", "/api/projects/mine/tokens", e.admin, map[string]string{}).decode(t, &mine)
	if mine.Secret == "" || theirs.Token.ID == "" {
		t.Fatalf("project tokens not made: %+v %+v", mine, theirs)
	}
	before := e.do("GET", "/api/projects/theirs/skills", e.admin, nil).body

	param := regexp.MustCompile(`\{[^}]+\}`)
	tried := 0
	for path, item := range e.a.OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
			target := param.ReplaceAllStringFunc(path, func(p string) string {
				switch {
				case p == "{id}" && strings.HasPrefix(path, "/api/skills/"), p == "{skill_id}":
					return version
				case p == "{id}":
					return "theirs"
				case p == "{token_id}":
					return theirs.Token.ID
				}
				return "x"
			}) + "?path=SKILL.md"
			var body any
			if method != "GET" && method != "DELETE" {
				body = map[string]string{}
			}
			a := e.do(method, target, mine.Secret, body)
			if a.status != 403 || a.code() != api.CodeForbidden {
				t.Errorf("%s %s with another project's token: %d %s, want 403 %s", method, target, a.status, a.body, api.CodeForbidden)
			}
			tried++
		}
	}
	if tried < 30 {
		t.Fatalf("only %d routes tried: is the document complete?", tried)
	}
	t.Logf("%d routes tried with another project's token: every one refused", tried)
	if after := e.do("GET", "/api/projects/theirs/skills", e.admin, nil).body; string(after) != string(before) {
		t.Errorf("their bindings changed:\nbefore %s\nafter  %s", before, after)
	}
	if toks := e.do("GET", "/api/projects/theirs/tokens", e.admin, nil); !strings.Contains(string(toks.body), theirs.Token.ID) || strings.Contains(string(toks.body), `"revoked_at"`) {
		t.Errorf("their token was touched: %s", toks.body)
	}
}
