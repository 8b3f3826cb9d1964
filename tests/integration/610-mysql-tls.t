#!/usr/bin/env bash
# TLS to MariaDB, live: the test makes a CA (tests/servers/tls.sh),
# restarts the server with TLS on (tests/servers/mariadb.sh reads DIR/tls)
# and creates an account that REQUIREs X509 (a client certificate the CA
# signed). Through source.sslmode / sslrootcert / sslcert / sslkey:
# the X509 account streams with its certificate (verify-full) and is
# refused without one (77); the password account connects over TLS with
# require and verify-ca, is refused with verify-ca against another CA, and
# without TLS with disable. A server certificate that does not verify
# (another CA; under verify-full a certificate for another host name,
# served by a stand-in server) is configuration, refused for good: exit 69
# with one message, the same as capture-pg's (210-pg-tls.t); a handshake
# the network cuts (a stand-in server that closes on the ClientHello)
# stays temporary, 75. Then the whole pipeline as the X509 account:
# rows land, the capture says its connections are TLS, and no
# certificate, key or password is in any stage's argv or in a log line.
# The server is restarted without TLS at the end.
# Run under tests/servers/run-with.sh --mariadb --os.
. "$(dirname "$0")/../mysql-lib.sh"
DB_DIR=${P2O_SERVERS_DIR:-}/mariadb
if [ -z "${OS_URL:-}" ] || [ ! -d "$DB_DIR" ]; then echo "1..0 # skip needs the run-with.sh MariaDB and --os"; exit 0; fi

restart_db() { "$TOP/tests/servers/mariadb.sh" stop "$DB_DIR" >/dev/null 2>&1; "$TOP/tests/servers/mariadb.sh" start "$DB_DIR" >/dev/null 2>&1; }
restore() {
	my_root "DROP USER IF EXISTS 'p2o_x509'@'127.0.0.1'" >/dev/null 2>&1
	if [ -d "$DB_DIR/tls" ]; then rm -rf "$DB_DIR/tls"; restart_db; fi
}
trap 'restore; _cleanup' EXIT
"$TOP/tests/servers/tls.sh" "$DB_DIR/tls" "DNS:localhost,IP:127.0.0.1" p2o_x509
TLS=$T/tls; mkdir -p "$TLS"
cp "$DB_DIR/tls"/{ca.crt,other-ca.crt,p2o_x509.crt,p2o_x509.key} "$TLS"/; chmod 600 "$TLS"/*.key
restart_db
wait_for 60 my_sql "SELECT 1"
ok $([ "$(my_root "SELECT @@have_ssl")" = YES ]; echo $?) "the server is back with TLS on"
XPW=x509-$RANDOM-secret
my_root "CREATE USER 'p2o_x509'@'127.0.0.1' IDENTIFIED BY '$XPW' REQUIRE X509;
	GRANT ALL ON p2o.* TO 'p2o_x509'@'127.0.0.1';
	GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO 'p2o_x509'@'127.0.0.1'"
ok $? "an account that requires a client certificate"
my_sql "DROP TABLE IF EXISTS t52; CREATE TABLE t52 (id int PRIMARY KEY, v varchar(20));
	INSERT INTO t52 SELECT seq, CONCAT('row ', seq) FROM seq_1_to_300"

cfg() {	# cfg FILE SSLMODE [key value]...
	local f=$1 mode=$2; shift 2
	{
		echo "source:"
		echo "  url_env: P2O_TLS_URL"
		echo "  server_id: 4252"
		echo "  reconnect_max: 0"
		echo "  sslmode: $mode"
		while [ $# -ge 2 ]; do echo "  $1: $2"; shift 2; done
		echo "target:"
		echo "  url: $OS_URL"
		echo "sync:"
		echo "  t52:"
		echo "    table: p2o.t52"
		echo "    index: t52_t52"
		echo "engine:"
		echo "  checkpoint_interval_ms: 200"
		[ -n "${METRICS_PORT:-}" ] && { echo "metrics:"; echo "  bind: 127.0.0.1:$METRICS_PORT"; }
	} > "$f"
}
n=0
# try WANT DESC USER PASSWORD SSLMODE [key value]...: WANT is ok, ok-tls,
# ok-plain, or the exit code (69 must say the certificate does not verify,
# in one error line); PORT overrides the server's port
try() {
	local want=$1 desc=$2 user=$3 pw=$4 pid st; shift 4
	n=$((n + 1))
	cfg "$T/c$n.yaml" "$@"
	P2O_TLS_URL="mysql://$user:$pw@127.0.0.1:${PORT:-$MYSQL_TCP_PORT}/p2o" \
		capture-mysql -c "$T/c$n.yaml" > /dev/null 2> "$T/c$n.log" &
	pid=$!; cleanup_add $pid
	for _ in $(seq 300); do
		grep -q "binlog dump" "$T/c$n.log" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if grep -q "binlog dump" "$T/c$n.log"; then
		kill -TERM $pid; wait $pid
		tls=no; grep -q "dump connection .*, TLS)" "$T/c$n.log" && tls=yes
		[ "$want" = ok ] || [ "$want" = ok-tls -a $tls = yes ] || [ "$want" = ok-plain -a $tls = no ]
		ok $? "$desc: streams (TLS: $tls)"
	else
		wait $pid; st=$?
		[ "$want" = "$st" ] && { [ "$st" != 69 ] || { [ "$(grep -c ': error: ' "$T/c$n.log")" = 1 ] &&
			grep -q "error: sslmode '$1': the server certificate of 127.0.0.1:${PORT:-$MYSQL_TCP_PORT} does not verify: " "$T/c$n.log"; }; }
		ok $? "$desc: exit $st (want $want): $(grep -m1 'error' "$T/c$n.log" | cut -c1-200)"
	fi
	cat "$T/c$n.log" >> "$T/all.log"
}
CA=(sslrootcert "$TLS/ca.crt")
CERT=(sslcert "$TLS/p2o_x509.crt" sslkey "$TLS/p2o_x509.key")
try ok-tls "REQUIRE X509 with its client certificate, verify-full" p2o_x509 "$XPW" verify-full "${CA[@]}" "${CERT[@]}"
try 77 "REQUIRE X509 without a client certificate" p2o_x509 "$XPW" require
try ok-tls "the password account, require" "$MYSQL_USER" "$MYSQL_PWD" require
try ok-tls "the password account, verify-ca" "$MYSQL_USER" "$MYSQL_PWD" verify-ca "${CA[@]}"
try 69 "the password account, verify-ca against another CA" "$MYSQL_USER" "$MYSQL_PWD" verify-ca sslrootcert "$TLS/other-ca.crt"
try 69 "the password account, verify-full against another CA" "$MYSQL_USER" "$MYSQL_PWD" verify-full sslrootcert "$TLS/other-ca.crt"
try ok-plain "the password account, disable" "$MYSQL_USER" "$MYSQL_PWD" disable

# a stand-in server: the greeting of a MariaDB that offers TLS, then
# either the TLS handshake with the certificate named (CERT KEY) or, with
# none, the connection closed on the ClientHello
"$TOP/tests/servers/tls.sh" "$T/elsewhere" "DNS:elsewhere.invalid"
cat > "$T/standin.py" <<'PY'
import socket, ssl, struct, sys
s = socket.create_server(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
ctx = None
if len(sys.argv) == 3:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[1], sys.argv[2])
caps = 0xffffffff & ~0x20               # no compression; CLIENT_SSL (0x800) on
hello = (b"\x0a5.5.5-10.11.0-MariaDB-standin\0" + struct.pack("<I", 1) + b"abcdefgh\0"
         + struct.pack("<HBHH", caps & 0xffff, 45, 2, caps >> 16) + b"\x15" + b"\0" * 10
         + b"ijklmnopqrst\0mysql_native_password\0")
def need(c, n):
    b = b""
    while len(b) < n:
        d = c.recv(n - len(b))
        if not d:
            raise OSError("closed")
        b += d
    return b
while True:
    c, _ = s.accept()
    try:
        c.sendall(struct.pack("<I", len(hello))[:3] + b"\0" + hello)
        h = need(c, 4)
        need(c, h[0] | h[1] << 8 | h[2] << 16)      # the SSL request
        if ctx is None:
            c.recv(4096)                            # the ClientHello
        else:
            ctx.wrap_socket(c, server_side=True).close()
    except (OSError, ssl.SSLError):
        pass
    c.close()
PY
standin() {	# standin [CERT KEY]: STANDIN is its port
	rm -f "$T/standin.port"
	python3 "$T/standin.py" "$@" > "$T/standin.port" &
	cleanup_add $!
	wait_for 10 test -s "$T/standin.port"
	STANDIN=$(cat "$T/standin.port")
}
standin "$T/elsewhere/server.crt" "$T/elsewhere/server.key"
PORT=$STANDIN try 69 "verify-full, a certificate for another host name" "$MYSQL_USER" "$MYSQL_PWD" verify-full sslrootcert "$T/elsewhere/ca.crt"
standin
PORT=$STANDIN try 75 "a handshake the server cuts, sslmode require" "$MYSQL_USER" "$MYSQL_PWD" require
PORT=$STANDIN try 75 "a handshake the server cuts, sslmode verify-full" "$MYSQL_USER" "$MYSQL_PWD" verify-full "${CA[@]}"

# supervised, a certificate that does not verify stops the pipeline at
# once instead of being retried
cfg "$T/bad.yaml" verify-ca sslrootcert "$TLS/other-ca.crt"
sed -i 's/reconnect_max: 0/reconnect_max: 5/' "$T/bad.yaml"
P2O_TLS_URL="mysql://$MYSQL_USER:$MYSQL_PWD@127.0.0.1:$MYSQL_TCP_PORT/p2o" \
	timeout 60 pg2osync-supervise -c "$T/bad.yaml" > "$T/bad.log" 2>&1
st=$?
ok $([ $st = 69 ] && ! grep -q restarting "$T/bad.log"; echo $?) \
	"supervised: the pipeline stops with 69, not retried (exit $st, $(grep -c restarting "$T/bad.log") restarts)"
cat "$T/bad.log" >> "$T/all.log"

# the whole pipeline as the X509 account
MY_SERVER_ID=4252 my_fresh_stream t52
os_drop t52_t52
METRICS_PORT=$(free_port)
cfg "$T/cfg.yaml" verify-full "${CA[@]}" "${CERT[@]}"
sed -i 's/reconnect_max: 0/reconnect_max: 5/' "$T/cfg.yaml"
P2O_TLS_URL="mysql://p2o_x509:$XPW@127.0.0.1:$MYSQL_TCP_PORT/p2o" \
	pg2osync-supervise -c "$T/cfg.yaml" > "$T/sup.log" 2>&1 &
SUP=$!; cleanup_add $SUP
wait_for 60 healthy; ok $? "the pipeline is up as the X509 account"
SEL="JSON_OBJECT('id', id, 'v', v)"
check "the load lands" -- my_equal t52 t52_t52 60 "$SEL"
my_sql "UPDATE t52 SET v = 'changed' WHERE id <= 20; DELETE FROM t52 WHERE id > 290"
check "the stream lands" -- my_equal t52 t52_t52 30 "$SEL"
ok $(grep -q "dump connection .*, TLS)" "$T/sup.log"; echo $?) "the capture's dump connection is TLS: $(grep -m1 'dump connection' "$T/sup.log" | cut -c1-120)"
mapfile -t SECRETS < <(pem_bodies "$TLS"/*.key "$TLS"/*.crt)
SECRETS+=("$XPW" "$MYSQL_PWD")
bad=$(argv_secrets "-c $T/cfg.yaml" "${SECRETS[@]}")
ok $bad "no certificate, key or password in any stage's argv ($(pgrep -f -- "-c $T/cfg.yaml" | wc -l) processes)"
kill -TERM $SUP; wait $SUP; ok $? "drains and exits 0"
cat "$T/sup.log" >> "$T/all.log"
! has_secret "$T/all.log" "${SECRETS[@]}"
ok $? "no certificate, key or password in a log line ($(wc -l < "$T/all.log") lines)"
[ $_tap_fail -gt 0 ] && { grep -v ' info: ' "$T/sup.log" | tail -n 20 | sed 's/^/#   /'; }
done_testing
