package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listingServer serves n pre-serialised skills/list entries shaped like a
// generated library's (about 940 bytes each: frontmatter with tags, five
// files with digests), pageSize per page, the way skills-mcp does. It
// isolates the cost of the MCP SDK's JSON path from any catalog.
func listingServer(n, pageSize int) (*mcp.Server, int) {
	entries := make([]json.RawMessage, n)
	total := 0
	for i := range entries {
		name := fmt.Sprintf("review-report-%d", i)
		base := "skill://data-analysis/" + name + "/"
		e := map[string]any{
			"uri": base + "SKILL.md",
			"frontmatter": map[string]any{
				"name":        name,
				"description": "Reviews report work for analysts, keeping the result readable and accurate. Use it when a customer reports a problem, or when the user mentions review or report.",
				"category":    "data-analysis",
				"tags":        []string{"review", "report", "pipeline"},
			},
		}
		var res []wireResource
		for j, f := range []string{"SKILL.md", "references/checklist.md", "references/examples/image-example.md", "references/guide.md", "scripts/run.py"} {
			res = append(res, wireResource{URI: base + f, Digest: fmt.Sprintf("sha256:%064x", i*8+j), Size: int64(1000 + j)})
		}
		e["resources"] = res
		b, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		entries[i] = b
		total += len(b)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "listing", Version: "1"}, nil)
	err := mcp.AddReceivingCustomMethod(s, methodListSkills, func(_ context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
		start := 0
		if p != nil && p.Cursor != "" {
			start, _ = strconv.Atoi(p.Cursor)
		}
		end := min(start+pageSize, n)
		res := &listSkillsResult{Skills: entries[start:end]}
		if end < n {
			res.NextCursor = strconv.Itoa(end)
		}
		return res, nil
	})
	if err != nil {
		panic(err)
	}
	return s, total
}

// BenchmarkListAll measures one complete skills/list walk of 1,000 entries
// through the SDK over the in-memory transport: the floor any go-sdk
// server and client pair pays per listing, whatever the catalog does.
func BenchmarkListAll(b *testing.B) {
	for _, pageSize := range []int{100, 1000} {
		b.Run(fmt.Sprintf("page=%d", pageSize), func(b *testing.B) {
			ctx := context.Background()
			srv, total := listingServer(1000, pageSize)
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			client, err := newClient()
			if err != nil {
				b.Fatal(err)
			}
			cs, err := client.Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				l, err := listAll(ctx, sdkLister(cs), nil)
				if err != nil || len(l.Entries) != 1000 {
					b.Fatalf("listAll: %d entries, %v", len(l.Entries), err)
				}
			}
		})
	}
}

// BenchmarkGenerateSkill measures drawing one skill's files (no disk I/O).
func BenchmarkGenerateSkill(b *testing.B) {
	opts := GenOptions{Skills: 1000, Seed: 1, Binaries: 0.02}
	plan := planLayout(opts)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		skillFiles(opts, i%len(plan), plan[i%len(plan)])
		i++
	}
}
