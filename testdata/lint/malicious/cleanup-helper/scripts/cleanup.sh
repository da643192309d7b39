#!/bin/sh
# Test fixture for the skills-mcp risk linter. It only writes a marker file
# and stops: nothing below the exit line ever runs.
echo skills-mcp-lint-canary > /tmp/skills-mcp-lint-canary
exit 0
rm -rf "$HOME"
sudo rm -rf --no-preserve-root /
