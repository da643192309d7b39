package main_test

// End-to-end tests of pull and check over the real binary: against our
// own server on a library whose names cannot all be served, and against
// hostile servers run by the test on loopback.

import (
	"fmt"
	"io/fs"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
)

// tree lists every file below root, slash-separated, with its content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPullAllOddNames pulls everything from our own server over a library
// whose file and folder names break the URI name rule (control
// characters, a backslash, bidirectional overrides, invalid UTF-8): the
// server withholds them, so every URI it lists is one pull accepts, and
// pull --all succeeds and writes every served file.
func TestPullAllOddNames(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs a file system that takes any bytes in a name")
	}
	lib := t.TempDir()
	served := map[string]string{
		"odd/SKILL.md":               "---\nname: odd\ndescription: Has odd names.\n---\nBody.\n",
		"odd/refs/ok.md":             "ok\n",
		"odd/refs/café notes.md":     "escaped\n",
		"odd/refs/joined\u200d.md":   "joiner\n",
		"plain/SKILL.md":             "---\nname: plain\ndescription: Plain.\n---\n",
		"plain/scripts/run-it.py":    "print('hi')\n",
		"plain/assets/100% sure.txt": "sure\n",
	}
	withheld := []string{
		"odd/refs/back\\slash.md", "odd/refs/ctl\x01.md", "odd/refs/esc\x1b[0m.md", "odd/refs/c1\u0085.md",
		"odd/refs/evil\u202etxt.sh", "odd/refs/iso\u2066.md", "odd/refs/zw\u200b.md", "odd/refs/bad\xff.md",
		"odd/we\x7fird/inside.md", "cat\u202e/hidden/SKILL.md",
	}
	for name, content := range served {
		writeFile(t, filepath.Join(lib, filepath.FromSlash(name)), content)
	}
	for _, name := range withheld {
		writeFile(t, filepath.Join(lib, filepath.FromSlash(name)), "---\nname: hidden\ndescription: Withheld.\n---\n")
	}
	dest := filepath.Join(t.TempDir(), "skills")
	code, stdout, stderr := run(t, nil, "pull", "--all", "--to", dest, "--command", binary, "--root", lib)
	if code != 0 {
		t.Fatalf("pull --all: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := tree(t, dest)
	for name, content := range served {
		if got[name] != content {
			t.Errorf("%s = %q, want %q", name, got[name], content)
		}
	}
	if len(got) != len(served) {
		var names []string
		for n := range got {
			names = append(names, fmt.Sprintf("%+q", n))
		}
		slices.Sort(names)
		t.Errorf("pulled %d files, want %d: %s", len(got), len(served), strings.Join(names, ", "))
	}
	// The check agrees: every listed URI parses, every file reads back.
	code, stdout, stderr = run(t, nil, "check", "--command", binary, "--root", lib)
	if code != 0 || !strings.Contains(stdout, " 0 failed") {
		t.Errorf("check: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hostileSkill returns a fake serving one consistent skill, demo.
func hostileSkill() *pulltest.Fake {
	entry, files := pulltest.Skill("demo", "A demo skill.", "---\nname: demo\ndescription: A demo skill.\n---\nbody\n", map[string]string{"refs/a.md": "a\n"})
	return &pulltest.Fake{Entries: []any{entry}, Files: files}
}

// TestPullHostileServer runs pull and check from the binary against
// servers that lie or stall: each is refused with a clear error, exit 1,
// and nothing is written outside the rules.
func TestPullHostileServer(t *testing.T) {
	canary := "[core]\n\tfsmonitor = echo SKILLS-MCP-CANARY-git-config\n"
	for _, tc := range []struct {
		name    string
		hostile func(f *pulltest.Fake) *httptest.Server
		env     []string
		args    []string
		want    string
	}{
		{
			name: "planted .git/config",
			hostile: func(f *pulltest.Fake) *httptest.Server {
				e := f.Entries[0].(map[string]any)
				e["resources"] = append(e["resources"].([]any), map[string]any{"uri": "skill://demo/.git/config", "digest": pulltest.Digest([]byte(canary)), "size": len(canary)})
				f.Files["skill://demo/.git/config"] = []byte(canary)
				return httptest.NewServer(f.Handler(true))
			},
			want: `path ".git/config" holds the dot-name ".git": pull never writes dotfiles or dot-folders`,
		},
		{
			name: "dot-folder entry",
			hostile: func(f *pulltest.Fake) *httptest.Server {
				e := f.Entries[0].(map[string]any)
				e["resources"] = append(e["resources"].([]any), map[string]any{"uri": "skill://demo/refs/.github/workflows/x.yml", "digest": pulltest.Digest([]byte("on: push\n")), "size": 9})
				f.Files["skill://demo/refs/.github/workflows/x.yml"] = []byte("on: push\n")
				return httptest.NewServer(f.Handler(true))
			},
			want: `holds the dot-name ".github"`,
		},
		{
			name: "slow-drip body",
			hostile: func(f *pulltest.Fake) *httptest.Server {
				return httptest.NewServer(pulltest.SlowDrip(f.Handler(true), 50*time.Millisecond, f.Done()))
			},
			args: []string{"--deadline", "2s"},
			want: "pull stopped at its --deadline of 2s before it finished (reading skill://demo/SKILL.md); nothing was written",
		},
		{
			name: "endless cursor",
			hostile: func(f *pulltest.Fake) *httptest.Server {
				f.Pages = func(cursor string) string {
					select {
					case <-time.After(20 * time.Millisecond):
					case <-f.Done():
					}
					return fmt.Sprintf(`{"resultType":"complete","skills":[],"nextCursor":"c%s"}`, cursor)
				}
				return httptest.NewServer(f.Handler(true))
			},
			env:  []string{"SKILLS_DEADLINE=2s"},
			want: "pull stopped at its --deadline of 2s before it finished (listing skills (page ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hostileSkill()
			ts := tc.hostile(f)
			defer ts.Close()
			defer f.Stop()
			// A previous copy, which --force would replace, and a fresh
			// destination, which must not even be created.
			dest := filepath.Join(t.TempDir(), "skills")
			writeFile(t, filepath.Join(dest, "demo", "SKILL.md"), "previous copy\n")
			fresh := filepath.Join(t.TempDir(), "new", "skills")
			for _, to := range []string{dest, fresh} {
				args := append([]string{"pull", "--all", "--force", "--timeout", "1m", "--to", to, "--url", ts.URL}, tc.args...)
				code, _, stderr := run(t, tc.env, args...)
				if code != 1 || !strings.Contains(stderr, tc.want) {
					t.Errorf("pull --to %s: exit %d\n%s\nwant exit 1 and %q", to, code, stderr, tc.want)
				}
			}
			if got := tree(t, dest); len(got) != 1 || got["demo/SKILL.md"] != "previous copy\n" {
				t.Errorf("the previous copy changed: %q", got)
			}
			if _, err := os.Lstat(filepath.Dir(fresh)); err == nil {
				t.Errorf("a failed pull created %s", filepath.Dir(fresh))
			}
		})
	}

	t.Run("check at its deadline", func(t *testing.T) {
		f := hostileSkill()
		ts := httptest.NewServer(pulltest.SlowDrip(f.Handler(true), 50*time.Millisecond, f.Done()))
		defer ts.Close()
		defer f.Stop()
		code, _, stderr := run(t, []string{"SKILLS_DEADLINE=2s"}, "check", "--timeout", "1m", "--url", ts.URL)
		if code != 1 || !strings.Contains(stderr, "check stopped at its --deadline of 2s before it finished; the results above are partial") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	})

	t.Run("sync over a repository", func(t *testing.T) {
		f := hostileSkill()
		ts := httptest.NewServer(f.Handler(true))
		defer ts.Close()
		dest := filepath.Join(t.TempDir(), "skills")
		writeFile(t, filepath.Join(dest, "demo", "SKILL.md"), "local edit\n")
		writeFile(t, filepath.Join(dest, "demo", ".git", "config"), "[core]\n")
		before := tree(t, dest)
		code, _, stderr := run(t, nil, "pull", "demo", "--sync", "--to", dest, "--url", ts.URL)
		if code != 1 || !strings.Contains(stderr, "holds .git: pull never replaces or deletes version-control metadata") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
		if got := tree(t, dest); !maps.Equal(got, before) {
			t.Errorf("the repository changed: %q", got)
		}
		if len(f.Reads()) != 0 {
			t.Errorf("the server was read before the refusal: %q", f.Reads())
		}
	})
}
