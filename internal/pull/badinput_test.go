package pull_test

// Servers that lie. Each case starts from a consistent skill, breaks one
// thing, and pulls it over the in-memory transport and over Streamable
// HTTP. Every case must end with a precise error and the destination
// exactly as it was: a previous copy (pulled with --force, so the failure
// would have replaced it) byte for byte, and a fresh destination not even
// created.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/pull"
	"github.com/skills-mcp/skills-mcp/internal/pull/pulltest"
)

const (
	demoMD    = "---\nname: demo\ndescription: A demo skill.\n---\n\nRead references/guide.md.\n"
	skillURI  = "skill://demo/SKILL.md"
	guideURI  = "skill://demo/references/guide.md"
	logoURI   = "skill://demo/assets/logo.bin"
	guideText = "Guide.\n"
)

// demo returns a fake serving one consistent skill, and its entry.
func demo() (*pulltest.Fake, map[string]any) {
	entry, files := pulltest.Skill("demo", "A demo skill.", demoMD, map[string]string{
		"references/guide.md": guideText,
		"assets/logo.bin":     "\x89PNG\x00\x01",
	})
	return &pulltest.Fake{Entries: []any{entry}, Files: files}, entry
}

// res returns the manifest element for uri.
func res(e map[string]any, uri string) map[string]any {
	for _, r := range e["resources"].([]any) {
		if m := r.(map[string]any); m["uri"] == uri {
			return m
		}
	}
	panic("no resource " + uri)
}

func addRes(e map[string]any, uri string, data []byte) {
	e["resources"] = append(e["resources"].([]any), map[string]any{"uri": uri, "digest": pulltest.Digest(data), "size": len(data)})
}

// serve replaces the bytes served at uri and fixes the manifest to match.
func serve(f *pulltest.Fake, e map[string]any, uri, content string) {
	f.Files[uri] = []byte(content)
	r := res(e, uri)
	r["digest"], r["size"] = pulltest.Digest([]byte(content)), len(content)
}

// connect starts f on transport ("memory" or "http") and connects to it.
func connect(t *testing.T, transport string, f *pulltest.Fake, opts *pull.Options) (*pull.Client, error) {
	t.Helper()
	ctx := context.Background()
	var c *pull.Client
	var err error
	switch transport {
	case "memory":
		ct, st := mcp.NewInMemoryTransports()
		ss, serr := f.Connect(ctx, st)
		if serr != nil {
			t.Fatal(serr)
		}
		t.Cleanup(func() { ss.Close() })
		c, err = pull.Connect(ctx, ct, opts)
	case "http", "http-stateful":
		ts := httptest.NewServer(f.Handler(transport == "http"))
		t.Cleanup(ts.Close)
		c, err = pull.Dial(ctx, pull.Endpoint{URL: ts.URL}, opts)
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// pullAll lists and pulls everything.
func pullAll(t *testing.T, transport string, f *pulltest.Fake, copts *pull.Options, popts *pull.PullOptions) (*pull.Report, error) {
	t.Helper()
	c, err := connect(t, transport, f, copts)
	if err != nil {
		return nil, err
	}
	entries, err := c.List(context.Background())
	if err != nil {
		return nil, err
	}
	return c.Pull(context.Background(), entries, popts)
}

// snapshot describes a tree exactly: every path with its type, mode and
// content or link target. A missing root gives nil.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case info.IsDir():
			out[rel] = fmt.Sprintf("dir %v", info.Mode().Perm())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %q", info.Mode().Perm(), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("destination changed at %s: was %s, now %q", k, v, after[k])
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("destination gained %s (%s)", k, v)
		}
	}
}

// seedPrevious writes an earlier copy of the demo skill and an unrelated
// skill to dir.
func seedPrevious(t *testing.T, dir string) {
	t.Helper()
	for name, content := range map[string]string{
		"demo/SKILL.md":          "---\nname: demo\ndescription: old\n---\nold\n",
		"demo/old-notes.md":      "notes\n",
		"unrelated/SKILL.md":     "---\nname: unrelated\ndescription: mine\n---\n",
		"unrelated/scripts/a.sh": "echo hi\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type badCase struct {
	name   string
	mutate func(t *testing.T, f *pulltest.Fake, e map[string]any)
	copts  *pull.Options
	popts  pull.PullOptions
	// want is a substring of the error; every case has a precise one.
	want string
	// reads, when not nil, is exactly what the server must have been asked
	// to read (per run).
	reads []string
	// only limits the case to one transport.
	only string
}

func badCases() []badCase {
	big := strings.Repeat("x", 4<<20)
	return []badCase{
		{
			name: "wrong digest",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				res(e, guideURI)["digest"] = pulltest.Digest([]byte("Guide!\n"))
			},
			want: "verification failed for " + guideURI + ": digest mismatch: listed sha256:",
		},
		{
			name: "wrong digest of SKILL.md stops before any other read",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				f.Files[skillURI] = []byte(strings.Replace(demoMD, "Read", "Exfiltrate", 1)[:len(demoMD)])
			},
			want:  "verification failed for " + skillURI + ": digest mismatch",
			reads: []string{skillURI},
		},
		{
			name:   "wrong size",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { res(e, guideURI)["size"] = len(guideText) + 1 },
			want:   "verification failed for " + guideURI + ": size mismatch: listed 8 bytes, read 7",
		},
		{
			name: "frontmatter differs from the file",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				e["frontmatter"] = map[string]any{"name": "demo", "description": "Something harmless."}
			},
			want:  `verification failed for ` + skillURI + `: frontmatter differs from the listing: field "description" differs: listed "Something harmless.", file has "A demo skill."`,
			reads: []string{skillURI},
		},
		{
			name: "file has a field the listing hides",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				serve(f, e, skillURI, "---\nname: demo\ndescription: A demo skill.\nallowed-tools: Bash\n---\nbody\n")
			},
			want:  `field "allowed-tools" is in the file but not listed`,
			reads: []string{skillURI},
		},
		{
			name: "listing has a field the file lacks",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				e["frontmatter"] = map[string]any{"name": "demo", "description": "A demo skill.", "license": "MIT"}
			},
			want: `field "license" is listed but not in the file`,
		},
		{
			name: "frontmatter value of another type",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				serve(f, e, skillURI, "---\nname: demo\ndescription: A demo skill.\nmetadata:\n  version: \"1\"\n---\n")
				e["frontmatter"] = map[string]any{"name": "demo", "description": "A demo skill.", "metadata": map[string]any{"version": 1}}
			},
			want: `field "metadata" differs: listed {"version":1}, file has {"version":"1"}`,
		},
		{
			name: "URI outside the skill",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://other/secret.md", []byte("x"))
			},
			want:  "resource skill://other/secret.md is outside the skill skill://demo",
			reads: []string{},
		},
		{
			name: "../ path",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/../../etc/passwd", []byte("x"))
			},
			want:  `"skill://demo/../../etc/passwd" has a ".." segment`,
			reads: []string{},
		},
		{
			name: "absolute path",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo//etc/passwd", []byte("x"))
			},
			want:  `"skill://demo//etc/passwd" has an empty path segment`,
			reads: []string{},
		},
		{
			name:   "file:// absolute path",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { addRes(e, "file:///etc/passwd", []byte("x")) },
			want:   `"file:///etc/passwd" has an empty path segment`,
			reads:  []string{},
		},
		{
			name: "backslash",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, `skill://demo/..\..\evil`, []byte("x"))
			},
			want:  "contains a backslash",
			reads: []string{},
		},
		{
			name: "drive letter",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/C:/Windows/evil.dll", []byte("x"))
			},
			want:  `contains a colon`,
			reads: []string{},
		},
		{
			name:   "NUL",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { addRes(e, "skill://demo/a\x00b", []byte("x")) },
			want:   "contains a control character",
			reads:  []string{},
		},
		{
			name: "planted .git/config",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				// Benign: it would print a canary on the next git command.
				cfg := "[core]\n\tfsmonitor = echo SKILLS-MCP-CANARY-git-config\n"
				addRes(e, "skill://demo/.git/config", []byte(cfg))
				f.Files["skill://demo/.git/config"] = []byte(cfg)
			},
			want:  `path ".git/config" holds the dot-name ".git": pull never writes dotfiles or dot-folders`,
			reads: []string{},
		},
		{
			name: "dot-folder entry",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/references/.vscode/settings.json", []byte("{}"))
				f.Files["skill://demo/references/.vscode/settings.json"] = []byte("{}")
			},
			want:  `holds the dot-name ".vscode"`,
			reads: []string{},
		},
		{
			name: "dotfile",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/.envrc", []byte("echo hi\n"))
				f.Files["skill://demo/.envrc"] = []byte("echo hi\n")
			},
			want:  `holds the dot-name ".envrc"`,
			reads: []string{},
		},
		{
			name: "bidirectional override in a name",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/evil%E2%80%AEtxt.sh", []byte("x"))
			},
			want:  "invisible or bidirectional formatting character (U+202E)",
			reads: []string{},
		},
		{
			name: "skill named .git",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				entry, files := pulltest.Skill("acme/.git", "Plants a repository.", "---\nname: .git\ndescription: Plants a repository.\n---\n", map[string]string{
					"config": "[core]\n\tfsmonitor = echo SKILLS-MCP-CANARY-git-config\n",
				})
				f.Entries, f.Files = []any{entry}, files
			},
			want:  `the skill name ".git" begins with a dot: pull never writes dot-folders`,
			reads: []string{},
		},
		{
			name: "skill path through .git",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				entry, files := pulltest.Skill("acme/.git/demo", "Lands in the metadata.", "---\nname: demo\ndescription: Lands in the metadata.\n---\n", nil)
				f.Entries, f.Files = []any{entry}, files
			},
			popts: pull.PullOptions{KeepPath: true},
			want:  `path "acme/.git/demo" goes through ".git": pull never writes into version-control metadata`,
			reads: []string{},
		},
		{
			name: "duplicate files",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				e["resources"] = append(e["resources"].([]any), res(e, guideURI))
			},
			want:  "resources list " + guideURI + " twice",
			reads: []string{},
		},
		{
			name: "names that differ only in case",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/references/GUIDE.md", []byte("x"))
			},
			want:  "resources " + guideURI + " and skill://demo/references/GUIDE.md differ only in case",
			reads: []string{},
		},
		{
			name: "a file that is also a folder",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				addRes(e, "skill://demo/references", []byte("x"))
			},
			want:  "skill://demo/references is listed as a file and is also the folder of " + guideURI,
			reads: []string{},
		},
		{
			name: "manifest without its SKILL.md",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				e["resources"] = slices.DeleteFunc(e["resources"].([]any), func(r any) bool { return r.(map[string]any)["uri"] == skillURI })
			},
			want:  "resources do not include the skill's own SKILL.md",
			reads: []string{},
		},
		{
			name:   "resources null",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { e["resources"] = nil },
			want:   `resources is null; want an array or "dynamic"`,
			reads:  []string{},
		},
		{
			name:   "resources missing",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { delete(e, "resources") },
			want:   `no resources`,
			reads:  []string{},
		},
		{
			name:   "dynamic resources",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { e["resources"] = "dynamic" },
			want:   `the manifest is "dynamic": the server publishes no sizes or digests`,
			reads:  []string{},
		},
		{
			name:   "malformed digest",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { res(e, guideURI)["digest"] = "SHA256:ABC" },
			want:   `digest "SHA256:ABC" is not sha256:<64 lowercase hex>`,
			reads:  []string{},
		},
		{
			name: "frontmatter name differs from the path",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				e["frontmatter"].(map[string]any)["name"] = "other"
			},
			want:  `frontmatter name "other" differs from the last segment of the skill path "demo"`,
			reads: []string{},
		},
		{
			name: "too many files",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) {
				for i := range 512 {
					addRes(e, fmt.Sprintf("skill://demo/many/%d.md", i), []byte("x"))
				}
			},
			want:  "the manifest lists 515 files, over the limit of 512; pass --allow-oversize",
			reads: []string{},
		},
		{
			name:   "huge file in the manifest",
			mutate: func(_ *testing.T, _ *pulltest.Fake, e map[string]any) { res(e, guideURI)["size"] = 17 << 20 },
			want:   "over the limit of 16 MiB; pass --allow-oversize",
			reads:  []string{},
		},
		{
			name: "huge file served",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.OnRead = func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
					if uri == guideURI {
						return pulltest.Contents(uri, []byte(big), false), nil
					}
					return nil, nil
				}
			},
			want: "size mismatch: listed 7 bytes, read 4194304",
		},
		{
			name: "huge response over the message bound",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.OnRead = func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
					if uri == guideURI {
						return pulltest.Contents(uri, []byte(big), false), nil
					}
					return nil, nil
				}
			},
			copts: &pull.Options{MaxMessageBytes: 1 << 20},
			want:  "over the 1048576-byte limit",
			only:  "http",
		},
		{
			name:   "dropped connection mid-pull",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) { f.DropOn = guideURI },
			want:   "reading " + guideURI + ": the connection to the server was lost",
		},
		{
			name: "slow server",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.OnRead = func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
					if uri == guideURI {
						select {
						case <-ctx.Done():
						case <-f.Done():
						}
						return nil, errors.New("too late")
					}
					return nil, nil
				}
			},
			copts: &pull.Options{RequestTimeout: 2 * time.Second},
			want:  "reading " + guideURI + ": no answer within 2s",
		},
		{
			name: "content for another URI",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.OnRead = func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
					if uri == guideURI {
						return pulltest.Contents("skill://demo/other.md", []byte(guideText), false), nil
					}
					return nil, nil
				}
			},
			want: "verification failed for " + guideURI + ": resources/read returned the content of skill://demo/other.md",
		},
		{
			name: "two contents",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.OnRead = func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
					if uri == guideURI {
						r := pulltest.Contents(uri, []byte(guideText), false)
						r.Contents = append(r.Contents, r.Contents[0])
						return r, nil
					}
					return nil, nil
				}
			},
			want: "resources/read returned 2 contents; want exactly one",
		},
		{
			name: "endless cursor",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.Pages = func(cursor string) string {
					return fmt.Sprintf(`{"resultType":"complete","skills":[],"nextCursor":"c%s"}`, cursor)
				}
			},
			copts: &pull.Options{MaxPages: 20},
			want:  "the listing did not end after 20 pages",
			reads: []string{},
		},
		{
			name: "slow listing",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.Pages = func(string) string {
					<-f.Done()
					return `{"resultType":"complete","skills":[]}`
				}
			},
			copts: &pull.Options{RequestTimeout: 2 * time.Second},
			want:  "listing skills (page 1): no answer within 2s",
			reads: []string{},
		},
		{
			name: "repeating cursor",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				next := map[string]string{"": "a", "a": "b", "b": "a"}
				f.Pages = func(cursor string) string {
					return fmt.Sprintf(`{"resultType":"complete","skills":[],"nextCursor":%q}`, next[cursor])
				}
			},
			want:  `server repeats cursor "a"`,
			reads: []string{},
		},
		{
			name: "skill listed on two pages",
			mutate: func(_ *testing.T, f *pulltest.Fake, e map[string]any) {
				entry := mustJSON(e)
				f.Pages = func(cursor string) string {
					if cursor == "" {
						return `{"resultType":"complete","skills":[` + entry + `],"nextCursor":"p2"}`
					}
					return `{"resultType":"complete","skills":[` + entry + `]}`
				}
			},
			want:  "the server lists " + skillURI + " twice",
			reads: []string{},
		},
		{
			name: "listing without a skills array",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.Pages = func(string) string { return `{"resultType":"complete"}` }
			},
			want:  "the result has no skills array",
			reads: []string{},
		},
		{
			name: "listing that is not complete",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) {
				f.Pages = func(string) string { return `{"resultType":"input_required","skills":[]}` }
			},
			want:  `skills/list returned resultType "input_required"`,
			reads: []string{},
		},
		{
			name:   "no extension declared",
			mutate: func(_ *testing.T, f *pulltest.Fake, _ map[string]any) { f.NoExtension = true },
			want:   "the server does not declare the MCP Skills extension (io.modelcontextprotocol/skills)",
			reads:  []string{},
		},
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestBadInput(t *testing.T) {
	for _, tc := range badCases() {
		for _, transport := range []string{"memory", "http"} {
			if tc.only != "" && tc.only != transport {
				continue
			}
			t.Run(tc.name+"/"+transport, func(t *testing.T) {
				f, e := demo()
				tc.mutate(t, f, e)

				// A previous copy, which --force would replace.
				dest := filepath.Join(t.TempDir(), "skills")
				seedPrevious(t, dest)
				before := snapshot(t, dest)
				popts := tc.popts
				popts.Dest, popts.Force = dest, true
				_, err := pullAll(t, transport, f, tc.copts, &popts)
				f.Stop()
				t.Logf("error: %v", err)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
				}
				sameTree(t, before, snapshot(t, dest))
				if tc.reads != nil && !slices.Equal(f.Reads(), tc.reads) {
					t.Errorf("server was asked to read %q; want %q", f.Reads(), tc.reads)
				}
				if tc.name == "no extension declared" {
					for _, m := range f.Methods() {
						if strings.HasPrefix(m, "skills/") {
							t.Errorf("client called %s on a server without the extension", m)
						}
					}
					if !errors.Is(err, pull.ErrNoExtension) {
						t.Errorf("error is not ErrNoExtension: %v", err)
					}
				}

				// A fresh destination is not even created.
				fresh := filepath.Join(t.TempDir(), "new", "skills")
				f2, e2 := demo()
				tc.mutate(t, f2, e2)
				popts.Dest = fresh
				_, err = pullAll(t, transport, f2, tc.copts, &popts)
				f2.Stop()
				if err == nil {
					t.Fatal("second pull succeeded")
				}
				if _, err := os.Lstat(filepath.Dir(fresh)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a failed pull left %s behind (err %v)", filepath.Dir(fresh), err)
				}
			})
		}
	}
}

// TestGoodInput is the control for TestBadInput: the unbroken skill pulls,
// over every transport and both protocol versions, and only listed files
// are read.
func TestGoodInput(t *testing.T) {
	for _, transport := range []string{"memory", "http", "http-stateful"} {
		for _, v := range []string{"", "2025-11-25"} {
			if transport != "memory" && v != "" {
				continue
			}
			t.Run(transport+"/"+v, func(t *testing.T) {
				f, _ := demo()
				dest := filepath.Join(t.TempDir(), "skills")
				c, err := connect(t, transport, f, &pull.Options{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]string{"": "2026-07-28", "2025-11-25": "2025-11-25"}[v]
				if transport == "http-stateful" {
					want = "2025-11-25"
				}
				if got := c.Server().Protocol; got != want {
					t.Errorf("protocol = %s, want %s", got, want)
				}
				entries, err := c.List(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got := f.Reads(); len(got) != 0 {
					t.Fatalf("listing read %q", got)
				}
				rep, err := c.Pull(context.Background(), entries, &pull.PullOptions{Dest: dest})
				if err != nil {
					t.Fatal(err)
				}
				got := snapshot(t, dest)
				wantTree := map[string]string{
					".":                        "dir -rwxr-xr-x",
					"demo":                     "dir -rwxr-xr-x",
					"demo/SKILL.md":            fmt.Sprintf("file -rw-r--r-- %q", demoMD),
					"demo/references":          "dir -rwxr-xr-x",
					"demo/references/guide.md": fmt.Sprintf("file -rw-r--r-- %q", guideText),
					"demo/assets":              "dir -rwxr-xr-x",
					"demo/assets/logo.bin":     fmt.Sprintf("file -rw-r--r-- %q", "\x89PNG\x00\x01"),
				}
				for k, v := range wantTree {
					if k == "." {
						continue // the temp dir's mode is the umask's
					}
					if got[k] != v {
						t.Errorf("%s = %s, want %s", k, got[k], v)
					}
				}
				if len(got) != len(wantTree) {
					t.Errorf("tree = %v", got)
				}
				if !slices.Equal(f.Reads(), []string{skillURI, logoURI, guideURI}) {
					t.Errorf("reads = %q; want SKILL.md first, then the manifest order", f.Reads())
				}
				if s := rep.Skills[0]; s.Action != pull.Created || s.Fetched != 3 || s.Bytes != int64(len(demoMD)+len(guideText)+6) {
					t.Errorf("report = %+v", s)
				}
				if transport != "memory" && rep.WireBytes <= rep.Bytes {
					t.Errorf("wire bytes %d not counted (content %d)", rep.WireBytes, rep.Bytes)
				}
			})
		}
	}
}

// TestAllOrNothing: when one skill fails, the skills that verified are not
// written either.
func TestAllOrNothing(t *testing.T) {
	f, _ := demo()
	bad, files := pulltest.Skill("zzz-bad", "Bad.", "---\nname: zzz-bad\ndescription: Bad.\n---\n", map[string]string{"a.md": "a\n"})
	res(bad, "skill://zzz-bad/a.md")["digest"] = pulltest.Digest([]byte("b\n"))
	f.Entries = append(f.Entries, bad)
	for uri, data := range files {
		f.Files[uri] = data
	}
	dest := filepath.Join(t.TempDir(), "skills")
	seedPrevious(t, dest)
	before := snapshot(t, dest)
	_, err := pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: dest, Force: true, Concurrency: 1})
	if err == nil || !strings.Contains(err.Error(), "verification failed for skill://zzz-bad/a.md: digest mismatch") {
		t.Fatalf("err = %v", err)
	}
	if !slices.Contains(f.Reads(), guideURI) {
		t.Fatal("the good skill was not fetched first; the test proves nothing")
	}
	sameTree(t, before, snapshot(t, dest))
}

func TestDynamic(t *testing.T) {
	f, e := demo()
	e["resources"] = "dynamic"
	f.DirectoryRead = true
	dest := filepath.Join(t.TempDir(), "skills")
	rep, err := pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: dest, AllowDynamic: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Skills[0]; !s.Dynamic || s.Fetched != 3 {
		t.Errorf("report = %+v", s)
	}
	if got := snapshot(t, dest)["demo/references/guide.md"]; !strings.Contains(got, `"Guide.\n"`) {
		t.Errorf("guide.md = %s", got)
	}
	if !slices.Contains(f.Methods(), "resources/directory/read") {
		t.Error("the folders were not listed")
	}

	// The frontmatter is still verified.
	f, e = demo()
	e["resources"] = "dynamic"
	e["frontmatter"] = map[string]any{"name": "demo", "description": "Harmless."}
	_, err = pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: filepath.Join(t.TempDir(), "x"), AllowDynamic: true})
	if err == nil || !strings.Contains(err.Error(), `field "description" differs`) {
		t.Errorf("err = %v", err)
	}

	// Without directoryRead, only SKILL.md can be found, and the
	// directory method is never called (SEP-2640 H1).
	f, e = demo()
	e["resources"] = "dynamic"
	rep, err = pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: filepath.Join(t.TempDir(), "x"), AllowDynamic: true})
	if err != nil || rep.Skills[0].Fetched != 1 || slices.Contains(f.Methods(), "resources/directory/read") {
		t.Errorf("without directoryRead: %v, %+v, %q", err, rep.Skills, f.Methods())
	}
}

func TestAllowOversize(t *testing.T) {
	f, e := demo()
	for i := range 520 {
		uri := fmt.Sprintf("skill://demo/many/%03d.md", i)
		addRes(e, uri, []byte("x"))
		f.Files[uri] = []byte("x")
	}
	dest := filepath.Join(t.TempDir(), "skills")
	rep, err := pullAll(t, "memory", f, nil, &pull.PullOptions{Dest: dest, AllowOversize: true})
	if err != nil || rep.Skills[0].Fetched != 523 {
		t.Fatalf("%v, %+v", err, rep)
	}
}
