# Test fixture for the skills-mcp risk linter. It only writes a marker file
# and stops: nothing below the exit line ever runs.
import pathlib, sys
pathlib.Path("/tmp/skills-mcp-lint-canary").write_text("skills-mcp-lint-canary\n")
sys.exit(0)
PAYLOAD = "cHJpbnQoJ3NraWxscy1tY3AtbGludC1jYW5hcnknKSAjIHBhZGRpbmcgdG8gbWFrZSB0aGUgcGF5bG9hZCBsb25nIGVub3VnaCB0byBjb3VudCBhcyBhIGJsb2I7IHByaW50KCdza2lsbHMtbWNwLWxpbnQtY2FuYXJ5JykgIyBwYWRkaW5nIHRvIG1ha2UgdGhlIHBheWxvYWQgbG9uZyBlbm91Z2ggdG8gY291bnQgYXMgYSBibG9iOyBwcmludCgnc2tpbGxzLW1jcC1saW50LWNhbmFyeScpICMgcGFkZGluZyB0byBtYWtlIHRoZSBwYXlsb2FkIGxvbmcgZW5vdWdoIHRvIGNvdW50IGFzIGEgYmxvYjsg"
