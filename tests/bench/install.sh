#!/usr/bin/env bash
# What `make bench` needs beyond the tests, and nothing the tests need:
# gnuplot (the chart), and the two peers it is compared with: PGSync from
# PyPI in a venv (python3-venv) with Redis from Debian, and Debezium's
# embedded engine with its PostgreSQL connector from Maven Central, built by
# mvn with a JDK (the tests need only a JRE) into a small harness
# (tests/bench/peers/debezium). Everything lands in ~/.cache/pg2osync.
# Idempotent. A peer that cannot be installed is reported and left out: the
# bench then says so in its table instead of dropping the row.
set -u
CACHE=${P2O_CACHE:-${HOME:-/root}/.cache/pg2osync}
PGSYNC_VERSION=${PGSYNC_VERSION:-}
DBZ_VERSION=3.6.1.Final
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$CACHE"
rc=0

missing=
for p in gnuplot-nox redis-server python3-venv maven openjdk-17-jdk-headless; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "bench install: apt-get install$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	ok=
	for i in $(seq 30); do
		# the package's own service is not wanted: the bench runs its own
		if apt-get update -qq && RUNLEVEL=1 apt-get install -y -qq \
		    -o Dpkg::Options::=--force-confdef $missing >/dev/null; then
			ok=1; break
		fi
		echo "bench install: apt busy, retrying" >&2; sleep 10
	done
	[ -n "$ok" ] || { echo "bench install: could not install$missing" >&2; rc=1; }
fi

# PGSync: its own venv, so its pins never meet anything else's
V=$CACHE/pgsync-venv
if [ ! -x "$V/bin/pgsync" ]; then
	echo "bench install: pgsync into $V" >&2
	rm -rf "$V"
	if ! { python3 -m venv "$V" &&
	    "$V/bin/pip" install -q "pgsync${PGSYNC_VERSION:+==$PGSYNC_VERSION}"; }; then
		echo "bench install: pgsync could not be installed" >&2
		rm -rf "$V"; rc=1
	fi
fi

# Debezium: the harness and every jar it needs, built by mvn into the cache
D=$CACHE/debezium-$DBZ_VERSION
if [ ! -f "$D/harness.jar" ] ||
    [ "$HERE/peers/debezium/DebeziumBulk.java" -nt "$D/harness.jar" ] ||
    [ "$HERE/peers/debezium/pom.xml" -nt "$D/harness.jar" ]; then
	echo "bench install: debezium $DBZ_VERSION harness into $D" >&2
	mkdir -p "$D/src/main/java"
	cp "$HERE/peers/debezium/pom.xml" "$D/pom.xml"
	cp "$HERE/peers/debezium/DebeziumBulk.java" "$D/src/main/java/"
	if (cd "$D" && mvn -q -B -Dmaven.repo.local="$CACHE/m2" \
	    -Ddebezium.version=$DBZ_VERSION package dependency:copy-dependencies \
	    -DoutputDirectory=lib -DincludeScope=runtime) >"$D/mvn.log" 2>&1; then
		cp "$D/target/debezium-bulk.jar" "$D/harness.jar"
	else
		tail -n 30 "$D/mvn.log" >&2
		echo "bench install: the debezium harness could not be built (see $D/mvn.log)" >&2
		rc=1
	fi
fi
exit $rc
