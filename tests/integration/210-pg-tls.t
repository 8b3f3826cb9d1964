#!/usr/bin/env bash
# TLS to PostgreSQL, live: the test makes a CA (tests/servers/tls.sh),
# turns ssl on in the running server (ALTER SYSTEM, reload) and adds
# pg_hba lines for two roles of its own: p2o_tls may connect only over
# TLS (hostssl scram, hostnossl reject), p2o_cert only with a client
# certificate (hostssl cert). Through the configuration keys
# source.sslmode / sslrootcert / sslcert / sslkey, every sslmode:
# disable is refused (77, pg_hba), allow / prefer / require connect,
# verify-ca connects with the right CA and is refused with another,
# verify-full connects to "localhost" (the certificate's name) and is
# refused on 127.0.0.1 (not its name); p2o_cert streams with its
# certificate and is refused without one (77). A server certificate that
# does not verify is configuration, refused for good: exit 69 with one
# message, the same as capture-mysql's (610-mysql-tls.t); a handshake the
# network cuts (a server that closes on the ClientHello) stays temporary,
# 75. Then the whole pipeline over verify-full with a client certificate:
# the walsender and every other connection use TLS (pg_stat_ssl), rows
# land, and no certificate, key or password is in any stage's argv
# (/proc/PID/cmdline) or in a log line.
. "$(dirname "$0")/../lib.sh"
PG_DIR=${P2O_SERVERS_DIR:-}/pg
[ -d "$PG_DIR" ] || { echo "1..0 # skip needs the run-with.sh PostgreSQL"; exit 0; }
su_sql() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_DIR" -U postgres -d postgres "$@"; }
HBA=$PG_DATA/pg_hba.conf
TLS=$T/tls
"$TOP/tests/servers/tls.sh" "$TLS" "DNS:localhost" p2o_cert
# the server's copy, readable by the postgres user only
install -o postgres -m 600 "$TLS/server.key" "$PG_DATA/p2o-test-server.key"
install -o postgres -m 644 "$TLS/server.crt" "$PG_DATA/p2o-test-server.crt"
install -o postgres -m 644 "$TLS/ca.crt" "$PG_DATA/p2o-test-ca.crt"
cp "$HBA" "$T/hba.orig"
restore() {
	cp "$T/hba.orig" "$HBA"
	su_sql -c "alter system reset ssl" -c "alter system reset ssl_cert_file" \
		-c "alter system reset ssl_key_file" -c "alter system reset ssl_ca_file" \
		-c "select pg_reload_conf()" >/dev/null 2>&1
	rm -f "$PG_DATA"/p2o-test-*
	for r in p2o_tls p2o_cert; do
		psql_q -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = '${r}_s' and not active" >/dev/null 2>&1
		su_sql -d "$PGDATABASE" -c "drop owned by $r" -c "drop role if exists $r" >/dev/null 2>&1
	done
}
trap 'restore; _cleanup' EXIT
{
	echo "hostssl all p2o_tls 127.0.0.1/32 scram-sha-256"
	echo "hostnossl all p2o_tls 127.0.0.1/32 reject"
	echo "hostssl all p2o_cert 127.0.0.1/32 cert"
	echo "host all p2o_cert 127.0.0.1/32 reject"
	cat "$T/hba.orig"
} > "$HBA"
TPW=tls-$RANDOM-secret
su_sql -v pw="$TPW" -d "$PGDATABASE" >/dev/null <<'SQL'
drop role if exists p2o_tls; drop role if exists p2o_cert;
create role p2o_tls login replication password :'pw';
create role p2o_cert login replication;
grant p2o to p2o_tls, p2o_cert;
alter system set ssl = on;
alter system set ssl_cert_file = 'p2o-test-server.crt';
alter system set ssl_key_file = 'p2o-test-server.key';
alter system set ssl_ca_file = 'p2o-test-ca.crt';
select pg_reload_conf();
SQL
sleep 1
ok $([ "$(su_sql -c 'show ssl')" = on ]; echo $?) "the server has ssl = on with the test's CA"
psql_q -c "drop table if exists tls; create table tls (id int primary key, v text);
	insert into tls select g, 'row ' || g from generate_series(1, 300) g"

# cfg FILE ROLE SSLMODE [key value]...: a configuration for ROLE's stream
cfg() {
	local f=$1 role=$2 mode=$3; shift 3
	{
		echo "source:"
		echo "  url_env: P2O_TLS_URL"
		echo "  slot_name: ${role}_s"
		echo "  publication: ${role}_s"
		echo "  reconnect_max: 0"
		echo "  sslmode: $mode"
		while [ $# -ge 2 ]; do echo "  $1: $2"; shift 2; done
		echo "target:"
		echo "  url: $OS_URL"
		echo "sync:"
		echo "  tls:"
		echo "    table: public.tls"
		echo "    index: ${role}_tls"
		echo "engine:"
		echo "  checkpoint_interval_ms: 200"
		[ -n "${METRICS_PORT:-}" ] && { echo "metrics:"; echo "  bind: 127.0.0.1:$METRICS_PORT"; }
	} > "$f"
}
# try WANT DESC HOST ROLE SSLMODE [key value]...: capture-pg alone, until
# it streams (WANT=ok) or exits (WANT is the exit code it must exit with;
# 69 must say the certificate does not verify, in one error line); PORT
# overrides the server's port
n=0
try() {
	local want=$1 desc=$2 host=$3 role=$4 pw=; shift 4
	n=$((n + 1))
	[ "$role" = p2o_tls ] && pw=":$TPW"
	cfg "$T/c$n.yaml" "$role" "$@"
	P2O_TLS_URL="postgres://$role$pw@$host:${PORT:-$PGPORT}/$PGDATABASE" \
		capture-pg -c "$T/c$n.yaml" > /dev/null 2> "$T/c$n.log" &
	local pid=$! st=0
	cleanup_add $pid
	for _ in $(seq 300); do
		grep -q "streaming slot" "$T/c$n.log" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if grep -q "streaming slot" "$T/c$n.log"; then
		kill -TERM $pid; wait $pid
		[ "$want" = ok ]; ok $? "$desc: streams"
	else
		wait $pid; st=$?
		[ "$want" = "$st" ] && { [ "$st" != 69 ] || { [ "$(grep -c ': error: ' "$T/c$n.log")" = 1 ] &&
			grep -q "error: sslmode '$1': the server certificate of $host:${PORT:-$PGPORT} does not verify: " "$T/c$n.log"; }; }
		ok $? "$desc: exit $st (want $want): $(grep -m1 'error' "$T/c$n.log" | cut -c1-200)"
	fi
	cat "$T/c$n.log" >> "$T/all.log"
}
CA=(sslrootcert "$TLS/ca.crt")
try 77 "sslmode disable (only TLS is allowed)" 127.0.0.1 p2o_tls disable
try ok "sslmode allow" 127.0.0.1 p2o_tls allow
try ok "sslmode prefer" 127.0.0.1 p2o_tls prefer
try ok "sslmode require" 127.0.0.1 p2o_tls require
try ok "sslmode verify-ca, the server's CA" 127.0.0.1 p2o_tls verify-ca "${CA[@]}"
try 69 "sslmode verify-ca, another CA" 127.0.0.1 p2o_tls verify-ca sslrootcert "$TLS/other-ca.crt"
try ok "sslmode verify-full, the certificate's host name" localhost p2o_tls verify-full "${CA[@]}"
try 69 "sslmode verify-full, a host name the certificate does not name" 127.0.0.1 p2o_tls verify-full "${CA[@]}"
try 69 "sslmode verify-full, another CA" localhost p2o_tls verify-full sslrootcert "$TLS/other-ca.crt"
try ok "pg_hba cert: p2o_cert with its client certificate" localhost p2o_cert verify-full "${CA[@]}" \
	sslcert "$TLS/p2o_cert.crt" sslkey "$TLS/p2o_cert.key"
try 77 "pg_hba cert: p2o_cert without a client certificate" localhost p2o_cert verify-full "${CA[@]}"

# a server that agrees to TLS and closes the connection on the
# ClientHello: the network, not the certificate
cat > "$T/cut.py" <<'PY'
import socket, sys
s = socket.create_server(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    try:
        c.recv(8)               # SSLRequest
        c.sendall(b"S")
        c.recv(4096)            # ClientHello
    except OSError:
        pass
    c.close()
PY
python3 "$T/cut.py" > "$T/cut.port" &
cleanup_add $!
wait_for 10 test -s "$T/cut.port"
PORT=$(cat "$T/cut.port") try 75 "a handshake the server cuts, sslmode require" 127.0.0.1 p2o_tls require
PORT=$(cat "$T/cut.port") try 75 "a handshake the server cuts, sslmode verify-full" 127.0.0.1 p2o_tls verify-full "${CA[@]}"

# supervised, a certificate that does not verify stops the pipeline at
# once instead of being retried
cfg "$T/bad.yaml" p2o_tls verify-ca sslrootcert "$TLS/other-ca.crt"
sed -i 's/reconnect_max: 0/reconnect_max: 5/' "$T/bad.yaml"
P2O_TLS_URL="postgres://p2o_tls:$TPW@127.0.0.1:$PGPORT/$PGDATABASE" \
	timeout 60 pg2osync-supervise -c "$T/bad.yaml" > "$T/bad.log" 2>&1
st=$?
ok $([ $st = 69 ] && ! grep -q restarting "$T/bad.log"; echo $?) \
	"supervised: the pipeline stops with 69, not retried (exit $st, $(grep -c restarting "$T/bad.log") restarts)"
cat "$T/bad.log" >> "$T/all.log"

# the whole pipeline, verify-full and a client certificate
psql_q -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = 'p2o_cert_s' and not active" >/dev/null 2>&1
curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:p2o_cert_s?refresh=true" >/dev/null 2>&1
curl -sS -XDELETE "$OS_URL/.pg2osync_meta/_doc/postgres:p2o_cert_s%2Fload%2Fpublic.tls?refresh=true" >/dev/null 2>&1
os_drop p2o_cert_tls
METRICS_PORT=$(free_port)
cfg "$T/cfg.yaml" p2o_cert verify-full "${CA[@]}" sslcert "$TLS/p2o_cert.crt" sslkey "$TLS/p2o_cert.key"
sed -i 's/reconnect_max: 0/reconnect_max: 5/' "$T/cfg.yaml"
P2O_TLS_URL="postgres://p2o_cert@localhost:$PGPORT/$PGDATABASE" \
	pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 curl -sf "http://127.0.0.1:$METRICS_PORT/ready"; ok $? "the pipeline is up over verify-full with a client certificate"
check "the load lands" -- wait_equal tls p2o_cert_tls 60
psql_q -c "update tls set v = 'changed' where id <= 20; delete from tls where id > 290"
check "the stream lands" -- wait_equal tls p2o_cert_tls 30
ssl=$(su_sql -d "$PGDATABASE" -c "select count(*) filter (where s.ssl), count(*) filter (where a.backend_type = 'walsender' and s.ssl), count(*) from pg_stat_ssl s join pg_stat_activity a using (pid) where a.usename = 'p2o_cert'")
IFS='|' read -r nssl nwal nall <<< "$ssl"
ok $([ "$nwal" = 1 ] && [ "$nssl" = "$nall" ]; echo $?) \
	"the walsender and every other connection of the pipeline use TLS ($nssl of $nall, walsender $nwal)"
# every stage's argv: paths only, no certificate, key or password
mapfile -t SECRETS < <(pem_bodies "$TLS"/*.key "$TLS"/*.crt)
SECRETS+=("$TPW" "$PGPASSWORD")
bad=$(argv_secrets "-c $T/cfg.yaml" "${SECRETS[@]}")
ok $bad "no certificate, key or password in any stage's argv ($(pgrep -f -- "-c $T/cfg.yaml" | wc -l) processes)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
cat "$T/sup.log" >> "$T/all.log"
! has_secret "$T/all.log" "${SECRETS[@]}"
ok $? "no certificate, key or password in a log line ($(wc -l < "$T/all.log") lines)"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 20 | sed 's/^/#   /'; }
done_testing
