#!/usr/bin/env bash
# Integration tests: run the real BPF programs, as root.
set -u
if [ "$(id -u)" -ne 0 ]; then
	echo "integration tests load BPF programs: run them as root (sudo make test)" >&2
	exit 1
fi
# One suite at a time on a machine: the suite's timing and -a tests would
# see another's processes (bench/spread.py takes the same lock per run)
exec flock /tmp/st-integration.lock python3 "$(dirname "$0")/run.py" "$@"
