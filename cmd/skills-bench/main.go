// Command skills-bench measures Agent Skills servers over MCP: it writes
// deterministic synthetic libraries (gen), benchmarks any server command
// over stdio (run), load-tests a server over Streamable HTTP (http), and
// measures 1,000 catalogs behind one handler in one process (catalogs) and
// the real hub serve with 1,000 projects (hub).
// Run "skills-bench help" for usage; see BENCHMARKS.md for results.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/skills-mcp/skills-mcp/internal/bench"
	"github.com/skills-mcp/skills-mcp/internal/bench/hubbench"
	"github.com/skills-mcp/skills-mcp/internal/bench/multiserve"
)

func main() {
	// Interrupting cancels the run in progress, which kills the server under
	// test, rather than leaving it behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var code int
	if len(os.Args) > 1 && os.Args[1] == "hub" {
		code = hubbench.Main(ctx, os.Args[2:], os.Stdout, os.Stderr)
	} else if len(os.Args) > 1 && os.Args[1] == bench.CatalogsCommand {
		// The server "skills-bench catalogs" starts: not a command for
		// users, so not in the help.
		code = multiserve.Main(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	} else {
		code = bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	stop()
	os.Exit(code)
}
