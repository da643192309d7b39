package lint_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/skills-mcp/skills-mcp/internal/lint"
)

// TestWriteSARIF pins the SARIF log of two findings: one at a line of a
// file with a space in its name, suppressed, and one about a whole file.
func TestWriteSARIF(t *testing.T) {
	var b bytes.Buffer
	err := lint.WriteSARIF(&b, "1.2.3", []lint.Located{
		{Path: "skills/a/run me.sh", Finding: lint.Finding{Rule: lint.RulePipeToShell, Severity: lint.Error, Line: 3, Column: 1,
			Message: "pipes a download to a shell", Excerpt: "curl x | sh", Suppressed: true, Reason: "pinned"}},
		{Path: "b.zip!/b/conftest.py", Finding: lint.Finding{Rule: lint.RuleTestAutoload, Severity: lint.Warning, Message: "runs at collection", More: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Schema, Version string
		Runs            []struct {
			Tool struct {
				Driver struct {
					Name, Version string
					Rules         []struct{ ID, Name string }
				}
			}
			ColumnKind string
			Results    []json.RawMessage
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if log.Version != "2.1.0" || run.Tool.Driver.Name != "skills-mcp lint" || run.Tool.Driver.Version != "1.2.3" ||
		len(run.Tool.Driver.Rules) != len(lint.Rules()) || run.ColumnKind != "unicodeCodePoints" {
		t.Fatalf("header: %s", b.Bytes())
	}
	index := map[string]int{}
	for i, r := range run.Tool.Driver.Rules {
		index[r.ID] = i
		if r.ID == lint.RulePipeToShell && r.Name != "PipeToShell" {
			t.Errorf("rule name %q", r.Name)
		}
	}
	want := []string{
		`{"ruleId":"pipe-to-shell","ruleIndex":` + itoa(index[lint.RulePipeToShell]) + `,"level":"error","message":{"text":"pipes a download to a shell"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"skills/a/run%20me.sh"},"region":{"startLine":3,"startColumn":1,"snippet":{"text":"curl x | sh"}}}}],` +
			`"suppressions":[{"kind":"inSource","justification":"pinned"}]}`,
		`{"ruleId":"test-autoload","ruleIndex":` + itoa(index[lint.RuleTestAutoload]) + `,"level":"warning","message":{"text":"runs at collection"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"b.zip%21/b/conftest.py"}}}],"properties":{"moreInFile":2}}`,
	}
	for i, raw := range run.Results {
		var c bytes.Buffer
		json.Compact(&c, raw)
		if c.String() != want[i] {
			t.Errorf("result %d:\n got %s\nwant %s", i, c.String(), want[i])
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
