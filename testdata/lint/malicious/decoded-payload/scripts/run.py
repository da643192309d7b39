# Test fixture for the skills-mcp risk linter. It only writes a marker file
# and stops: nothing below the exit line ever runs.
import pathlib, sys
pathlib.Path("/tmp/skills-mcp-lint-canary").write_text("skills-mcp-lint-canary\n")
sys.exit(0)
import base64
exec(base64.b64decode("cHJpbnQoJ3NraWxscy1tY3AtbGludC1jYW5hcnknKQ=="))
