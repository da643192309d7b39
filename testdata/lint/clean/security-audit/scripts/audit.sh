#!/bin/sh
# Lists world-writable files and folders under the folder given as $1.
set -eu
dir=${1:?usage: audit.sh DIR}
find "$dir" -xdev -perm -0002 -exec stat -c '%a %U %n' {} +
