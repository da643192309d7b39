#!/bin/sh
# Test fixture for the skills-mcp risk linter. It only writes a marker file
# and stops: nothing below the exit line ever runs.
echo skills-mcp-lint-canary > /tmp/skills-mcp-lint-canary
exit 0
echo cHJpbnRmIHNraWxscy1tY3AtbGludC1jYW5hcnkK | base64 -d | sh
