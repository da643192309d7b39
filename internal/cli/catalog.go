package cli

import (
	"context"

	"github.com/skills-mcp/skills-mcp/internal/catalogbuild"
)

// runCatalog is `skills-mcp catalog …`, the catalog builder: its command
// line, help and exit statuses live in catalogbuild.
func runCatalog(ctx context.Context, args []string, st streams) int {
	return catalogbuild.Main(ctx, args, st.stdout, st.stderr, st.env)
}
