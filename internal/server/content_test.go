package server_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skills-mcp/skills-mcp/internal/catalog"
	"github.com/skills-mcp/skills-mcp/internal/server"
)

// TestExecutableGuidance: a compiled program or a script with no known
// interpreter is announced as an executable to approve by name, never with
// an empty run command.
func TestExecutableGuidance(t *testing.T) {
	fsys := fstest.MapFS{
		"tools/SKILL.md":     {Data: []byte("---\nname: tools\ndescription: Ships a program.\n---\nRun bin/tool.\n")},
		"tools/bin/tool":     {Data: []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00")},
		"tools/scripts/fmt":  {Data: []byte("#!/usr/bin/gnuplot\nplot sin(x)\n")},
		"tools/scripts/a.sh": {Data: []byte("echo a\n")},
	}
	snap, err := catalog.Scan(context.Background(), []*catalog.Library{{FS: fsys, Kind: "test"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := session(t, server.New(catalog.NewStore(snap), &server.Options{Name: "team-skills"}), nil, "")
	_, text, isErr := callTool(t, cs, "team_skills_get_skill", map[string]any{"name": "tools"})
	if isErr {
		t.Fatal(text)
	}
	for _, want := range []string{"bash scripts/a.sh", "no known interpreter (tools/bin/tool, tools/scripts/fmt)"} {
		if !strings.Contains(text, want) {
			t.Errorf("get_skill text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "run with: \n") || strings.Contains(text, "&& SKILLS_ROOT=~/.cache/skills-mcp-client/team-skills  bin/tool") {
		t.Errorf("an empty run command:\n%s", text)
	}
	out, text, isErr := callTool(t, cs, "team_skills_read_skill_file", map[string]any{"name": "tools", "path": "bin/tool"})
	if isErr || out["interpreter"] != nil || !strings.Contains(text, "executable (ELF binary)") || !strings.Contains(text, "approval") {
		t.Errorf("read of a program = %v %q", out, text)
	}
}
