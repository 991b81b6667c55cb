#!/usr/bin/env bash
# Renders a flame graph in headless Chromium into docs/flamegraph.png, the
# screenshot in README.md and docs/reports.md. Not part of `make test`
# (Chromium is not a test dependency: apt-get install chromium).
#   scripts/screenshot.sh [SVG [SEARCH]]
# Without SVG it profiles the bundled demo workload first (as root). SEARCH
# pre-fills the search box (flamegraph.svg?s=REGEXP highlights the matches).
set -euo pipefail
cd "$(dirname "$0")/.."
svg=${1:-}
search=${2:-}
if ! command -v chromium >/dev/null; then
	echo "screenshot.sh: chromium is missing: apt-get install chromium" >&2
	exit 1
fi
if [ -z "$svg" ]; then
	make -s all build/workloads/demo
	out=$(mktemp -d)
	build/stacktreed -F 999 -o "$out" --format svg -- build/workloads/demo
	svg=$out/flamegraph.svg
fi
# the window as tall as the graph
height=$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$svg" | head -n 1)
url="file://$(realpath "$svg")${search:+?s=$search}"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
mkdir -p docs
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$profile" --screenshot=docs/flamegraph.png \
	--window-size=1200,"${height:-700}" "$url" 2>/dev/null
echo "screenshot.sh: docs/flamegraph.png from $svg"
