# shellcheck shell=bash
# Servers this machine's Debian (bookworm) does not package: a tree of a
# later suite unpacked by mmdebstrap into the cache once, each instance a
# hard-linked copy of it (DIR/root) in which the server runs under chroot
# on a loopback port. Sourced by lib.sh, never run. Owns the list of those
# servers, building a tree, copying it for an instance and finding the
# processes that run in one; what a server does in its tree is its
# script's (pg.sh, mariadb.sh, mysql.sh).
#
# Inside an instance's tree everything the server writes is under /p2o
# (DIR/root/p2o on the host): data, socket, logs. Nothing of the cached
# tree is written to: the servers run as their service user and write
# only there.

# kind|version|suite|packages|the package whose version is the server's
# (trixie: PostgreSQL 17 with pgvector, MariaDB 11.8; sid: PostgreSQL 18
# with pgvector, MySQL 9.7; MySQL's packages conflict with MariaDB's, so
# every server has a tree of its own)
P2O_TREES='pg|17|trixie|postgresql-17,postgresql-17-pgvector|postgresql-17
pg|18|sid|postgresql-18,postgresql-18-pgvector|postgresql-18
mariadb|11.8|trixie|mariadb-server,mariadb-client|mariadb-server
mysql|9.7|sid|mysql-server-core,mysql-client|mysql-server-core'
P2O_DEBIAN_MIRROR=${P2O_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# p2o_tree_row KIND VERSION: set TREE_SUITE, TREE_PKGS, TREE_MAIN and
# TREE_DIR (in the cache); fail when no tree serves that version
p2o_tree_row() {
    local k v s p m
    while IFS='|' read -r k v s p m; do
        if [ "$k" = "$1" ] && [ "$v" = "$2" ]; then
            TREE_SUITE=$s TREE_PKGS=$p TREE_MAIN=$m
            TREE_DIR=$P2O_CACHE/$([ "$k" = pg ] && echo postgresql || echo "$k")-$v
            return 0
        fi
    done <<<"$P2O_TREES"
    return 1
}

# p2o_tree_versions KIND: the versions the trees serve, space-separated
p2o_tree_versions() {
    awk -F'|' -v k="$1" '$1 == k { printf "%s%s", n++ ? " " : "", $2 }' <<<"$P2O_TREES"
}

p2o_tree_ready() { # KIND VERSION
    p2o_tree_row "$1" "$2" && [ -f "$TREE_DIR/.p2o-ready" ] && p2o_tree_has_pkgs "$TREE_DIR"
}

# p2o_tree_has_pkgs DIR: every package of the row (TREE_PKGS) is in the
# tree at DIR - a tree cached before a package joined its row is built
# again, not used without it
p2o_tree_has_pkgs() {
    local p
    for p in ${TREE_PKGS//,/ }; do
        [ -f "$1/var/lib/dpkg/info/$p.list" ] || compgen -G "$1/var/lib/dpkg/info/$p:*.list" >/dev/null || return 1
    done
}

# p2o_tree_build KIND VERSION: the tree in the cache, built once (under the
# cache's install lock: two lanes never build one tree twice)
p2o_tree_build() {
    local kind=$1 v=$2 work got hooks=()
    p2o_tree_row "$kind" "$v" || p2o_die "no $kind $v to build (trees: $(p2o_tree_versions "$kind"))"
    p2o_tree_ready "$kind" "$v" && return 0
    p2o_apt_ensure mmdebstrap ca-certificates
    mkdir -p "$P2O_CACHE"
    (
        exec 9>"$P2O_CACHE/.install.lock"
        flock 9
        p2o_tree_ready "$kind" "$v" && exit 0
        work=$TREE_DIR.part
        rm -rf "$work"
        case $kind in
            pg) # the packages' own cluster is never used: none is made
                hooks+=(--essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" && echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.d/p2o.conf"') ;;
            mysql) # mysql-server-core makes no user: the server runs as one
                hooks+=(--customize-hook='chroot "$1" sh -c "getent passwd mysql >/dev/null || { groupadd --system mysql && useradd --system -g mysql -d /nonexistent -s /usr/sbin/nologin mysql; }"') ;;
        esac
        p2o_vlog "mmdebstrap $TREE_SUITE $TREE_PKGS into $TREE_DIR"
        # sid's Release file may be past its validity date; the docs, man
        # pages and translations are left out
        mmdebstrap --quiet --variant=minbase --format=directory \
            --aptopt='Acquire::Check-Valid-Until "false"' \
            --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
            --dpkgopt='path-exclude=/usr/share/locale/*' \
            --include="$TREE_PKGS" "${hooks[@]}" \
            "$TREE_SUITE" "$work" "$P2O_DEBIAN_MIRROR" >"$P2O_CACHE/.tree-build.log" 2>&1 </dev/null \
            || { p2o_log_tail "$P2O_CACHE/.tree-build.log"; rm -rf "$work"; p2o_die "mmdebstrap could not build $kind $v from $TREE_SUITE"; }
        got=$(chroot "$work" dpkg-query -W -f='${Version}' "$TREE_MAIN" 2>/dev/null)
        # a suite that moved on to another version is said, not used: the
        # tree is named for the version it holds
        case $got in
            "$v".* | [0-9]:"$v".* | "$v"-* | [0-9]:"$v"-* | "$v"+*) ;;
            *) rm -rf "$work"; p2o_die "$TREE_SUITE's $TREE_MAIN is now '$got', not $kind $v: add it to P2O_TREES (tests/servers/tree-lib.sh)" ;;
        esac
        echo "$TREE_MAIN $got" >"$work/.p2o-ready"
        rm -rf "$TREE_DIR"
        mv "$work" "$TREE_DIR"
    ) || exit 1
}

# p2o_tree_copy KIND VERSION DIR: DIR/root, a copy of the tree whose
# files are hard links (a second of work and no space), made once per
# instance
p2o_tree_copy() {
    local dir=$3
    [ -d "$dir/root/p2o" ] && return 0
    p2o_tree_ready "$1" "$2" || "$P2O_SERVERS_HOME/install.sh" "$1=$2"
    p2o_tree_row "$1" "$2"
    rm -rf "$dir/root.part"
    cp -al "$TREE_DIR" "$dir/root.part" 2>/dev/null || cp -a "$TREE_DIR" "$dir/root.part" \
        || p2o_die "could not copy $TREE_DIR to $dir"
    mkdir "$dir/root.part/p2o"
    # a minbase tree may have no /etc/hosts (mariadb-install-db looks
    # localhost up): the instance's own file, never the cache's
    if [ ! -s "$dir/root.part/etc/hosts" ]; then
        rm -f "$dir/root.part/etc/hosts"
        printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$dir/root.part/etc/hosts"
    fi
    mv "$dir/root.part" "$dir/root"
}

# p2o_tree_user ROOT NAME: uid:gid of a user of the tree (chroot's
# --userspec takes numbers: names would be looked up on the host)
p2o_tree_user() {
    awk -F: -v u="$2" '$1 == u { print $3 ":" $4; f = 1 } END { exit !f }' "$1/etc/passwd"
}

# p2o_root_of PID: the root directory process PID runs in
p2o_root_of() {
    readlink "/proc/$1/root" 2>/dev/null
}
