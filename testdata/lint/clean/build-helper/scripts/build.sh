#!/bin/sh
set -eu
umask 022
BUILD_DIR=${BUILD_DIR:-./build}
rm -rf ./build
rm -rf "${BUILD_DIR:?}/out"
mkdir -p "$BUILD_DIR/out"
cc -o "$BUILD_DIR/out/tool" src/tool.c
chmod 755 "$BUILD_DIR/out/tool"
chmod u+x scripts/*.sh
chmod -R go-w "$BUILD_DIR"
env -i PATH=/usr/bin:/bin make -C "$BUILD_DIR"
curl -fsSL https://example.invalid/tool-data.tar.gz | tar xz -C "$BUILD_DIR"
curl -fsSL https://example.invalid/version.json | jq -r .version
nc -z example.invalid 443 && echo reachable
env | grep '^PATH='
