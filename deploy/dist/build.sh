#!/usr/bin/env bash
# deploy/dist/build.sh BUILD-DIR - the release tarball of the plain build
# for this machine's architecture:
#   make dist     (BUILD-DIR/dist/pg2osync-VERSION-linux-ARCH.tar.gz and
#                  BUILD-DIR/dist/SHA256SUMS)
#
# Inside: bin/ (every program; each finds the others beside itself, so the
# tree runs from wherever it is unpacked), man/, examples/ (the sample
# configurations, the alerts, the dashboard, the systemd unit), README
# (what is in it and what it needs), LIBRARIES (each program's shared
# libraries, ldd, and the Debian packages that carry them) and SHA256SUMS
# of every file.
#
# The programs are linked dynamically: libcurl's and libpq's static
# archives in Debian need GSSAPI (krb5) and LDAP, which Debian ships as
# shared libraries only, so a static link would mean rebuilding libcurl
# and libpq without them (dropping Kerberos authentication to the
# database). README says so, and which libraries to install.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:?usage: build.sh BUILD-DIR}
case $bdir in /*) ;; *) bdir=$top/$bdir ;; esac
die() { echo "dist: $*" >&2; exit 1; }

version=$(sed -n 's/^#define P2O_VERSION[[:space:]]*"\(.*\)"/\1/p' "$top/lib/p2o.h")
arch=$(uname -m)
name=pg2osync-$version-linux-$arch
work=$(mktemp -d "${TMPDIR:-/tmp}/p2o-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT
d=$work/$name
make -s -C "$top" install PREFIX=/ MANDIR=/man DESTDIR="$d" >/dev/null || die "make install failed"
for b in "$d"/bin/*; do
	strip --strip-unneeded --remove-section=.comment "$b"
done
install -d "$d/examples"
install -m 644 "$top/examples/pg2osync.yaml" "$top/examples/shop.yaml" "$top/examples/alerts.yaml" \
	"$top/examples/grafana-dashboard.json" "$top/examples/pg2osync.service" "$d/examples/"

# each program's libraries, and which Debian package holds each
{
	echo "# The shared libraries each program loads (ldd on the build machine), and"
	echo "# the Debian bookworm package that carries each one."
	for b in "$d"/bin/*; do
		echo
		echo "${b##*/}:"
		ldd "$b" | awk '$1 !~ /^linux-vdso/ { print "  " $1 }' | LC_ALL=C sort
	done
	echo
	echo "packages:"
	for b in "$d"/bin/*; do
		ldd "$b" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
	done | LC_ALL=C sort -u | while read -r lib; do
		real=$(readlink -f "$lib")
		dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || dpkg -S "${lib#/usr}" 2>/dev/null ||
			echo "unknown: $lib"
	done | cut -d: -f1 | LC_ALL=C sort -u | sed 's/^/  /'
} > "$d/LIBRARIES"
grep -q '^  unknown' "$d/LIBRARIES" && die "a library of no package: $(grep unknown "$d/LIBRARIES")"
direct=$(for b in "$d"/bin/*; do objdump -p "$b" | awk '/NEEDED/ { print $2 }'; done | LC_ALL=C sort -u |
	while read -r so; do
		dpkg -S "*/$so" 2>/dev/null | head -n 1 | cut -d: -f1
	done | LC_ALL=C sort -u | tr '\n' ' ')

cat > "$d/README" <<README
pg2osync $version for Linux $arch

  bin/        the programs: pg2osync (the operator command), pg2osync-supervise,
              and the stages it runs (capture-pg, capture-mysql, loader, shaper,
              writer, ckpt). Keep them together: each finds the others beside
              itself before it looks in PATH.
  man/        the manual pages (MANPATH=\$PWD/man man pg2osync)
  examples/   pg2osync.yaml, shop.yaml (shaping), alerts.yaml (Prometheus rules),
              grafana-dashboard.json, pg2osync.service (systemd; edit its paths)
  LIBRARIES   the shared libraries each program loads and their Debian packages
  SHA256SUMS  the checksum of every file here: sha256sum -c SHA256SUMS

Start with:  bin/pg2osync init --help,  bin/pg2osync validate -c FILE,
             bin/pg2osync run -c FILE

None of the programs is static. Every one links libcurl, and PostgreSQL's
programs libpq; Debian's static archives of both need GSSAPI (krb5) and
LDAP, which Debian builds as shared libraries only, so a static build
would mean rebuilding libcurl and libpq without Kerberos and LDAP. The
programs need glibc 2.34 or later and these packages (Debian/Ubuntu
names; on bookworm: apt-get install ...):

  $direct
README

(cd "$d" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort |
	xargs sha256sum) > "$work/SHA256SUMS" && mv "$work/SHA256SUMS" "$d/SHA256SUMS"
mkdir -p "$bdir/dist"
tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name \
	--mtime=@"$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)" \
	-czf "$bdir/dist/$name.tar.gz" "$name"
(cd "$bdir/dist" && sha256sum "$name.tar.gz" > SHA256SUMS)
echo "dist: $bdir/dist/$name.tar.gz ($(du -k "$bdir/dist/$name.tar.gz" | cut -f1) kB), $bdir/dist/SHA256SUMS"
