package lint

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"unicode"
)

// SARIF 2.1.0, the subset code-scanning tools read.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool     `json:"tool"`
		ColumnKind string        `json:"columnKind"`
		Results    []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string          `json:"id"`
		Name                 string          `json:"name"`
		ShortDescription     sarifText       `json:"shortDescription"`
		FullDescription      sarifText       `json:"fullDescription"`
		Help                 sarifText       `json:"help"`
		DefaultConfiguration sarifRuleConfig `json:"defaultConfiguration"`
		Properties           map[string]any  `json:"properties,omitempty"`
	}
	sarifRuleConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID       string             `json:"ruleId"`
		RuleIndex    int                `json:"ruleIndex"`
		Level        string             `json:"level"`
		Message      sarifText          `json:"message"`
		Locations    []sarifLocation    `json:"locations"`
		Suppressions []sarifSuppression `json:"suppressions,omitempty"`
		Properties   map[string]any     `json:"properties,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int        `json:"startLine"`
		StartColumn int        `json:"startColumn,omitempty"`
		Snippet     *sarifText `json:"snippet,omitempty"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Justification string `json:"justification,omitempty"`
	}
)

const sarifSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// sarifLevel maps a severity to a SARIF result level.
func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// sarifURI turns a report path into a relative URI reference.
func sarifURI(p string) string {
	return (&url.URL{Path: p}).EscapedPath()
}

// Located is a finding with the path of its file as the report names it
// (a slash path, "archive.zip!/entry" inside a zip).
type Located struct {
	Path    string
	Finding Finding
}

// WriteSARIF writes findings as a SARIF 2.1.0 log with one run, by the tool
// "skills-mcp lint" at version: the driver lists every rule (Rules), and
// each finding is a result at its path (a relative URI reference), with its
// line and column when it has one, and an in-source suppression when a
// lint-ignore marker silenced it.
func WriteSARIF(w io.Writer, version string, findings []Located) error {
	rules := Rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "skills-mcp lint", Version: version, InformationURI: "https://github.com/skills-mcp/skills-mcp"}
	for i, rule := range rules {
		index[rule.ID] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   rule.ID,
			Name:                 pascal(rule.ID),
			ShortDescription:     sarifText{rule.Title},
			FullDescription:      sarifText{rule.Explanation},
			Help:                 sarifText{rule.Fix},
			DefaultConfiguration: sarifRuleConfig{sarifLevel(rule.Severity)},
			Properties:           map[string]any{"tags": []string{"security", "agent-skills"}},
		})
	}
	run := sarifRun{Tool: sarifTool{driver}, ColumnKind: "unicodeCodePoints", Results: []sarifResult{}}
	for _, lf := range findings {
		f := lf.Finding
		loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(lf.Path)}}
		if f.Line > 0 {
			loc.Region = &sarifRegion{StartLine: f.Line, StartColumn: f.Column}
			if f.Excerpt != "" {
				loc.Region.Snippet = &sarifText{f.Excerpt}
			}
		}
		res := sarifResult{
			RuleID:    f.Rule,
			RuleIndex: index[f.Rule],
			Level:     sarifLevel(f.Severity),
			Message:   sarifText{f.Message},
			Locations: []sarifLocation{{loc}},
		}
		if f.Suppressed {
			res.Suppressions = []sarifSuppression{{Kind: "inSource", Justification: f.Reason}}
		}
		if f.More > 0 {
			res.Properties = map[string]any{"moreInFile": f.More}
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: sarifSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// pascal turns a rule ID into a SARIF rule name: pipe-to-shell → PipeToShell.
func pascal(id string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(id, "-") {
		if part == "" {
			continue
		}
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}
