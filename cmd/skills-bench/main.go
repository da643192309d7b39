// Command skills-bench measures Agent Skills servers over MCP: it writes
// deterministic synthetic libraries (gen), benchmarks any server command
// over stdio (run), and load-tests a server over Streamable HTTP (http).
// Run "skills-bench help" for usage; see BENCHMARKS.md for results.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/skills-mcp/skills-mcp/internal/bench"
)

func main() {
	// Interrupting cancels the run in progress, which kills the server under
	// test, rather than leaving it behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
