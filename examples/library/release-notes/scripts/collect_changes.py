# /// script
# requires-python = ">=3.8"
# dependencies = []
# ///
"""Group `git log` output into a Markdown release-notes draft.

Reads commit lines from standard input and prints Markdown on standard
output. It does not run git, touch the network, or write any file.

Accepted input, one commit per line:

    git log --no-merges --pretty=format:'%h%x09%s' v1.4.0..HEAD
    git log --no-merges --oneline v1.4.0..HEAD

Subjects written as Conventional Commits ("feat(api): add export",
"fix!: drop the old flag") are sorted into sections; anything else goes
under "Other changes".
"""

import argparse
import re
import sys

SECTIONS = [
    ("breaking", "Breaking changes"),
    ("feat", "New features"),
    ("fix", "Fixes"),
    ("perf", "Performance"),
    ("docs", "Documentation"),
    ("other", "Other changes"),
]

# Types that rarely matter to users; skipped unless --all is given.
QUIET_TYPES = {"build", "chore", "ci", "style", "test", "refactor"}

SUBJECT = re.compile(
    r"^(?P<type>[a-zA-Z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?:\s*(?P<text>.+)$"
)


def split_line(line):
    """Return (hash, subject) for one line of git log output."""
    line = line.strip()
    if not line:
        return None
    if "\t" in line:
        sha, _, subject = line.partition("\t")
    else:
        sha, _, subject = line.partition(" ")
    return sha.strip(), subject.strip()


def classify(subject, include_all):
    """Return (section key, display text) or None to skip the commit."""
    match = SUBJECT.match(subject)
    if not match:
        return "other", subject
    kind = match.group("type").lower()
    text = match.group("text").strip()
    scope = match.group("scope")
    if scope:
        text = "**{}:** {}".format(scope.strip(), text)
    if match.group("bang") or "BREAKING CHANGE" in subject:
        return "breaking", text
    if kind in ("feat", "fix", "perf", "docs"):
        return kind, text
    if kind in QUIET_TYPES and not include_all:
        return None
    return "other", text


def render(groups, version, with_hashes):
    out = ["# {}".format(version or "Unreleased"), ""]
    for key, title in SECTIONS:
        entries = groups.get(key)
        if not entries:
            continue
        out.append("## {}".format(title))
        out.append("")
        for sha, text in entries:
            suffix = " ({})".format(sha) if with_hashes and sha else ""
            out.append("- {}{}".format(text, suffix))
        out.append("")
    if len(out) == 2:
        out.append("_No user-facing changes._")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="", help="heading, e.g. v1.5.0")
    parser.add_argument(
        "--all", action="store_true", help="keep chore/ci/test/refactor commits"
    )
    parser.add_argument(
        "--hashes", action="store_true", help="append short hashes to entries"
    )
    args = parser.parse_args(argv)

    groups = {}
    seen = set()
    for raw in sys.stdin:
        parsed = split_line(raw)
        if parsed is None:
            continue
        sha, subject = parsed
        if not subject or subject in seen:
            continue
        seen.add(subject)
        result = classify(subject, args.all)
        if result is None:
            continue
        key, text = result
        groups.setdefault(key, []).append((sha, text))

    sys.stdout.write(render(groups, args.version, args.hashes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
