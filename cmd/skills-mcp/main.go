// Command skills-mcp serves Agent Skills to AI agents over the Model Context
// Protocol. Run "skills-mcp help" for usage.
package main

import (
	"context"
	"os"

	"github.com/skills-mcp/skills-mcp/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
