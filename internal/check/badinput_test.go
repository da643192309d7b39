package check_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/check"
	"github.com/skills-mcp/skills-mcp/internal/skillsext"
)

// raw is a result that marshals to whatever a fake server wants to send.
type raw struct {
	mcp.ResultBase
	json string
}

func (r *raw) MarshalJSON() ([]byte, error) { return []byte(r.json), nil }

// fake returns a server that declares the extension and answers
// skills/list with list and skills/get with an empty-manifest error.
func fake(list func(ctx context.Context, cursor string) (string, error)) *mcp.Server {
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}
	caps.AddExtension(skillsext.ExtensionID, map[string]any{})
	ms := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	mcp.AddReceivingCustomMethod(ms, skillsext.MethodList, func(ctx context.Context, _ *mcp.ServerSession, p *skillsext.ListSkillsParams) (*raw, error) {
		s, err := list(ctx, p.Cursor)
		if err != nil {
			return nil, err
		}
		return &raw{json: s}, nil
	})
	mcp.AddReceivingCustomMethod(ms, skillsext.MethodGet, func(_ context.Context, _ *mcp.ServerSession, p *skillsext.GetSkillParams) (*raw, error) {
		return nil, skillsext.NoSkill(p.URI)
	})
	return ms
}

// page returns a skills/list page of n valid-looking entries.
func page(n int, next string) string {
	var b strings.Builder
	b.WriteString(`{"resultType":"complete","ttlMs":0,"cacheScope":"public","skills":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"uri":"skill://s%d/SKILL.md","frontmatter":{"name":"s%d","description":"d"},"resources":[{"uri":"skill://s%d/SKILL.md","digest":"sha256:%064d","size":1}]}`, i, i, i, 0)
	}
	b.WriteString("]")
	if next != "" {
		fmt.Fprintf(&b, `,"nextCursor":%q`, next)
	}
	b.WriteString("}")
	return b.String()
}

func wantFail(t *testing.T, rep *check.Report, id, substr string) {
	t.Helper()
	for _, r := range results(rep, id, check.Fail) {
		if strings.Contains(r.Message, substr) {
			return
		}
	}
	t.Errorf("want FAIL %s containing %q:\n%s", id, substr, text(rep))
}

// Timeouts: hang is the one under test, short enough to wait out;
// ample is for servers that do answer, long enough for a loaded machine:
// the adversarial profile builds its archives on the first read of its
// index, over a second of CPU under -race, which beside other load took
// longer than check's default 10 s.
const (
	hang  = time.Second
	ample = 60 * time.Second
)

// TestHangingServer: a server that never answers skills/list, and one that
// never answers at all, give FAILs within the timeout instead of a hang.
func TestHangingServer(t *testing.T) {
	ms := fake(func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	start := time.Now()
	// Connecting is not under test here: a loaded machine may take over a
	// second to answer initialize under -race.
	rep := check.Run(context.Background(), inMemory(ms), &check.Options{Timeout: hang, ConnectTimeout: ample})
	wantFail(t, rep, "list-implemented", "no answer within 1s")
	if d := time.Since(start); d > 20*hang {
		t.Errorf("the run took %s", d)
	}

	// A "server" that reads everything and writes nothing.
	mute := func(context.Context) (mcp.Transport, error) {
		pr, _ := io.Pipe()
		return &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{}}, nil
	}
	start = time.Now()
	rep = check.Run(context.Background(), mute, &check.Options{Timeout: hang})
	wantFail(t, rep, "connect", "no answer within 1s")
	if d := time.Since(start); d > 20*hang {
		t.Errorf("the run took %s", d)
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// TestGarbage: garbage on the wire, and well-formed JSON-RPC with garbage
// results, are FAILs that say what came.
func TestGarbage(t *testing.T) {
	junk := func(context.Context) (mcp.Transport, error) {
		pr, pw := io.Pipe()
		go func() {
			for range 100 {
				if _, err := pw.Write([]byte("this is not JSON-RPC\n")); err != nil {
					return
				}
			}
		}()
		return &mcp.IOTransport{Reader: pr, Writer: nopWriteCloser{}}, nil
	}
	rep := check.Run(context.Background(), junk, &check.Options{Timeout: ample})
	if len(results(rep, "connect", check.Fail)) != 2 {
		t.Errorf("garbage bytes:\n%s", text(rep))
	}
	t.Setenv("SKILLS_MCP_CHECK_HELPER", "garbage")
	rep = check.Run(context.Background(), check.Command([]string{os.Args[0], "-test.run=^TestHelperServer$"}, io.Discard, 0), &check.Options{Timeout: ample})
	if len(results(rep, "connect", check.Fail)) != 2 {
		t.Errorf("garbage over stdio:\n%s", text(rep))
	}

	for body, want := range map[string][2]string{
		`{"skills":42}`:             {"list-implemented", "no skills array"},
		`{"resultType":"complete"}`: {"list-implemented", "no skills array"},
		`[1,2,3]`:                   {"list-implemented", "want a JSON object"},
		`{"skills":[7,"x",null]}`:   {"entry-shape", "an entry is not an object"},
		`{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":null}]}`:        {"entry-shape", `want an array or "dynamic"`},
		`{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":3}]}]}`: {"resources-digest-format", "needs a uri"},
		`{"skills":[{"uri":"skill://a/SKILL.md","frontmatter":[],"resources":[]}]}`:                                      {"entry-shape", "frontmatter"},
		`{"skills":[],"nextCursor":17}`: {"list-terminates", "want a string"},
		`{"skills":[{"uri":"skill://b/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":["dynamic"]}]}`: {"resources-digest-format", "needs a uri"},
	} {
		ms := fake(func(context.Context, string) (string, error) { return body, nil })
		rep := check.Run(context.Background(), inMemory(ms), &check.Options{Timeout: ample, Versions: []string{"2026-07-28"}})
		wantFail(t, rep, want[0], want[1])
	}
}

// TestEnormousPage: a page over the message bound is cut, over HTTP and
// over stdio, and reported with the cause.
func TestEnormousPage(t *testing.T) {
	huge := page(20000, "") // about 4 MB
	ms := fake(func(context.Context, string) (string, error) { return huge, nil })
	rep := check.Run(context.Background(), overHTTP(t, ms, 1<<20), &check.Options{Timeout: ample})
	wantFail(t, rep, "list-implemented", "over the 1048576-byte limit of one message")

	t.Setenv("SKILLS_MCP_CHECK_HELPER", "enormous")
	dial := check.Command([]string{os.Args[0], "-test.run=^TestHelperServer$"}, io.Discard, 1<<20)
	rep = check.Run(context.Background(), dial, &check.Options{Timeout: ample, Versions: []string{"2025-11-25"}})
	wantFail(t, rep, "list-implemented", "over the 1048576-byte limit of one message")

	// Many entries in memory, where no byte bound applies: the entry cap.
	rep = check.Run(context.Background(), inMemory(ms), &check.Options{Timeout: ample, MaxEntries: 500, Versions: []string{"2026-07-28"}})
	if len(results(rep, "list-terminates", check.Skip)) == 0 {
		t.Errorf("entry cap:\n%s", text(rep))
	}
	// A page of megabytes is not validated against the schema, and says so.
	if len(results(rep, "wire-schema", check.Skip)) == 0 {
		t.Errorf("a page over the validation bound was not reported as not validated:\n%s", text(rep))
	}
}

// TestCursorLoops: a cursor that repeats, and cursors that never end.
func TestCursorLoops(t *testing.T) {
	ms := fake(func(_ context.Context, cursor string) (string, error) {
		switch cursor {
		case "":
			return page(1, "a"), nil
		case "a":
			return page(0, "b"), nil
		default:
			return page(0, "a"), nil
		}
	})
	rep := check.Run(context.Background(), inMemory(ms), &check.Options{Timeout: ample})
	wantFail(t, rep, "list-terminates", "the listing loops")

	n := 0
	endless := fake(func(context.Context, string) (string, error) {
		n++
		return page(0, fmt.Sprint("c", n)), nil
	})
	rep = check.Run(context.Background(), inMemory(endless), &check.Options{Timeout: ample, MaxPages: 50, Versions: []string{"2026-07-28"}})
	wantFail(t, rep, "list-terminates", "still returned a nextCursor after 50 pages")

	// The same entry on two pages.
	dup := fake(func(_ context.Context, cursor string) (string, error) {
		if cursor == "" {
			return page(1, "x"), nil
		}
		return page(1, ""), nil
	})
	rep = check.Run(context.Background(), inMemory(dup), &check.Options{Timeout: ample, Versions: []string{"2026-07-28"}})
	wantFail(t, rep, "list-entry-atomic", "listed twice")
}

// TestNoExtension: a server that does not declare the extension fails the
// declaration, and no skills method is called.
func TestNoExtension(t *testing.T) {
	ms := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	var called atomic.Bool
	mcp.AddReceivingCustomMethod(ms, skillsext.MethodList, func(context.Context, *mcp.ServerSession, *skillsext.ListSkillsParams) (*raw, error) {
		called.Store(true)
		return &raw{json: page(0, "")}, nil
	})
	rep := check.Run(context.Background(), inMemory(ms), &check.Options{Timeout: ample})
	wantFail(t, rep, "capability-declared", "has no \"io.modelcontextprotocol/skills\"")
	wantFail(t, rep, "capability-resources", "the resources capability is missing")
	if called.Load() {
		t.Error("skills/list was called without the declaration")
	}
}

// TestCommandTransport checks our server over stdio, started as a command.
func TestCommandTransport(t *testing.T) {
	t.Setenv("SKILLS_MCP_CHECK_HELPER", "library")
	dial := check.Command([]string{os.Args[0], "-test.run=^TestHelperServer$"}, io.Discard, 0)
	rep := check.Run(context.Background(), dial, nil)
	if rep.Failed() || rep.Count(check.Warn) > 0 || len(rep.Versions) != 2 {
		t.Fatalf("over stdio:\n%s", text(rep))
	}
}

// TestHelperServer is not a test: with SKILLS_MCP_CHECK_HELPER set it is
// the stdio server the tests above start (a package test can count on no
// other binary).
func TestHelperServer(t *testing.T) {
	mode := os.Getenv("SKILLS_MCP_CHECK_HELPER")
	switch mode {
	case "":
		t.Skip("helper process only")
	case "library":
		libraryServer(t, nil).Run(context.Background(), &mcp.StdioTransport{})
	case "enormous":
		huge := page(20000, "")
		fake(func(context.Context, string) (string, error) { return huge, nil }).Run(context.Background(), &mcp.StdioTransport{})
	case "garbage":
		w := bufio.NewWriter(os.Stdout)
		for range 1000 {
			w.WriteString("garbage\n")
		}
		w.Flush()
	}
	os.Exit(0)
}
