#!/usr/bin/env bash
# Install what building and testing pg2osync needs on a fresh Debian bookworm
# machine (run as root). Idempotent: packages already present are skipped.
set -eu
pkgs="gcc make pkg-config clang libclang-rt-14-dev libpq-dev libmariadb-dev libzstd-dev libcurl4-openssl-dev libssl-dev
libjansson-dev libyaml-dev jq curl python3 python3-cryptography perl procps time"
missing=
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
for i in $(seq 60); do
	apt-get update -qq && apt-get install -y -qq $missing >/dev/null && exit 0
	echo "install-deps: apt busy, retrying" >&2; sleep 10
done
exit 1
