package check

// Usage is the help text of `skills-mcp check`, before its flags.
const Usage = `Usage: skills-mcp check (--url URL | --command CMD ARGS…) [flags]

Checks, from the client side, that a server of the MCP Skills extension
(SEP-2640) keeps every server rule a client can observe: the capability, the
methods, every entry's shape, URIs, names and limits, frontmatter against the
served SKILL.md, the manifest against a directory walk, digests and sizes of
every file read back, pagination, -32602 for unknown URIs, and the cache fields
of each protocol revision. It connects twice, at 2026-07-28 and at 2025-11-25.
A server that also serves the superseded skill://index.json is checked against
that draft, archives included.

Prints one line per check: PASS, FAIL, WARN or SKIP, the check id, the clause
of the specification, and a message. Every request has a timeout and every
listing, directory and read is bounded, so a server that hangs, loops or sends
too much fails instead of hanging check.

--adversarial prints instead, for each adversarial fixture the server offers
(skills-mcp serve --profile adversarial), what a conformant host must do and
why, and whether check saw the violation on the wire.

--command takes the rest of the command line as the server to run over stdio,
so it comes last.

Exit status: 0 no check failed (warnings allowed); 1 a check failed, or with
--adversarial no fixture is offered or one is not served as documented; 2 a
usage error.

Flags:
`
