#!/usr/bin/env bash
# Builds the release binaries, static (CGO off), stamped with the version,
# the commit and its time, into DIST (default dist/), with SHA256SUMS:
# skills-mcp and skills-hub for linux and darwin on amd64 and arm64. On
# darwin the hub's bubblewrap and gVisor sandboxes report themselves
# unavailable (they need Linux); its jobs run on the Docker engine, or are
# refused with the reason.
#
#   scripts/release.sh v0.5.0          a release: the version given, a clean work tree
#   scripts/release.sh --snapshot      a snapshot: version "snapshot" (what CI checks)
#
# TARGETS="linux/amd64 darwin/arm64" builds fewer. Nothing is uploaded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=${1:-}
if [[ $version == --snapshot ]]; then
  version=snapshot
elif [[ ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "usage: $0 vMAJOR.MINOR.PATCH | --snapshot" >&2
  exit 2
elif [[ -n $(git status --porcelain) ]]; then
  echo "release.sh: the work tree has changes; commit them, or build a --snapshot" >&2
  exit 1
fi
DIST=${DIST:-dist}
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
when=$(git log -1 --format=%cI 2>/dev/null || echo unknown)
pkg=github.com/skills-mcp/skills-mcp/internal/buildinfo
ldflags="-s -w -X $pkg.version=$version -X $pkg.revision=$revision -X $pkg.time=$when"

rm -rf "$DIST"
mkdir -p "$DIST"
for target in $TARGETS; do
  goos=${target%/*}
  goarch=${target#*/}
  for cmd in skills-mcp skills-hub; do
    out="$DIST/${cmd}_${version}_${goos}_${goarch}"
    echo "building $out"
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch GOFLAGS=-buildvcs=false \
      go build -trimpath -ldflags "$ldflags" -o "$out" "./cmd/$cmd"
  done
done
(cd "$DIST" && sha256sum -- * >SHA256SUMS)
# The binary for this machine says what it is.
host="$DIST/skills-mcp_${version}_$(go env GOOS)_$(go env GOARCH)"
if [[ -x $host ]]; then
  "$host" --version
  "$host" --version | grep -q "$version" || {
    echo "release.sh: $host does not report version $version" >&2
    exit 1
  }
fi
echo "release.sh: $(wc -l <"$DIST/SHA256SUMS") binaries in $DIST, checksums in $DIST/SHA256SUMS"
