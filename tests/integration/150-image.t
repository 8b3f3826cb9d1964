#!/usr/bin/env bash
# The container image (make image, deploy/image/build.sh) run with podman
# against the test servers, the way a team runs it: as its own user, with
# a read-only root filesystem, every capability dropped, the source url
# from the environment and the file mounted read-only. It loads a table and
# streams changes (the index compared with the table by content); /healthz
# and /ready answer on the port the file binds (host networking: the test
# servers listen on loopback only); `podman stop` drains (exit 0, the
# checkpoint stored and the slot not past it); rows written while it is
# stopped arrive after `podman start`, which resumes from the checkpoint
# instead of loading again.
# Fails when: the archive is missing or over 60 MB, podman load refuses it,
# its user, command or labels are not the documented ones, it carries a
# shell or a package manager, the container writes outside its volume, a
# row is lost or wrong, stop does not drain, or a restart reloads.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../../deploy/image/podman.sh
. "$TOP/deploy/image/podman.sh"

IMG=$TOP/build/pg2osync-image.tar
S=p2o_image
t0=$SECONDS
make -s -C "$TOP" image > "$T/make.log" 2>&1
ok $? "make image ($((SECONDS - t0)) s)" || sed 's/^/#   /' "$T/make.log" | tail -n 20
[ -s "$IMG" ] || { done_testing; exit 1; }
mb=$(( $(stat -c %s "$IMG") / 1048576 ))
ok $([ $mb -lt 60 ]; echo $?) "the OCI archive is ${mb} MB (under 60)"

p2o_podman_init "$T/podman"
_img_cleanup() { p2o_podman_release; _cleanup; }
trap _img_cleanup EXIT
p2o_podman load -q -i "$IMG" > "$T/load.out" 2>&1
ok $? "podman load takes the archive ($(tr '\n' ' ' < "$T/load.out"))"
name=$(sed -n 's/^Loaded image[^:]*: *//p' "$T/load.out" | head -n 1)
p2o_podman image inspect "$name" > "$T/inspect.json" 2> "$T/inspect.err"
cfg() { jq -r ".[0].Config.$1" "$T/inspect.json"; }
ok $([ "$(cfg User)" = 10001:10001 ]; echo $?) "runs as 10001:10001 ($(cfg User))"
ok $([ "$(cfg 'Entrypoint|join(" ")') $(cfg 'Cmd|join(" ")')" = \
	"/usr/bin/pg2osync run -c /etc/pg2osync/pg2osync.yaml" ]; echo $?) \
	"default command: $(cfg 'Entrypoint|join(" ")') $(cfg 'Cmd|join(" ")')"
ok $(cfg 'Env // [] | join(" ")' | grep -qw 'PATH=/usr/bin'; echo $?) \
	"PATH is set in the image (kubectl exec finds the verbs by name): $(cfg 'Env // [] | join(" ")')"
version=$(sed -n 's/^#define P2O_VERSION[[:space:]]*"\(.*\)"/\1/p' "$TOP/lib/p2o.h")
ok $([ "$(cfg 'Labels["org.opencontainers.image.version"]')" = "$version" ]; echo $?) \
	"label version $version"
rev=$(cfg 'Labels["org.opencontainers.image.revision"]')
ok $(case $rev in "$(git -C "$TOP" rev-parse HEAD)"*) echo 0 ;; *) echo 1 ;; esac) "label revision $rev"
layer_size=$(jq -r ".[0].Size // 0" "$T/inspect.json")
diag "image: $mb MB archived, $((layer_size / 1048576)) MB unpacked"

# nothing to log in with, nothing to install with
for p in /bin/sh /bin/bash /usr/bin/dash /usr/bin/apt-get /usr/bin/dpkg /usr/bin/perl /usr/bin/cc; do
	if p2o_podman run --rm --network none --entrypoint "$p" "$name" -c true >/dev/null 2>&1; then
		ok 1 "no $p in the image"
	else
		ok 0 "no $p in the image"
	fi
done

drop_slot $S; os_drop ${S}_im
psql_q -c "drop table if exists im; create table im (id int primary key, v text, n numeric(8,2));
	insert into im select g, 'row ' || g, g * 1.5 from generate_series(1, 2000) g"
METRICS_PORT=$(free_port)
mkconfig "$T/cfg.yaml" $S $S im
chmod 644 "$T/cfg.yaml"
SEL="json_build_object('id',id,'v',v,'n',n::text)"
cname=p2o-image-$$
run_container() {
	p2o_podman run -d --name "$cname" --network host \
		--read-only --read-only-tmpfs=false --cap-drop all \
		--security-opt no-new-privileges \
		-e P2O_TEST_URL -v "$T/cfg.yaml:/etc/pg2osync/pg2osync.yaml:ro" \
		"$name" > "$T/cid" 2> "$T/run.err"
}
run_container
ok $? "the container starts read-only with every capability dropped" || sed 's/^/#   /' "$T/run.err"
M=http://127.0.0.1:$METRICS_PORT
wait_for 90 curl -sf "$M/ready"
ok $? "/ready answers 200 on the bound port"
ok $([ "$(curl -s -o /dev/null -w '%{http_code}' "$M/healthz")" = 200 ]; echo $?) "/healthz answers 200"
check "the table is loaded: the index equals it by content" -- wait_equal im ${S}_im 90 "$SEL"
psql_q -c "insert into im select g, 'new ' || g, g from generate_series(2001, 2100) g;
	update im set v = 'changed', n = 0.10 where id % 7 = 0; delete from im where id % 11 = 0"
check "inserts, updates and deletes stream into it" -- wait_equal im ${S}_im 60 "$SEL"

insp() { p2o_podman inspect "$cname" | jq -r ".[0].$1"; }
ok $([ "$(insp HostConfig.ReadonlyRootfs)" = true ]; echo $?) "the root filesystem is read-only"
pids=$(pgrep -f -- "-c /etc/pg2osync/pg2osync.yaml" | tr '\n' ' ')
uids=$(for p in $pids; do awk '/^Uid:/ {print $2}' "/proc/$p/status"; done | sort -u | tr '\n' ' ')
ok $([ "$uids" = "10001 " ]; echo $?) "every process of the pipeline runs as 10001 (uids: $uids)"
caps=$(for p in $pids; do awk '/^CapEff:/ {print $2}' "/proc/$p/status"; done | sort -u | tr '\n' ' ')
ok $([ "$caps" = "0000000000000000 " ]; echo $?) "and holds no capability (CapEff: $caps)"
n=$(argv_secrets "/etc/pg2osync/pg2osync.yaml" "$PGPASSWORD")
ok $([ "$n" = 0 ]; echo $?) "no process in the container carries the password on its argv"
p2o_podman logs "$cname" > "$T/logs1" 2>&1
ok $(has_secret "$T/logs1" "$PGPASSWORD"; [ $? = 1 ]; echo $?) "nor does its log"

p2o_podman stop -t 90 "$cname" > /dev/null 2>&1
ok $([ "$(insp State.ExitCode)" = 0 ]; echo $?) "podman stop drains: exit $(insp State.ExitCode)"
stored=$(ckpt_lsn "$T/cfg.yaml")
ok $([ -n "$stored" ]; echo $?) "the checkpoint is stored ($stored)"
check "the slot is not past it" -- slot_not_past_ckpt $S "$T/cfg.yaml" 0/0

p2o_podman logs "$cname" > "$T/logs1" 2>&1
loads1=$(grep -c "'loader' finished" "$T/logs1")
psql_q -c "insert into im select g, 'while stopped', 1 from generate_series(3001, 3050) g; delete from im where id < 100"
p2o_podman start "$cname" > /dev/null 2> "$T/start.err"
ok $? "podman start runs it again" || sed 's/^/#   /' "$T/start.err"
check "what was written while it was stopped arrives" -- wait_equal im ${S}_im 90 "$SEL"
p2o_podman logs "$cname" > "$T/logs2" 2>&1
loads2=$(grep -c "'loader' finished" "$T/logs2")
reloads=$(curl -s "$M/metrics" | awk '/^pg2osync_full_reloads_total/ {print $2}')
ok $([ "$loads2" = "$loads1" ] && [ "${reloads:-0}" = 0 ]; echo $?) \
	"it resumed from the checkpoint: no load ran again (loads $loads1 -> $loads2, full reloads ${reloads:-0})"
# by name: kubectl exec and podman exec find it through the image's PATH
p2o_podman exec "$cname" pg2osync --version > "$T/version" 2>&1
ok $(grep -qx "pg2osync $version" "$T/version"; echo $?) "pg2osync --version in the container: $(cat "$T/version")"
p2o_podman stop -t 90 "$cname" > /dev/null 2>&1
ok $([ "$(insp State.ExitCode)" = 0 ]; echo $?) "the second stop drains too"
diag "150 took $((SECONDS - t0)) s"
done_testing
