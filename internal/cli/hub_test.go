package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The hub's command line lives in hubcmd; the CLI maps its answers to the
// house's exit statuses: 0 ok or help, 2 a usage error with its hint, 1 a
// failure, each error on stderr.
func TestHubExitStatus(t *testing.T) {
	environ := map[string]string{"SKILLS_HUB_DATA": t.TempDir()}
	lookup := func(k string) (string, bool) { v, ok := environ[k]; return v, ok }
	for _, tc := range []struct {
		args   []string
		code   int
		stderr []string
	}{
		{[]string{"hub", "list"}, exitOK, nil},
		{[]string{"hub", "list", "-h"}, exitOK, []string{"Usage: skills-mcp hub list"}},
		{[]string{"hub", "inspect"}, exitUsage, []string{"Error: hub inspect needs", "Try: skills-mcp hub inspect -h"}},
		{[]string{"hub", "inspect", "nosuch"}, exitFailure, []string{"Error: "}},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, streams{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, env: lookup})
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errb.String())
		}
		for _, want := range tc.stderr {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), want)
			}
		}
	}
}
