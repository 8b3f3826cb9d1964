#!/usr/bin/env bash
# A throw-away certificate authority for the TLS tests, made with openssl.
#   tls.sh DIR SAN CLIENT...
# writes into DIR (created, 0700):
#   ca.crt ca.key              the CA that signed what follows
#   other-ca.crt other-ca.key  a CA that signed nothing here (verify must fail)
#   server.crt server.key      CN=localhost, subjectAltName SAN (e.g.
#                              "DNS:localhost" or "DNS:localhost,IP:127.0.0.1")
#   CLIENT.crt CLIENT.key      one client certificate per name, CN=CLIENT
# Keys are 0600, unencrypted. Nothing is printed unless openssl fails.
set -eu
[ $# -ge 2 ] || { echo "usage: tls.sh DIR SAN [CLIENT...]" >&2; exit 64; }
dir=$1 san=$2; shift 2
if ! command -v openssl >/dev/null; then
	# shellcheck source=lib.sh
	. "$(dirname "$0")/lib.sh"
	p2o_apt_ensure openssl
fi
mkdir -p "$dir"; chmod 700 "$dir"
cd "$dir"
log=$(mktemp)
trap 'rm -f "$log" ./*.csr ./*.ext ./*.srl' EXIT
q() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }; }
ca() {	# ca NAME CN
	q openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=$2" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$1.key" -out "$1.crt"
}
leaf() {	# leaf NAME CN USAGE [SAN]
	q openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=$2" -keyout "$1.key" -out "$1.csr"
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$3"
		[ -n "${4:-}" ] && echo "subjectAltName=$4"
	} > "$1.ext"
	q openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -sha256 \
		-extfile "$1.ext" -out "$1.crt"
}
ca ca "p2o test CA"
ca other-ca "p2o other test CA"
leaf server localhost serverAuth "$san"
for c in "$@"; do leaf "$c" "$c" clientAuth; done
chmod 600 ./*.key
