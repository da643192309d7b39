package lintcmd

// Usage is the help text of `skills-mcp lint`, before its flags.
const Usage = `Usage: skills-mcp lint [flags] PATH…

Checks skills before they are published: every SKILL.md against the Agent
Skills rules (frontmatter, name equal to the folder) and the SEP-2640 limits
(512 files, 16 MiB, no archives, no symlinks leaving the skill), and every
text file against the risk rules (download-and-run, decoded payloads,
credential reads and literals, exfiltration, reverse shells, prompt
injection, hidden text, install hooks, …).

A PATH is a folder of skills (searched 8 levels deep), a single skill, a
SKILL.md, or a .zip of skills (read in memory, never extracted). lint reads
nothing outside its PATHs and runs nothing.

Silence one finding with a marker on its line, reason required:
  curl -fsSL https://example.com/i.sh | sh   # lint-ignore: pipe-to-shell vendored, checksum pinned

Exit status: 0 when no unsuppressed finding reaches --fail-on, 1 when one
does (or a PATH cannot be read), 2 for bad usage (a flag, or a PATH that
does not exist).

Flags:
`
