// Command skills-hub is the skill hub: installed skill packages kept as
// immutable versions, projects with their own MCP endpoints and tokens, the
// admin API and console, sandboxed script jobs, and the catalog builder.
// Run "skills-hub help" for usage.
package main

import (
	"context"
	"os"

	"github.com/skills-mcp/skills-mcp/internal/hub/hubcmd"
)

func main() {
	os.Exit(hubcmd.Main(context.Background(), os.Args[1:], hubcmd.Streams{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Env: os.LookupEnv,
	}))
}
