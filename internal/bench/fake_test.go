package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/internal/bench/multiserve"
)

// The tests run real server processes: the test binary re-executes itself
// as a small fake MCP server ("<test binary> fake-server MODE"), which
// TestMain recognises before any test runs. Modes:
//
//	good      five skills over three skills/list pages, a search tool,
//	          skills/get and resources/read
//	loop      like good, but skills/list always hands out the same cursor
//	changing  like good, but one skill's digest changes after the first
//	          complete listing
//	chatty    like good, but before each skills/list page it pings the
//	          client and sends it a progress notification
//	hang      reads nothing, answers nothing, ignores stdin EOF
//	exit      prints an error to stderr and exits with status 3
const fakeArg = "fake-server"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == fakeArg {
		os.Exit(runFake(os.Args[2]))
	}
	if len(os.Args) > 1 && os.Args[1] == CatalogsCommand { // the server of Catalogs, as skills-bench runs it
		os.Exit(multiserve.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	// A race-enabled binary sleeps a second before it exits, by default; the
	// fakes it starts need not.
	if g := os.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=0"))
	}
	os.Exit(m.Run())
}

// fakeCommand returns the command line that starts the fake in mode.
func fakeCommand(t testing.TB, mode string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, fakeArg, mode}
}

func runFake(mode string) int {
	switch mode {
	case "hang":
		time.Sleep(time.Hour) // the benchmark must kill us
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "fake: cannot open the library: no such directory")
		return 3
	}
	if err := newFakeServer(mode).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 1
	}
	return 0
}

// fakeSkills are the URIs the fake serves, in listing order.
var fakeSkills = []string{
	"skill://alpha-one/SKILL.md",
	"skill://beta-two/SKILL.md",
	"skill://gamma-three/SKILL.md",
	"skill://delta-four/SKILL.md",
	"skill://epsilon-five/SKILL.md",
}

const fakePageSize = 2

type fakeEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   []wireResource `json:"resources"`
}

func fakeEntryJSON(uri string, version int) json.RawMessage {
	name := strings.TrimSuffix(strings.TrimPrefix(uri, "skill://"), "/SKILL.md")
	e := fakeEntry{
		URI:         uri,
		Frontmatter: map[string]any{"name": name, "description": "A fake skill."},
		Resources:   []wireResource{{URI: uri, Digest: fmt.Sprintf("sha256:%064d", version), Size: 42}},
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	return b
}

// newFakeServer builds the fake for the modes that answer.
func newFakeServer(mode string) *mcp.Server {
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}, Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension("io.modelcontextprotocol/skills", map[string]any{})
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	var listings atomic.Int64 // complete listings started
	err := mcp.AddReceivingCustomMethod(s, methodListSkills, func(ctx context.Context, ss *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
		if mode == "chatty" {
			if err := ss.Ping(ctx, nil); err != nil {
				return nil, fmt.Errorf("the client did not answer ping: %w", err)
			}
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "list", Progress: 1}); err != nil {
				return nil, err
			}
		}
		start := 0
		if p != nil && p.Cursor != "" {
			if mode != "loop" {
				if _, err := fmt.Sscanf(p.Cursor, "at-%d", &start); err != nil {
					return nil, err
				}
			}
		} else {
			listings.Add(1)
		}
		version := 1
		if mode == "changing" && listings.Load() > 1 {
			version = 2
		}
		res := &listSkillsResult{}
		end := min(start+fakePageSize, len(fakeSkills))
		for _, uri := range fakeSkills[start:end] {
			res.Skills = append(res.Skills, fakeEntryJSON(uri, version))
		}
		switch {
		case mode == "loop":
			res.NextCursor = "again"
		case end < len(fakeSkills):
			res.NextCursor = fmt.Sprintf("at-%d", end)
		}
		return res, nil
	})
	if err != nil {
		panic(err)
	}
	err = mcp.AddReceivingCustomMethod(s, methodGetSkill, func(_ context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
		for _, uri := range fakeSkills {
			if p != nil && p.URI == uri {
				return &getSkillResult{Skill: fakeEntryJSON(uri, 1)}, nil
			}
		}
		return nil, fmt.Errorf("no skill %q", p.URI)
	})
	if err != nil {
		panic(err)
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "skill://{+path}", Name: "skill-file"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: "---\nname: x\n---\n"}}}, nil
		})
	type searchIn struct {
		Query string `json:"query"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "fake_search_skills", Description: "search"},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "results for " + in.Query}}}, nil, nil
		})
	return s
}
