#!/usr/bin/env bash
# What `make soak` needs beyond the tests: the real workload clients,
# pgbench (Debian's postgresql-client) and sysbench, and gnuplot-nox for the
# plot. Idempotent; nothing else is installed.
set -u
missing=
for p in postgresql-client sysbench gnuplot-nox; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "soak install: apt-get install$missing" >&2
export DEBIAN_FRONTEND=noninteractive
for i in $(seq 30); do
	apt-get update -qq && apt-get install -y -qq $missing >/dev/null && exit 0
	echo "soak install: apt busy, retrying" >&2; sleep 10
done
echo "soak install: could not install$missing" >&2
exit 1
