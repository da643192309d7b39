#!/usr/bin/env bash
# Extracts the SKILL.md files of the search evaluation's libraries
# (testdata/searcheval/libraries.txt) at their pinned commits into
# testdata/searcheval/library/<short name>/, which is not committed.
#
#   scripts/searcheval-libraries.sh [MIRRORS]
#
# MIRRORS, if given, is a pattern naming a local git directory (bare or
# not) per repository, with {owner} and {name} in it, as the catalog
# builder takes it: 'DIR/{owner}+{name}/repo'. Without it, or when the
# directory is missing, the repository is cloned (blobs on demand) into
# a temporary folder. Only files named SKILL.md are written; the same
# commits give the same bytes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
list=$root/testdata/searcheval/libraries.txt
out=$root/testdata/searcheval/library
mirrors=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"
grep -v '^#' "$list" | while read -r short url commit _; do
	[ -n "$short" ] || continue
	slug=${url#https://github.com/}
	owner=${slug%%/*} name=${slug#*/}
	git_dir=
	if [ -n "$mirrors" ]; then
		git_dir=${mirrors//\{owner\}/$owner}
		git_dir=${git_dir//\{name\}/$name}
		[ -d "$git_dir" ] || git_dir=
	fi
	if [ -z "$git_dir" ]; then
		git clone -q --bare --filter=blob:none "$url" "$tmp/$short.git"
		git_dir=$tmp/$short.git
	fi
	git --git-dir="$git_dir" cat-file -e "$commit^{commit}" || {
		echo "searcheval-libraries: $slug has no commit $commit; fetch it or point MIRRORS at a newer copy" >&2
		exit 1
	}
	git --git-dir="$git_dir" ls-tree -r -z --name-only "$commit" | tr '\0' '\n' | grep -E '(^|/)SKILL\.md$' |
		while IFS= read -r path; do
			mkdir -p "$out/$short/$(dirname "$path")"
			git --git-dir="$git_dir" show "$commit:$path" >"$out/$short/$path"
		done
	echo "$short: $(find "$out/$short" -name SKILL.md | wc -l) skills at ${commit:0:12}"
done
