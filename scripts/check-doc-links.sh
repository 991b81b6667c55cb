#!/usr/bin/env bash
# check-doc-links.sh - every relative link of the Markdown documentation
# (README.md, docs/, kernel-notes/) names a file that exists and, with a
# #fragment, a heading of that file (GitHub's anchors). Links to other sites
# are not checked; links inside code are not links.
# Usage: scripts/check-doc-links.sh [ROOT]; exit status 1 on a broken link.
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2

anchors() {	# FILE: the anchors of its headings, one a line
	awk '/^ *```/ { f = !f; next }
	     !f && /^#+ / { h = $0; sub(/^#+ /, "", h); h = tolower(h)
		gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
		n = seen[h]++; print (n ? h "-" n : h) }' "$1"
}
links() {	# FILE: the targets of its links outside code, one a line
	awk '/^ *```/ { f = !f; next }
	     !f { l = $0; gsub(/`[^`]*`/, "", l)
		while (match(l, /\]\([^) ]+\)/)) {
			print substr(l, RSTART + 2, RLENGTH - 3)
			l = substr(l, RSTART + RLENGTH) } }' "$1"
}

bad=0 n=0
for f in README.md docs/*.md kernel-notes/*.md; do
	while read -r t; do
		case $t in *://* | mailto:*) continue ;; esac
		n=$((n + 1))
		path=${t%%#*} frag=
		[ "$path" != "$t" ] && frag=${t#*#}
		target=$f
		[ -n "$path" ] && target=$(dirname "$f")/$path
		if [ ! -e "$target" ]; then
			echo "$f: link to a missing file: $t"; bad=1
		elif [ -n "$frag" ] && ! anchors "$target" | grep -qxF -- "$frag"; then
			echo "$f: link to a missing heading: $t"; bad=1
		fi
	done < <(links "$f")
done
[ $bad = 0 ] && echo "check-doc-links: all $n relative links resolve"
exit $bad
