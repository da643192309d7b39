package lintcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/skills-mcp/skills-mcp/internal/lint"
)

// WriteText prints the findings grouped by skill, then a summary line.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, sk := range r.Skills {
		if len(sk.Findings) == 0 {
			continue
		}
		head := sk.Path
		if sk.Name != "" && sk.Name != path.Base(sk.Path) {
			head += " (" + sk.Name + ")"
		}
		b.WriteString(head + "\n")
		for _, f := range sk.Findings {
			loc := sk.src.displayPath(path.Join(sk.folder, f.Path))
			if f.Line > 0 {
				loc += fmt.Sprintf(":%d:%d", f.Line, f.Column)
			}
			fmt.Fprintf(&b, "  %s %s %s %s", loc, f.Severity, f.Rule, f.Message)
			if f.Suppressed {
				fmt.Fprintf(&b, " (suppressed: %s)", f.Reason)
			}
			if f.More > 0 {
				fmt.Fprintf(&b, " (+%d more in this file)", f.More)
			}
			b.WriteString("\n")
			if f.Excerpt != "" {
				b.WriteString("      | " + f.Excerpt + "\n")
			}
		}
	}
	s := r.Summary
	fmt.Fprintf(&b, "%d skill(s), %d file(s): %d error(s), %d warning(s), %d info, %d suppressed; %d skill(s) flagged\n",
		s.Skills, s.Files, s.Errors, s.Warnings, s.Infos, s.Suppressed, s.Flagged)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteSARIF writes the report as a SARIF 2.1.0 log (lint.WriteSARIF),
// naming the tool's version.
func (r *Report) WriteSARIF(w io.Writer, version string) error {
	var found []lint.Located
	for _, sk := range r.Skills {
		for _, f := range sk.Findings {
			found = append(found, lint.Located{Path: sk.src.displayPath(path.Join(sk.folder, f.Path)), Finding: f})
		}
	}
	return lint.WriteSARIF(w, version, found)
}
