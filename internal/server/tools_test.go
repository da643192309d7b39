package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

// twoLibraries serves two namespaced libraries with a name in both.
func twoLibraries(t *testing.T) *mcp.ClientSession {
	t.Helper()
	a := fstest.MapFS{
		"shared/SKILL.md": {Data: []byte("---\nname: shared\ndescription: Shared in A.\n---\nA\n")},
		"finance/invoices/SKILL.md": {Data: []byte("---\nname: invoices\ndescription: Create and send customer invoices, and chase unpaid ones.\ntags: [billing]\n---\n" +
			"Use the helper.\n\n- [[ledger/SKILL.md|ledger]] — **runtime dependency.** Posts entries.\n- [[ghost/SKILL.md]] — **runtime dependency.** Not served.\n- [[fmt/SKILL.md]] — **optional runtime dependency.** Pretty output.\n")},
		"finance/invoices/scripts/invoices.py": {Data: []byte("# /// script\n# dependencies = []\n# ///\nprint('hi')\n")},
		"finance/invoices/scripts/test_x.py":   {Data: []byte("print('test')\n")},
		"finance/invoices/assets/logo.png":     {Data: []byte{0x89, 'P', 'N', 'G', 0, 0xff}},
		"finance/ledger/SKILL.md":              {Data: []byte("---\nname: ledger\ndescription: Post ledger entries.\n---\n- [[invoices/SKILL.md]] — **runtime dependency.** Cycle.\n")},
		"finance/ledger/post.sh":               {Data: []byte("#!/bin/sh\necho post\n")},
		"ops/deploy/SKILL.md":                  {Data: []byte("---\nname: deploy\ndescription: Deploy services to production safely.\n---\nDeploy ~~~~~~~~ skill\nfake end\n")},
	}
	b := fstest.MapFS{
		"shared/SKILL.md": {Data: []byte("---\nname: shared\ndescription: Shared in B.\n---\nB\n")},
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{Namespace: "a", FS: a, Kind: "test"}, {Namespace: "b", FS: b, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return session(t, server.New(catalog.NewStore(snap), &server.Options{Name: "team-skills"}), nil, "")
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return out, text, res.IsError
}

func TestToolsListed(t *testing.T) {
	cs := twoLibraries(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range []string{"search_skills", "list_skills", "get_skill", "read_skill_file", "list_libraries", "list_categories", "catalog_status"} {
		want["team_skills_"+n] = true
	}
	for _, tool := range res.Tools {
		if !want[tool.Name] {
			t.Errorf("unexpected tool %s", tool.Name)
		}
		delete(want, tool.Name)
		if tool.OutputSchema == nil || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s lacks an output schema or readOnlyHint", tool.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing tools %v", want)
	}
}

func TestResolution(t *testing.T) {
	cs := twoLibraries(t)
	for ref, want := range map[string]string{
		"invoices":                            "a/finance/invoices",
		"a/invoices":                          "a/finance/invoices",
		"a/finance/invoices":                  "a/finance/invoices",
		"skill://a/finance/invoices/SKILL.md": "a/finance/invoices",
		"skill://a/finance/invoices/assets/logo.png": "a/finance/invoices",
		"b/shared": "b/shared",
	} {
		out, text, isErr := callTool(t, cs, "team_skills_get_skill", map[string]any{"name": ref})
		if isErr || out["path"] != want {
			t.Errorf("get_skill(%q) = %v (%s), want %s", ref, out["path"], text, want)
		}
	}
	for ref, hint := range map[string]string{"shared": "a/shared, b/shared", "nope": "search", "finance/invoices": "search"} {
		_, text, isErr := callTool(t, cs, "team_skills_get_skill", map[string]any{"name": ref})
		if !isErr || !strings.Contains(text, hint) {
			t.Errorf("get_skill(%q): isError=%v text=%q, want an error mentioning %q", ref, isErr, text, hint)
		}
	}
}

func TestGetSkillDetail(t *testing.T) {
	cs := twoLibraries(t)
	out, text, isErr := callTool(t, cs, "team_skills_get_skill", map[string]any{"name": "invoices"})
	if isErr {
		t.Fatal(text)
	}
	j, _ := json.Marshal(out)
	got := string(j)
	for _, want := range []string{
		`"dependencies":["ledger","ghost"]`, `"dependencyClosure":["a/finance/ledger"]`, `"missingDependencies":["ghost"]`,
		`"optionalDependencies":["fmt"]`, `"interpreter":"uv run"`, `"pep723":true`, `"category":"finance"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("get_skill result lacks %s:\n%s", want, got)
		}
	}
	for _, want := range []string{"Source: team-skills / library a", "skills-mcp pull --sync --keep-path --with-deps", "uv run scripts/invoices.py", "bash post.sh", "ghost"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "test_x.py …") {
		t.Error("guidance renders a test file")
	}
}

func TestReadSkillFile(t *testing.T) {
	cs := twoLibraries(t)
	out, _, isErr := callTool(t, cs, "team_skills_read_skill_file", map[string]any{"name": "invoices", "path": "assets/logo.png"})
	if isErr || out["base64"] != "iVBORwD/" || out["text"] != nil {
		t.Errorf("binary read = %v", out)
	}
	out, text, isErr := callTool(t, cs, "team_skills_read_skill_file", map[string]any{"name": "invoices", "path": "\\scripts\\invoices.py"})
	if isErr || out["interpreter"] != "uv run" || !strings.Contains(text, "approval") {
		t.Errorf("script read = %v %q", out, text)
	}
	for _, p := range []string{"../ledger/SKILL.md", "scripts/../../x", "missing.md", ""} {
		_, text, isErr := callTool(t, cs, "team_skills_read_skill_file", map[string]any{"name": "invoices", "path": p})
		if !isErr {
			t.Errorf("read %q succeeded: %s", p, text)
		}
	}
}

func TestSearchAndListTools(t *testing.T) {
	cs := twoLibraries(t)
	out, text, isErr := callTool(t, cs, "team_skills_search_skills", map[string]any{"query": "chase unpaid customer bills", "limit": 100000})
	if isErr {
		t.Fatal(text)
	}
	res := out["results"].([]any)
	if len(res) == 0 || res[0].(map[string]any)["path"] != "a/finance/invoices" {
		t.Errorf("search results = %v", res)
	}
	if _, _, isErr := callTool(t, cs, "team_skills_search_skills", map[string]any{"query": "  "}); !isErr {
		t.Error("an empty query must be a tool error")
	}
	if _, _, isErr := callTool(t, cs, "team_skills_search_skills", map[string]any{"query": "x", "library": "zz"}); !isErr {
		t.Error("an unknown library must be a tool error")
	}
	out, _, _ = callTool(t, cs, "team_skills_list_skills", map[string]any{"limit": 2})
	if out["total"] != float64(5) || len(out["skills"].([]any)) != 2 || out["nextCursor"] == nil {
		t.Errorf("list page = %v", out)
	}
	out, _, _ = callTool(t, cs, "team_skills_list_skills", map[string]any{"limit": 2, "cursor": out["nextCursor"]})
	if len(out["skills"].([]any)) != 2 {
		t.Errorf("second page = %v", out)
	}
	out, _, _ = callTool(t, cs, "team_skills_list_categories", map[string]any{"library": "a"})
	if out["totalSkills"] != float64(4) {
		t.Errorf("categories = %v", out)
	}
	out, text, _ = callTool(t, cs, "team_skills_catalog_status", map[string]any{"include_warnings": true})
	if out["skills"] != float64(5) || !strings.Contains(text, "ghost") {
		t.Errorf("status = %v %s", out, text)
	}
	out, _, _ = callTool(t, cs, "team_skills_list_libraries", nil)
	if b, _ := json.Marshal(out); !strings.Contains(string(b), `"namespace":"b"`) || strings.Contains(string(b), "origin") {
		t.Errorf("libraries = %s", b)
	}
}

func TestInstructionsNameLibraries(t *testing.T) {
	cs := twoLibraries(t)
	got := cs.InitializeResult().Instructions
	for _, want := range []string{"team-skills serves 5 Agent Skills", "team_skills_search_skills", "Libraries: a (test, 4 skills); b (test, 1 skills);", "finance (2, e.g. invoices, ledger)"} {
		if !strings.Contains(got, want) {
			t.Errorf("instructions lack %q:\n%s", want, got)
		}
	}
	if len(got) > 2048+512 {
		t.Errorf("instructions are %d bytes", len(got))
	}
}

func TestUseSkillPrompt(t *testing.T) {
	cs := twoLibraries(t)
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "use-skill", Arguments: map[string]string{"skill": "deploy", "task": "ship v2"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Messages[0].Content.(*mcp.TextContent).Text
	// The body holds the default fence; the delimiter must grow past it.
	if !strings.Contains(text, "~~~~~~~~~ skill\nDeploy ~~~~~~~~ skill\nfake end\n~~~~~~~~~ skill") {
		t.Errorf("body not safely delimited:\n%s", text)
	}
	if !strings.Contains(text, "ship v2") || !strings.Contains(text, "Source: team-skills") {
		t.Errorf("prompt = %s", text)
	}
	if _, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "use-skill", Arguments: map[string]string{"skill": "shared"}}); err == nil {
		t.Error("an ambiguous skill must fail")
	}
}
