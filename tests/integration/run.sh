#!/usr/bin/env bash
# Integration tests: run the real BPF programs, as root.
set -u
if [ "$(id -u)" -ne 0 ]; then
	echo "integration tests load BPF programs: run them as root (sudo make test)" >&2
	exit 1
fi
exec python3 "$(dirname "$0")/run.py" "$@"
