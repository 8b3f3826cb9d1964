#!/usr/bin/env bash
# deploy/deb/build.sh BUILD-DIR - the Debian package of the plain build:
#   make deb      (BUILD-DIR/pg2osync_VERSION_ARCH.deb)
#
# Every program goes in /usr/lib/pg2osync, where each finds the others
# beside itself (the supervisor its stages, pg2osync the supervisor):
# only pg2osync and pg2osync-supervise are commands, linked from /usr/bin,
# so the stages' short names (shaper, writer, loader, ckpt) take nothing
# from PATH. The unit is examples/pg2osync.service with /usr/bin paths;
# the package makes a pg2osync system user and /etc/pg2osync on install.
# Depends comes from dpkg-shlibdeps. lintian runs on the result
# (deploy/deb/lintian-overrides justifies what it reports and is kept).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/deploy/deb
bdir=${1:?usage: build.sh BUILD-DIR}
case $bdir in /*) ;; *) bdir=$top/$bdir ;; esac
die() { echo "deb: $*" >&2; exit 1; }
"$top/deploy/install-tools.sh" deb || exit 1

version=$(sed -n 's/^#define P2O_VERSION[[:space:]]*"\(.*\)"/\1/p' "$top/lib/p2o.h")
arch=$(dpkg --print-architecture)
work=$(mktemp -d "${TMPDIR:-/tmp}/p2o-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
r=$work/root
make -s -C "$top" install PREFIX=/usr/lib/pg2osync MANDIR=/usr/share/man DESTDIR="$r" \
	>/dev/null || die "make install failed"
mv "$r/usr/lib/pg2osync/bin/"* "$r/usr/lib/pg2osync/"
rmdir "$r/usr/lib/pg2osync/bin"
for b in "$r"/usr/lib/pg2osync/*; do
	strip --strip-unneeded --remove-section=.comment --remove-section=.note "$b"
done
install -d "$r/usr/bin"
ln -s ../lib/pg2osync/pg2osync "$r/usr/bin/pg2osync"
ln -s ../lib/pg2osync/pg2osync-supervise "$r/usr/bin/pg2osync-supervise"
gzip -9n "$r"/usr/share/man/man*/*

install -d "$r/lib/systemd/system"
sed 's#/usr/local/bin/#/usr/bin/#g; s#(install: make install PREFIX=/usr/local)#(the Debian package)#' \
	"$top/examples/pg2osync.service" > "$r/lib/systemd/system/pg2osync.service"
chmod 644 "$r/lib/systemd/system/pg2osync.service"

doc=$r/usr/share/doc/pg2osync
install -d "$doc/examples"
install -m 644 "$top/examples/pg2osync.yaml" "$top/examples/shop.yaml" \
	"$top/examples/alerts.yaml" "$top/examples/grafana-dashboard.json" "$doc/examples/"
install -m 644 "$here/copyright" "$doc/copyright"
install -m 644 "$top/README.md" "$doc/README.md"
# a native package's changelog: this version, from the source's own log
{
	echo "pg2osync ($version) unstable; urgency=medium"
	echo
	echo "  * Built from $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo 'a source tree')."
	echo
	echo " -- pg2osync developers <pg2osync@example.org>  $(date -R -d @"${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}")"
} | gzip -9n > "$doc/changelog.gz"
install -d "$r/usr/share/lintian/overrides"
install -m 644 "$here/lintian-overrides" "$r/usr/share/lintian/overrides/pg2osync"

# Depends: what the programs link, as dpkg-shlibdeps names it
install -d "$work/shlibs/debian"
printf 'Source: pg2osync\n\nPackage: pg2osync\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$r"/usr/lib/pg2osync/* 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependency"

install -d -m 755 "$r/DEBIAN"
install -m 755 "$here/postinst" "$here/postrm" "$r/DEBIAN/"
(cd "$r" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
	xargs -0 md5sum) > "$r/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$r" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
	-e "s/@DEPENDS@/$depends/" "$here/control.in" > "$r/DEBIAN/control"
find "$r" -type d -exec chmod 755 {} +

out=$bdir/pg2osync_${version}_$arch.deb
mkdir -p "$bdir"
dpkg-deb --root-owner-group -Zxz --build "$r" "$out" >/dev/null || die "dpkg-deb failed"
echo "deb: $out ($(du -k "$out" | cut -f1) kB)"
