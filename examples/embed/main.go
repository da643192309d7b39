// Command embed is a complete MCP server of the official go-sdk that serves
// its own tool and a library of Agent Skills embedded in the binary, over
// stdio. Copy it, put your skills under skills/, and build.
package main

import (
	"context"
	"embed"
	"io/fs"
	"log"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skills-mcp/skills-mcp/skills"
)

// library holds the skills served: one folder with a SKILL.md per skill.
//
//go:embed skills
var library embed.FS

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	sub, err := fs.Sub(library, "skills")
	if err != nil {
		return err
	}
	catalog, err := skills.Open(ctx, []skills.Library{{FS: sub}}, nil)
	if err != nil {
		return err
	}
	defer catalog.Close()

	server := mcp.NewServer(&mcp.Implementation{Name: "embed-example", Version: "v0.1.0"}, nil)
	// Your own tool, next to the skills.
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Say hello to someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, greetOut, error) {
			return nil, greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	// skills/list, skills/get, resources/directory/read, skill:// resources,
	// the discovery tools and the use-skill prompt.
	if err := skills.Attach(server, catalog, &skills.AttachOptions{Name: "embed", Tools: true, Prompts: true, Instructions: true}); err != nil {
		return err
	}
	return server.Run(ctx, &mcp.StdioTransport{})
}
