package cli

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/cmdline"
	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
)

// hostileDemo returns a fake serving one consistent skill, and its
// SKILL.md URI.
func hostileDemo() (*pulltest.Fake, string) {
	md := "---\nname: demo\ndescription: A demo skill.\n---\nbody\n"
	entry, files := pulltest.Skill("demo", "A demo skill.", md, map[string]string{"a.md": "a\n"})
	return &pulltest.Fake{Entries: []any{entry}, Files: files}, "skill://demo/SKILL.md"
}

// TestPullDeadline: --deadline (and SKILLS_DEADLINE) stops a pull from a
// server that drips its answers or never ends its listing, though each
// request is within its --timeout: exit 1, an error naming the deadline and
// the step under way, and the destination as it was.
func TestPullDeadline(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		flags   []string
		hostile func(f *pulltest.Fake) *httptest.Server
		doing   string
	}{
		{"slow-drip body", nil, []string{"--deadline", "1s"}, func(f *pulltest.Fake) *httptest.Server {
			return httptest.NewServer(pulltest.SlowDrip(f.Handler(true), 50*time.Millisecond, f.Done()))
		}, "(reading skill://demo/SKILL.md)"},
		{"endless cursor", map[string]string{"SKILLS_DEADLINE": "1s"}, nil, func(f *pulltest.Fake) *httptest.Server {
			f.Pages = func(cursor string) string {
				select {
				case <-time.After(20 * time.Millisecond):
				case <-f.Done():
				}
				return fmt.Sprintf(`{"resultType":"complete","skills":[],"nextCursor":"c%s"}`, cursor)
			}
			return httptest.NewServer(f.Handler(true))
		}, "(listing skills (page "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := hostileDemo()
			ts := tc.hostile(f)
			defer ts.Close()
			defer f.Stop()
			dest := filepath.Join(t.TempDir(), "skills")
			os.MkdirAll(filepath.Join(dest, "demo"), 0o755)
			os.WriteFile(filepath.Join(dest, "demo/SKILL.md"), []byte("previous copy"), 0o644)
			args := append([]string{"--all", "--force", "--timeout", "1m", "--to", dest, "--url", ts.URL}, tc.flags...)
			code, _, stderr := runPull(t, tc.env, args...)
			if code != cmdline.ExitFailure || !strings.Contains(stderr, "Error: pull stopped at its --deadline of 1s before it finished "+tc.doing) ||
				!strings.Contains(stderr, "nothing was written") {
				t.Errorf("exit %d\n%s", code, stderr)
			}
			ents, _ := os.ReadDir(dest)
			if got, _ := os.ReadFile(filepath.Join(dest, "demo/SKILL.md")); string(got) != "previous copy" || len(ents) != 1 {
				t.Errorf("the destination changed: %q, %d entries", got, len(ents))
			}
		})
	}
	code, _, stderr := runPull(t, map[string]string{"SKILLS_DEADLINE": "soon"}, "--all", "--url", "http://127.0.0.1:1")
	if code != cmdline.ExitUsage || !strings.Contains(stderr, `SKILLS_DEADLINE="soon": want a duration`) {
		t.Errorf("bad SKILLS_DEADLINE: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runPull(t, nil, "--all", "--deadline", "-1s", "--url", "http://127.0.0.1:1")
	if code != cmdline.ExitUsage || !strings.Contains(stderr, "--deadline must be positive") {
		t.Errorf("negative --deadline: exit %d\n%s", code, stderr)
	}
}

// TestCheckDeadline: check stops at its --deadline against a server that
// drips every read, prints what it found so far and fails.
func TestCheckDeadline(t *testing.T) {
	f, _ := hostileDemo()
	ts := httptest.NewServer(pulltest.SlowDrip(f.Handler(true), 50*time.Millisecond, f.Done()))
	defer ts.Close()
	defer f.Stop()
	code, stdout, stderr := runCheck(t, "--url", ts.URL, "--timeout", "1m", "--deadline", "1s")
	if code != cmdline.ExitFailure || !strings.Contains(stderr, "Error: check stopped at its --deadline of 1s before it finished; the results above are partial") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "stopped: the --deadline was reached") {
		t.Errorf("the report does not say why it stopped:\n%s", stdout)
	}
}
