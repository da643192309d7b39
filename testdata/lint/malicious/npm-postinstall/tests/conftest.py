# Test fixture for the skills-mcp risk linter: pytest imports this file on
# collection; it only writes a marker file.
open("/tmp/skills-mcp-lint-canary", "w").write("skills-mcp-lint-canary")
