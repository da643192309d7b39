package skills_test

import (
	"context"
	"embed"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/skills"
)

//go:embed testdata/greet
var embedded embed.FS

// Serve skills embedded in the binary on your own server: the embed.FS's
// one top folder (testdata) is found and served from inside. This is the
// whole program but for its imports and the last line, which would be
// server.Run(ctx, &mcp.StdioTransport{}).
func Example_embed() {
	ctx := context.Background()
	catalog, err := skills.Open(ctx, []skills.Library{{FS: embedded}}, nil)
	if err != nil {
		panic(err)
	}
	defer catalog.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "my-server", Version: "v1"}, nil)
	if err := skills.Attach(server, catalog, nil); err != nil {
		panic(err)
	}
	fmt.Println(catalog.Skills())
	// Output: [skill://greet/SKILL.md]
}
