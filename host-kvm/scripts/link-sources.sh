#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# link-sources.sh DIR [FILE...]
#
# Makes DIR hold exactly one symlink per FILE (and nothing else that is a
# symlink), so kbuild compiles the repository's files in place: an edit to
# one of them rebuilds one object, and files added or removed in the
# repository appear or disappear on the next build.  No subshells: this runs
# on every build.
set -eu

dir=$1
shift
mkdir -p "$dir"

for link in "$dir"/*; do
	[ -L "$link" ] || continue
	keep=
	for f in "$@"; do
		[ "${f##*/}" = "${link##*/}" ] && keep=1 && break
	done
	[ -n "$keep" ] || rm -f "$link"
done

for f in "$@"; do
	[ "$dir/${f##*/}" -ef "$f" ] || ln -sfn "$f" "$dir/${f##*/}"
done
