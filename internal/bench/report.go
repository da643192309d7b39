package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// Report is the outcome of Run.
type Report struct {
	Lib      string         `json:"lib,omitempty"`
	Runs     int            `json:"runs"`
	Client   string         `json:"client"` // ClientRaw or ClientSDK
	Servers  []ServerReport `json:"servers"`
	Warnings []string       `json:"warnings,omitempty"`
}

// ServerReport holds one server's samples and their summaries.
type ServerReport struct {
	Label   string   `json:"label"`
	Command []string `json:"command"`
	Samples []Sample `json:"samples"`
	// Summary maps Metric keys to their spread over the runs.
	Summary map[string]Summary `json:"summary"`
}

func (sr *ServerReport) summarize() {
	sr.Summary = make(map[string]Summary, len(Metrics))
	for _, m := range Metrics {
		xs := make([]float64, len(sr.Samples))
		for i, s := range sr.Samples {
			v, ok := s.Values[m.Key]
			if !ok {
				v = math.NaN()
			}
			xs[i] = v
		}
		sr.Summary[m.Key] = Summarize(xs)
	}
}

// WriteText writes the report as aligned tables: per server, the median,
// minimum and maximum of every metric; with two servers, the ratio B/A of
// their medians (below 1 means B is faster or smaller). Warnings follow.
func (r *Report) WriteText(w io.Writer) error { return r.write(w, false) }

// WriteMarkdown writes the same tables as WriteText in Markdown.
func (r *Report) WriteMarkdown(w io.Writer) error { return r.write(w, true) }

func (r *Report) write(w io.Writer, markdown bool) error {
	var b strings.Builder
	for _, sr := range r.Servers {
		fmt.Fprintf(&b, "server %s: %s (%s, %s client)\n", sr.Label, strings.Join(sr.Command, " "), plural(len(sr.Samples), "run"), r.Client)
		if tool := searchToolOf(sr); tool != "" {
			fmt.Fprintf(&b, "search tool: %s\n", tool)
		}
		if markdown {
			b.WriteByte('\n')
		}
		rows := [][]string{{"metric", "median", "min", "max"}}
		for _, m := range Metrics {
			s := sr.Summary[m.Key]
			rows = append(rows, []string{m.Name, formatNumber(s.Median, m.Unit), formatNumber(s.Min, m.Unit), formatNumber(s.Max, m.Unit)})
		}
		writeTable(&b, rows, markdown)
		b.WriteByte('\n')
	}
	if len(r.Servers) == 2 {
		a, c := r.Servers[0], r.Servers[1]
		rows := [][]string{{"metric", a.Label + " median", c.Label + " median", c.Label + "/" + a.Label}}
		for _, m := range Metrics {
			ma, mc := a.Summary[m.Key].Median, c.Summary[m.Key].Median
			ratio := "n/a"
			if ma > 0 && !math.IsNaN(mc) {
				ratio = fmt.Sprintf("%.2f", mc/ma)
			}
			rows = append(rows, []string{m.Name, formatNumber(ma, m.Unit), formatNumber(mc, m.Unit), ratio})
		}
		writeTable(&b, rows, markdown)
		b.WriteByte('\n')
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable writes rows (the first is the header) as a text table with the
// first column left-aligned and the others right-aligned, or as Markdown.
func writeTable(b *strings.Builder, rows [][]string, markdown bool) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	for r, row := range rows {
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			switch {
			case markdown:
				if i == 0 {
					b.WriteString("| " + cell + pad + " ")
				} else {
					b.WriteString("| " + pad + cell + " ")
				}
			case i == 0:
				b.WriteString(cell + pad)
			default:
				b.WriteString("  " + pad + cell)
			}
		}
		if markdown {
			b.WriteString("|")
		}
		b.WriteByte('\n')
		if markdown && r == 0 {
			for i := range row {
				dashes := strings.Repeat("-", max(width[i], 3))
				if i == 0 {
					b.WriteString("| " + dashes + " ")
				} else {
					b.WriteString("| " + dashes[1:] + ": ")
				}
			}
			b.WriteString("|\n")
		}
	}
}

func searchToolOf(sr ServerReport) string {
	for _, s := range sr.Samples {
		if s.SearchTool != "" {
			return s.SearchTool
		}
	}
	return ""
}

// formatValue formats the metric key of one sample, "n/a" if absent.
func formatValue(values map[string]float64, key, unit string) string {
	v, ok := values[key]
	if !ok {
		return "n/a"
	}
	return formatNumber(v, unit)
}

// formatNumber writes v with three significant digits or more (whole
// numbers as they are) and its unit; NaN is "n/a".
func formatNumber(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	var s string
	switch a := math.Abs(v); {
	case unit == "":
		s = fmt.Sprintf("%.0f", v)
	case a >= 100:
		s = fmt.Sprintf("%.0f", v)
	case a >= 10:
		s = fmt.Sprintf("%.1f", v)
	case a >= 1:
		s = fmt.Sprintf("%.2f", v)
	default:
		s = fmt.Sprintf("%.3f", v)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
