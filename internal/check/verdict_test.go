package check

import (
	"strings"
	"testing"
)

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  Report
		adv  string // AdversarialErr, "" for nil
		err  string // Err
	}{
		{"unreachable", Report{Results: []Result{{Status: Fail}}}, "cannot reach the server", "1 checks failed"},
		{"no fixtures", Report{Versions: []string{"2026-07-28"}}, "offers no adversarial fixtures", ""},
		{"one missed", Report{Versions: []string{"v"}, Fixtures: []Oracle{{Verdict: Detected}, {Verdict: NotDetected}}}, "1 of 2 fixtures", ""},
		{"all served", Report{Versions: []string{"v"}, Fixtures: []Oracle{{Verdict: HostOnly}}}, "", ""},
	} {
		for _, got := range []struct {
			err  error
			want string
		}{{tc.rep.AdversarialErr(), tc.adv}, {tc.rep.Err(), tc.err}} {
			if (got.err == nil) != (got.want == "") || got.err != nil && !strings.Contains(got.err.Error(), got.want) {
				t.Errorf("%s: %v, want %q", tc.name, got.err, got.want)
			}
		}
	}
}
