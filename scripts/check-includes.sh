#!/usr/bin/env bash
# check-includes.sh - the stages read in order: fails on an include that runs
# backwards (README, "Contributing").
#
# The pipeline is root -> collect -> symbolize -> model -> output:
#   user/*.{c,h}      the composition root (stacktreed, stacktree, the session
#                     driver): may include every stage;
#   user/collect/     1  raw trees from the kernel, processes, unwinding;
#   user/symbolize/   2  names the raw frames;
#   user/model/       3  the profile: built from named trees, loaded, summed;
#   user/output/      4  writes reports.
# A file of a stage includes headers of its own or an earlier stage only.
# The libraries common/ (containers), binsym/ (ELF, DWARF, symbols) and
# bpf/ (types shared with the kernel) are used by every stage and include no
# stage (binsym/ may use common/).
# Usage: scripts/check-includes.sh [ROOT]; exit status 1 on any violation.
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2

rank() {	# rank of a path's stage; 0: a library; "root": the root
	case $1 in
	user/collect/*) echo 1 ;;	# and its wings, at any depth
	user/symbolize/*) echo 2 ;;
	user/model/*) echo 3 ;;
	user/output/*) echo 4 ;;
	user/*/*) echo unknown ;;
	user/*) echo root ;;
	*) echo 0 ;;
	esac
}

bad=0
while IFS= read -r f; do
	from=$(rank "$f")
	if [ "$from" = unknown ]; then
		echo "check-includes: $f: a folder of user/ that is no stage: add it to $0" >&2
		bad=1
		continue
	fi
	[ "$from" = root ] && continue
	while IFS=: read -r line inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		case $inc in user/*) ;; *) continue ;; esac
		to=$(rank "$inc")
		if [ "$to" = root ] || [ "$to" = unknown ] || [ "$to" -gt "$from" ]; then
			echo "check-includes: $f:$line includes $inc, a later stage" \
			     "(the order is collect, symbolize, model, output; libraries include none)" >&2
			bad=1
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done < <(find user common binsym bpf -name '*.[ch]' | sort)
[ "$bad" -eq 0 ] && echo "check-includes: every include runs forwards"
exit "$bad"
