#!/usr/bin/env bash
# The release tarball (make dist, deploy/dist/build.sh): the outer
# SHA256SUMS checks the tarball, the inner one every file in it; it holds
# every program, every man page, the examples and the unit; LIBRARIES names
# every shared library each program loads and the package of each; the
# README says which programs are static (none: libcurl's and libpq's static
# archives need krb5 and LDAP, which Debian ships shared only - checked
# here, so the README is corrected the day that changes); unpacked anywhere,
# its pg2osync validates against the test servers and runs the pipeline
# from its own bin/.
# Fails when: a checksum, a program, a page, an example or a library is
# missing, the README's static claim is no longer true, or the unpacked
# programs cannot run the pipeline.
. "$(dirname "$0")/../lib.sh"

S=p2o_dist
t0=$SECONDS
make -s -C "$TOP" dist > "$T/make.log" 2>&1
ok $? "make dist ($((SECONDS - t0)) s)" || sed 's/^/#   /' "$T/make.log" | tail -n 20
version=$(sed -n 's/^#define P2O_VERSION[[:space:]]*"\(.*\)"/\1/p' "$TOP/lib/p2o.h")
name=pg2osync-$version-linux-$(uname -m)
tgz=$TOP/build/dist/$name.tar.gz
[ -s "$tgz" ] || { done_testing; exit 1; }
(cd "$TOP/build/dist" && sha256sum -c --quiet SHA256SUMS) > "$T/sum" 2>&1
ok $? "SHA256SUMS beside it checks the tarball"
diag "$name.tar.gz: $(( $(stat -c %s "$tgz") / 1024 )) kB"
mkdir "$T/x" && tar -C "$T/x" -xzf "$tgz"
D=$T/x/$name
(cd "$D" && sha256sum -c --quiet SHA256SUMS) > "$T/sum" 2>&1
ok $? "its SHA256SUMS checks every file in it"
ok $([ "$(cd "$D" && find . -type f ! -name SHA256SUMS | wc -l)" = "$(wc -l < "$D/SHA256SUMS")" ]; echo $?) \
	"and names every file ($(wc -l < "$D/SHA256SUMS"))"
progs="capture-mysql capture-pg ckpt loader pg2osync pg2osync-supervise shaper writer"
ok $([ "$(ls "$D/bin" | tr '\n' ' ')" = "$progs " ]; echo $?) "bin/: $(ls "$D/bin" | tr '\n' ' ')"
missing=
for m in "$TOP"/man/*.[15]; do
	[ -s "$D/man/man${m##*.}/${m##*/}" ] || missing="$missing ${m##*/}"
done
ok $([ -z "$missing" ]; echo $?) "every man page${missing:+, missing:$missing}"
for e in pg2osync.yaml shop.yaml alerts.yaml grafana-dashboard.json pg2osync.service; do
	[ -s "$D/examples/$e" ] || missing="$missing $e"
done
ok $([ -z "$missing" ]; echo $?) "the examples and the unit${missing:+, missing:$missing}"

# LIBRARIES against what ldd says now
bad=
for p in $progs; do
	for so in $(ldd "$D/bin/$p" | awk '$1 !~ /^linux-vdso/ { print $1 }'); do
		awk -v p="$p:" -v so="  $so" '$0 == p { f = 1; next } /^[^ ]/ { f = 0 } f && $0 == so { found = 1 }
			END { exit !found }' "$D/LIBRARIES" || bad="$bad $p:$so"
	done
done
ok $([ -z "$bad" ]; echo $?) "LIBRARIES lists every library of every program${bad:+; not:$bad}"
ok $(grep -q '^  libpq5$' "$D/LIBRARIES" && grep -q '^  libcurl4$' "$D/LIBRARIES"; echo $?) "and the packages that carry them"
dyn=0
for p in $progs; do readelf -d "$D/bin/$p" 2>/dev/null | grep -q '(NEEDED)' && dyn=$((dyn + 1)); done
ok $([ $dyn = 8 ] && grep -q '^None of the programs is static' "$D/README"; echo $?) \
	"the README says none is static, and none is ($dyn of 8 dynamic)"
noarch=
for a in libgssapi_krb5 libldap; do
	[ -e "/usr/lib/$(gcc -print-multiarch)/$a.a" ] || noarch="$noarch $a.a"
done
ok $([ -n "$noarch" ]; echo $?) "why: the Debian archives have no$noarch (libcurl.a and libpq.a need them)"

v=$("$D/bin/pg2osync" --version 2>&1)
ok $([ "$v" = "pg2osync $version" ]; echo $?) "bin/pg2osync --version: $v"
drop_slot $S; os_drop ${S}_ds
psql_q -c "drop table if exists ds; create table ds (id int primary key, v text);
	insert into ds select g, 'r' || g from generate_series(1, 300) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S ds
env PATH=/usr/bin:/bin "$D/bin/pg2osync" validate -c "$T/cfg.yaml" > "$T/validate" 2>&1
ok $? "bin/pg2osync validate: $(tail -n 1 "$T/validate")"
env PATH=/usr/bin:/bin "$D/bin/pg2osync" run -c "$T/cfg.yaml" > "$T/run.log" 2>&1 &
RUN=$!; cleanup_add $RUN
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"
ok $? "bin/pg2osync run finds its stages beside it (PATH without them)"
psql_q -c "update ds set v = 'y' where id % 4 = 0"
check "and streams the table" -- wait_equal ds ${S}_ds 60
kill -TERM $RUN; wait $RUN
ok $? "SIGTERM drains it: exit 0"
diag "152 took $((SECONDS - t0)) s"
done_testing
