#!/usr/bin/env bash
# The Debian package (make deb, deploy/deb/build.sh) on a fresh bookworm:
# lintian reports no error and no warning (deploy/deb/lintian-overrides
# justifies each tag it overrides); `apt-get install ./pg2osync_*.deb` in
# a chroot of a bare bookworm (mmdebstrap minbase, cached in
# ~/.cache/pg2osync/deb-test-root, with the packages apt fetches) pulls
# in its dependencies, makes the
# pg2osync user and /etc/pg2osync, puts the unit and the example
# configuration in place; `pg2osync --version` and `pg2osync validate`
# run as that user against the test servers, `pg2osync run` finds its
# stages in /usr/lib/pg2osync and streams a table (compared by content);
# `apt-get purge` leaves no file of it behind.
# Fails when: make deb or lintian fails, the install or the removal
# fails or leaves files, a dependency is missing, validate fails, or the
# installed pipeline does not stream.
. "$(dirname "$0")/../lib.sh"

S=p2o_deb
t0=$SECONDS
make -s -C "$TOP" deb > "$T/make.log" 2>&1
ok $? "make deb ($((SECONDS - t0)) s)" || sed 's/^/#   /' "$T/make.log" | tail -n 20
version=$(sed -n 's/^#define P2O_VERSION[[:space:]]*"\(.*\)"/\1/p' "$TOP/lib/p2o.h")
deb=$TOP/build/pg2osync_${version}_$(dpkg --print-architecture).deb
[ -s "$deb" ] || { done_testing; exit 1; }
lintian --fail-on error,warning "$deb" > "$T/lintian" 2>&1
st=$?
ok $st "lintian: no error, no warning ($(grep -c '^[EWI]:' "$T/lintian") tags left)"
grep '^[EWI]:' "$T/lintian" | sed 's/^/#   /'

# a bare bookworm, once
P2O_CACHE=${P2O_CACHE:-$HOME/.cache/pg2osync}
base=$P2O_CACHE/deb-test-root/bookworm-minbase.tar
if [ ! -s "$base" ]; then
	mkdir -p "${base%/*}"
	( flock 9; [ -s "$base" ] || { mmdebstrap --quiet --format=tar --variant=minbase bookworm "$base.part" \
		"${P2O_DEBIAN_MIRROR:-http://deb.debian.org/debian}" && mv "$base.part" "$base"; } ) \
		9>"${base%/*}/.lock" > "$T/mmdebstrap.log" 2>&1
fi
R=$T/root
mkdir "$R" && tar -C "$R" -xf "$base" 2> "$T/tar.err"
ok $? "a bare bookworm root (${base##*/})" || { sed 's/^/#   /' "$T/mmdebstrap.log" "$T/tar.err" | tail; done_testing; exit 1; }
mount -t proc proc "$R/proc"
# the packages apt fetches for it, kept between runs
mkdir -p "$P2O_CACHE/deb-test-root/archives/partial"
mount --bind "$P2O_CACHE/deb-test-root/archives" "$R/var/cache/apt/archives"
# every process left in the chroot (a pipeline killed by a failed test)
in_root_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] && echo "${p#/proc/}"
	done
}
_deb_cleanup() {
	local p
	for p in $(in_root_pids); do kill -KILL "$p" 2>/dev/null; done
	umount -l "$R/proc" 2>/dev/null
	umount -l "$R/var/cache/apt/archives" 2>/dev/null
	_cleanup
}
trap _deb_cleanup EXIT
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp "$deb" "$R/tmp/"
in_root() { chroot "$R" env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
in_root dpkg -s pg2osync > /dev/null 2>&1
ok $([ $? != 0 ]; echo $?) "the root has no pg2osync before"
t1=$SECONDS
{ in_root apt-get update -qq && in_root apt-get install -y -qq "/tmp/${deb##*/}"; } > "$T/install.log" 2>&1
ok $? "apt-get install ./${deb##*/} ($((SECONDS - t1)) s)" || sed 's/^/#   /' "$T/install.log" | tail -n 20
ok $(in_root getent passwd pg2osync | grep -q ':/var/lib/pg2osync:/usr/sbin/nologin$'; echo $?) \
	"a system user pg2osync: $(in_root getent passwd pg2osync)"
ok $([ "$(in_root stat -c '%a %U %G' /etc/pg2osync)" = "750 root pg2osync" ]; echo $?) \
	"/etc/pg2osync: $(in_root stat -c '%a %U %G' /etc/pg2osync)"
ok $(grep -q '^ExecStart=/usr/bin/pg2osync run -c /etc/pg2osync/pg2osync.yaml$' "$R/lib/systemd/system/pg2osync.service"; echo $?) \
	"the unit runs /usr/bin/pg2osync"
ok $([ -s "$R/usr/share/doc/pg2osync/examples/pg2osync.yaml" ]; echo $?) "the example configuration is under /usr/share/doc"
ok $([ -s "$R/usr/share/man/man5/pg2osync.yaml.5.gz" ] && [ -s "$R/usr/share/man/man1/pg2osync-run.1.gz" ]; echo $?) "the man pages are installed"
v=$(in_root pg2osync --version 2>&1)
ok $([ "$v" = "pg2osync $version" ]; echo $?) "pg2osync --version: $v"
ok $(in_root sh -c 'command -v shaper' >/dev/null; [ $? != 0 ]; echo $?) "the stages are not on PATH"

drop_slot $S; os_drop ${S}_db
psql_q -c "drop table if exists db; create table db (id int primary key, v text);
	insert into db select g, 'r' || g from generate_series(1, 500) g"
METRICS_PORT=$(free_port)
mkconfig "$R/etc/pg2osync/pg2osync.yaml" $S $S db
in_root chgrp pg2osync /etc/pg2osync/pg2osync.yaml
chmod 640 "$R/etc/pg2osync/pg2osync.yaml"
as_user() { chroot --userspec=pg2osync:pg2osync "$R" "$@"; }
as_user /usr/bin/pg2osync validate -c /etc/pg2osync/pg2osync.yaml > "$T/validate" 2>&1
st=$?
ok $([ $st = 0 ] && tail -n 1 "$T/validate" | grep -qx 'all checks passed'; echo $?) \
	"pg2osync validate as the pg2osync user: exit $st, $(tail -n 1 "$T/validate")"
[ $st = 0 ] || sed 's/^/#   /' "$T/validate"
# chroot execs the command, so $RUN is pg2osync, which execs the supervisor
chroot --userspec=pg2osync:pg2osync "$R" /usr/bin/pg2osync run -c /etc/pg2osync/pg2osync.yaml > "$T/run.log" 2>&1 &
RUN=$!; cleanup_add $RUN
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "pg2osync run finds its stages in /usr/lib/pg2osync and is ready"
psql_q -c "update db set v = 'x' where id % 3 = 0; delete from db where id % 5 = 0"
check "the installed pipeline loads and streams the table" -- wait_equal db ${S}_db 60
kill -TERM $RUN; wait $RUN
st=$?
ok $st "SIGTERM drains it: exit $st" || tail -n 5 "$T/run.log" | sed 's/^/#   /'

# the file this test wrote is the operator's, not the package's: purge
# would rightly leave it (and so /etc/pg2osync)
rm -f "$R/etc/pg2osync/pg2osync.yaml"
t1=$SECONDS
in_root apt-get purge -y -qq pg2osync > "$T/purge.log" 2>&1
ok $? "apt-get purge pg2osync ($((SECONDS - t1)) s)" || sed 's/^/#   /' "$T/purge.log" | tail
left=$(cd "$R" && ls -d usr/lib/pg2osync usr/bin/pg2osync* usr/share/doc/pg2osync lib/systemd/system/pg2osync.service \
	usr/share/man/man1/pg2osync* etc/pg2osync var/lib/pg2osync 2>/dev/null | tr '\n' ' ')
ok $([ -z "$left" ]; echo $?) "nothing of it is left${left:+: $left}"
ok $(in_root dpkg -s pg2osync > /dev/null 2>&1; [ $? != 0 ]; echo $?) "dpkg knows it no more"
diag "151 took $((SECONDS - t0)) s"
done_testing
