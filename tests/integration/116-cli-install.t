#!/usr/bin/env bash
# make install DESTDIR=... PREFIX=...: every program and every man page, and
# nothing else; every page renders with man -l and no warning; each verb's
# --help lists the options its man page lists; the systemd unit in examples/
# passes systemd-analyze verify; pg2osync.yaml(5) and docs/config.md name
# every key the configuration's tables declare, and no other (the
# tables walked by tests/helper/config-keys, compared by doc-keys.py).
# Needs no server.
# lib.sh builds a PostgreSQL url from these; this test needs no server
export PGUSER=${PGUSER:-} PGPASSWORD=${PGPASSWORD:-} PGHOST=${PGHOST:-}
export PGPORT=${PGPORT:-} PGDATABASE=${PGDATABASE:-}
. "$(dirname "$0")/../lib.sh"

# what the test itself needs, on a fresh machine
need=
command -v man >/dev/null || need="$need man-db"
command -v groff >/dev/null || need="$need groff-base"
command -v systemd-analyze >/dev/null || need="$need systemd"
if [ -n "$need" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null 2>&1 ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null; }
fi

root=$T/root
make -C "$TOP" -s install DESTDIR="$root" PREFIX=/usr/local > "$T/make.log" 2>&1
ok $? "make install DESTDIR=… PREFIX=/usr/local"

progs="capture-mysql capture-pg ckpt loader pg2osync pg2osync-supervise shaper writer"
verbs="init validate setup-sql bootstrap run status drop-slot rejects verify resnapshot reconcile reindex switch-alias"
pages1="pg2osync capture-pg capture-mysql loader shaper writer ckpt pg2osync-supervise"
for v in $verbs; do pages1="$pages1 pg2osync-$v"; done
{
	for p in $progs; do echo "usr/local/bin/$p"; done
	for p in $pages1; do echo "usr/local/share/man/man1/$p.1"; done
	echo "usr/local/share/man/man5/pg2osync.yaml.5"
} | sort > "$T/want"
(cd "$root" && find . -type f | sed 's#^\./##' | sort) > "$T/got"
diff "$T/want" "$T/got" > "$T/diff"
ok $? "installed: the programs and the man pages, nothing else"
sed 's/^/#   /' "$T/diff" | head -20
for p in $progs; do
	[ -x "$root/usr/local/bin/$p" ] || { ok 1 "$p is executable"; continue; }
done
"$root/usr/local/bin/pg2osync" --version | grep -q '^pg2osync ' 
ok $? "the installed pg2osync runs"

for f in "$root"/usr/local/share/man/man*/*; do
	name=$(basename "$f")
	MANWIDTH=80 man -l --warnings "$f" > "$T/page" 2> "$T/warn"
	st=$?
	[ $st -eq 0 ] && [ -s "$T/page" ] && [ ! -s "$T/warn" ] && grep -q NAME "$T/page"
	ok $? "man -l $name renders without a warning"
	[ -s "$T/warn" ] && sed 's/^/#   /' "$T/warn" | head -5
done
# man finds them by name through the installed tree
MANPATH=$root/usr/local/share/man man -w pg2osync.yaml > /dev/null 2>&1
ok $? "man finds pg2osync.yaml(5) in the installed tree"

# pg2osync.yaml(5) and docs/config.md against the key tables themselves:
# every key the tables declare documented in its section (a nested one in
# the subsection of the key above it), and no key named that they lack
keys=$P2O_BIN/../tests/config-keys
"$keys" > "$T/keys"
ok $? "config-keys lists the tables' keys ($(wc -l < "$T/keys") paths)"
grep -qx 'sync.\*.children\[\].max_rows' "$T/keys" && grep -qx 'log.level' "$T/keys" &&
	grep -qx 'sync.\*.transform.\*.split' "$T/keys"
ok $? "... nested lists, optional sections and a value's second spelling included"
python3 "$TOP/tests/helper/doc-keys.py" "$T/keys" "$TOP/man/pg2osync.yaml.5" "$TOP/docs/config.md" > "$T/doc-keys" 2>&1
ok $? "pg2osync.yaml(5) and docs/config.md name every key, and only those: $(tail -n1 "$T/doc-keys")"
sed 's/^/#   /' "$T/doc-keys" | head -20
# the check can fail: a key left out, and one the tables lack
sed -e '/^\.B max_rows$/,+2d' -e 's/^\.B element$/.B elements/' "$TOP/man/pg2osync.yaml.5" > "$T/bad.5"
sed 's/^| `ready_stall_s` |/| `ready_stal` |/' "$TOP/docs/config.md" > "$T/bad.md"
python3 "$TOP/tests/helper/doc-keys.py" "$T/keys" "$T/bad.5" "$T/bad.md" > "$T/doc-keys.bad" 2>&1
st=$?
[ $st = 1 ] && grep -q "key 'max_rows' of sync / children is not documented" "$T/doc-keys.bad" &&
	grep -q "names 'elements' as a key of sync / fan_out" "$T/doc-keys.bad" &&
	grep -q "names 'ready_stal' as a key of metrics" "$T/doc-keys.bad" &&
	grep -q "key 'ready_stall_s' of metrics is not documented" "$T/doc-keys.bad"
ok $? "a key missing from the page, and a page or doc naming one the tables lack, are caught (exit $st)"

# the options of a --help, and of a man page's OPTIONS section, as --names
help_opts() { "$P2O_BIN/pg2osync" "$1" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u; }
man_opts() {
	MANWIDTH=200 man -l "$root/usr/local/share/man/man1/pg2osync-$1.1" 2>/dev/null |
		awk '/^OPTIONS/ {on=1; next} /^[A-Z]/ {on=0} on' |
		grep -oE '^ {7}(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' | sort -u
}
for v in $verbs; do
	help_opts "$v" > "$T/h.$v"
	man_opts "$v" > "$T/m.$v"
	[ -s "$T/h.$v" ] && diff "$T/h.$v" "$T/m.$v" > "$T/d.$v"
	ok $? "pg2osync $v: --help and pg2osync-$v(1) list the same options ($(tr '\n' ' ' < "$T/h.$v"))"
	sed 's/^/#   /' "$T/d.$v" 2>/dev/null | head
done
# the comparison can fail: an option the page lacks is found
printf -- '--config\n--help\n--nope\n' > "$T/fake"
! diff -q "$T/fake" "$T/m.validate" > /dev/null
ok $? "a --help option missing from the page is caught"

# every verb answers --help with exit 0 and an exit-code section; a bad
# option is a usage error (64)
for v in $verbs; do
	"$P2O_BIN/pg2osync" "$v" --help > "$T/help" 2>&1 && grep -q '^exit codes:' "$T/help"
	ok $? "pg2osync $v --help"
done
for v in init validate setup-sql bootstrap status drop-slot; do
	"$P2O_BIN/pg2osync" "$v" --no-such-option > /dev/null 2> "$T/err"
	st=$?
	[ $st = 64 ] && grep -q "unknown option '--no-such-option'" "$T/err"
	ok $? "pg2osync $v --no-such-option: exit 64 with one message (got $st)"
done
"$P2O_BIN/pg2osync" frobnicate > /dev/null 2>&1
ok $([ $? = 64 ]; echo $?) "an unknown verb: exit 64"
"$P2O_BIN/pg2osync" --help | grep -q 'drop-slot'
ok $? "pg2osync --help lists the verbs"

# the unit, pointed at the installed tree
sed "s#/usr/local/bin#$root/usr/local/bin#g" "$TOP/examples/pg2osync.service" > "$T/pg2osync.service"
MANPATH=$root/usr/local/share/man systemd-analyze verify "$T/pg2osync.service" > "$T/verify" 2>&1
ok $? "systemd-analyze verify examples/pg2osync.service"
sed 's/^/#   /' "$T/verify" | head
grep -q '^ExecReload=.*pg2osync validate' "$TOP/examples/pg2osync.service" &&
	grep -q '^ExecReload=/bin/kill -HUP \$MAINPID' "$TOP/examples/pg2osync.service"
ok $? "the unit's reload validates, then signals"
# a broken unit is refused: the check can fail
sed 's/^ExecStart=/ExecStart=nonexistent-relative /' "$T/pg2osync.service" > "$T/bad.service"
! MANPATH=$root/usr/local/share/man systemd-analyze verify "$T/bad.service" > /dev/null 2>&1
ok $? "systemd-analyze verify refuses a broken copy"

done_testing
