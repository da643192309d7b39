package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/skills-mcp/skills-mcp/internal/adversarial/oracle"
)

// Verdicts of an Oracle.
const (
	// Detected: a check reported the fixture's violation as documented.
	Detected = "detected"
	// HostOnly: the violation is not visible on the wire; only a host
	// under test shows whether it acts as the oracle says.
	HostOnly = "host-only"
	// NotDetected: the fixture says check should see it, and it did not:
	// the server does not serve the fixture as documented.
	NotDetected = "not detected"
)

// Oracle is one adversarial fixture a server offers: its documented oracle
// (from the entry's _meta) and what this run saw of it.
type Oracle struct {
	oracle.Fixture
	Verdict string `json:"verdict"`
	// Evidence is the result that shows the violation, when detected.
	Evidence *Result `json:"evidence,omitempty"`
}

// oracles collects the fixtures the listing's entries carry, once each, in
// listing order, and pairs each with the result that detects it.
func oracles(l *listing, results []Result) []Oracle {
	var out []Oracle
	seen := map[string]bool{}
	for _, e := range l.entries {
		if e.fixture == nil || seen[e.fixture.ID] {
			continue
		}
		seen[e.fixture.ID] = true
		o := Oracle{Fixture: *e.fixture, Verdict: HostOnly}
		if o.DetectableByCheck {
			o.Verdict = NotDetected
			for i, r := range results {
				if r.ID == o.Check && string(r.Status) == o.Expect && mentions(r, o.URIs()) {
					o.Verdict, o.Evidence = Detected, &results[i]
					break
				}
			}
		}
		out = append(out, o)
	}
	// The v1 cases first, then the deferred archive cases.
	slices.SortStableFunc(out, func(a, b Oracle) int {
		return cmpBool(a.Deferred, b.Deferred)
	})
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func mentions(r Result, uris []string) bool {
	for _, u := range uris {
		if u != "" && (strings.Contains(r.Subject, u) || strings.Contains(r.Message, u)) {
			return true
		}
	}
	return false
}

// WriteText writes one line per result, "STATUS  id  clause  message",
// then a summary line.
func (r *Report) WriteText(w io.Writer) error {
	multi := len(r.Versions) > 1
	for _, x := range r.Results {
		msg := x.Message
		if multi && x.Version != "" {
			msg = "[" + x.Version + "] " + msg
		}
		if _, err := fmt.Fprintf(w, "%-4s  %-24s  %s  %s\n", x.Status, x.ID, x.Clause, clean(msg, 600)); err != nil {
			return err
		}
	}
	server := "the server"
	if r.Server != nil {
		server = clean(strings.TrimSpace(r.Server.Name+" "+r.Server.Version), 120)
	}
	_, err := fmt.Fprintf(w, "%d passed, %d failed, %d warnings, %d skipped: %s over %s\n",
		r.Count(Pass), r.Count(Fail), r.Count(Warn), r.Count(Skip), server, strings.Join(r.versionsOrNone(), " and "))
	return err
}

func (r *Report) versionsOrNone() []string {
	if len(r.Versions) == 0 {
		return []string{"no connection"}
	}
	return r.Versions
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteOracle writes, for each fixture the server offers, what a
// conformant host must do and why, and what check saw of it.
func (r *Report) WriteOracle(w io.Writer) error {
	for _, o := range r.Fixtures {
		head := fmt.Sprintf("%s  %s  %s", o.ID, strings.ToUpper(string(o.Action)), o.Clause)
		if o.Threat != "" {
			head += "  [" + o.Threat + "]"
		}
		if o.Deferred {
			head += "  (deferred archive case)"
		}
		var seen string
		switch o.Verdict {
		case Detected:
			seen = fmt.Sprintf("detected: %s %s: %s", o.Evidence.Status, o.Evidence.ID, o.Evidence.Message)
		case HostOnly:
			seen = "host-only: " + o.HostOnlyReason
		default:
			seen = fmt.Sprintf("NOT DETECTED: expected %s %s about %s", o.Expect, o.Check, o.URI)
		}
		if _, err := fmt.Fprintf(w, "%s\n    serves:    %s\n    host must: %s\n    why:       %s\n    check:     %s\n",
			clean(head, 300), clean(strings.Join(o.URIs(), " "), 600), clean(o.Host, 600), clean(o.Why, 600), clean(seen, 600)); err != nil {
			return err
		}
	}
	n := map[string]int{}
	for _, o := range r.Fixtures {
		n[o.Verdict]++
	}
	_, err := fmt.Fprintf(w, "%d fixtures: %d detected by check, %d host-only, %d not detected\n", len(r.Fixtures), n[Detected], n[HostOnly], n[NotDetected])
	return err
}

// clean makes server-supplied text safe to print on a terminal: control
// characters become spaces and long text is cut.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return truncate(s, n)
}

// AdversarialErr is the verdict of check --adversarial: nil when the server
// offers fixtures and serves each as its oracle documents, else why not.
func (r *Report) AdversarialErr() error {
	if len(r.Fixtures) == 0 {
		if r.Failed() && len(r.Versions) == 0 {
			return errors.New("cannot reach the server; run without --adversarial to see why")
		}
		return fmt.Errorf("the server offers no adversarial fixtures: no skills/list entry carries _meta[%q]", oracle.MetaKey)
	}
	n := 0
	for _, o := range r.Fixtures {
		if o.Verdict == NotDetected {
			n++
		}
	}
	if n > 0 {
		return fmt.Errorf("%d of %d fixtures are not served as their oracle documents", n, len(r.Fixtures))
	}
	return nil
}

// Err is the verdict of a plain check: nil unless a check failed.
func (r *Report) Err() error {
	if r.Failed() {
		return fmt.Errorf("%d checks failed", r.Count(Fail))
	}
	return nil
}
