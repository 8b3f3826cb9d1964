#!/usr/bin/env bash
# deploy/image/build.sh OUT.tar - the pg2osync container image, built with
# no registry, written as an OCI archive (`podman load` / `docker load`).
#
#   make image     (build/pg2osync-image.tar)
#
# The root is Debian bookworm's runtime libraries only, extracted by
# mmdebstrap from the package mirror without running a maintainer script:
# no shell, no package manager, no compiler. Kubernetes probes are HTTP
# (/healthz, /ready), so nothing in the image needs a shell. That root is
# cached in $P2O_CACHE/image-root (keyed by the package list) so that only
# the first build reads the mirror; removing it takes the mirror's current
# packages (security updates) at the next build. Over it go the programs and man pages
# of `make install PREFIX=/usr`, a user pg2osync with uid and gid 10001,
# and the CA bundle update-ca-certificates would have made.
#
# The image runs as 10001, needs no capability, and works on a read-only
# root filesystem: the only place it writes is /var/lib/pg2osync (a volume:
# Meilisearch's target.state_dir, taps).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: build.sh OUT.tar}
case $out in /*) ;; *) out=$PWD/$out ;; esac
P2O_CACHE=${P2O_CACHE:-${HOME:-/root}/.cache/pg2osync}
mirror=${P2O_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm
uid=10001
# the runtime libraries of every program (ldd build/bin/*), ca-certificates
# for TLS to the database and the target
pkgs=libc6,libpq5,libmariadb3,libcurl4,libssl3,libjansson4,libyaml-0-2,libzstd1,zlib1g,ca-certificates

die() { echo "image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (the root filesystem's owners are kept)"
"$top/deploy/install-tools.sh" image || exit 1
# shellcheck source=podman.sh
. "$top/deploy/image/podman.sh"

version=$(sed -n 's/^#define P2O_VERSION[[:space:]]*"\(.*\)"/\1/p' "$top/lib/p2o.h")
revision=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	revision=$revision-dirty
fi

# --- the cached root ---------------------------------------------------------
key=$(printf '%s %s %s v1' "$suite" "$pkgs" "$mirror" | sha256sum | cut -c1-16)
root_tar=$P2O_CACHE/image-root/$suite-$key.tar
if [ ! -s "$root_tar" ]; then
	mkdir -p "$P2O_CACHE/image-root"
	exec 9>"$P2O_CACHE/image-root/.lock"
	flock 9
	if [ ! -s "$root_tar" ]; then
		echo "image: extracting a $suite root from $mirror (once; cached in $root_tar)" >&2
		mmdebstrap --quiet --format=tar --variant=extract --include="$pkgs" \
			--aptopt='Apt::Install-Recommends "false"' \
			"$suite" "$root_tar.part" "$mirror" || die "mmdebstrap failed"
		mv "$root_tar.part" "$root_tar"
	fi
	exec 9>&-
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/p2o-image.XXXXXX")
trap 'p2o_podman_release; rm -rf "$work"' EXIT
root=$work/root
mkdir "$root"
tar -C "$root" -xf "$root_tar"

# what only a package manager, a shell or a reader of documentation uses
rm -rf "$root"/var/lib/apt "$root"/var/cache/apt "$root"/var/lib/dpkg "$root"/var/log/* \
	"$root"/var/cache/debconf "$root"/etc/apt \
	"$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/locale \
	"$root"/usr/share/lintian "$root"/usr/share/perl5 "$root"/usr/share/debconf \
	"$root"/usr/share/bash-completion "$root"/usr/share/pixmaps \
	"$root"/usr/sbin "$root"/usr/bin
mkdir -p "$root/usr/bin"

# the CA bundle ca-certificates' maintainer script would have written
mkdir -p "$root/etc/ssl/certs"
find "$root/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort |
	xargs cat >"$root/etc/ssl/certs/ca-certificates.crt"
[ -s "$root/etc/ssl/certs/ca-certificates.crt" ] || die "no CA certificates in the root"

# the user: fixed ids, so a volume's owner and a pod's runAsUser can name it
cat >"$root/etc/passwd" <<PW
root:x:0:0:root:/root:/usr/sbin/nologin
pg2osync:x:$uid:$uid:pg2osync:/var/lib/pg2osync:/usr/sbin/nologin
PW
cat >"$root/etc/group" <<GR
root:x:0:
pg2osync:x:$uid:
GR
mkdir -p "$root/tmp" "$root/etc/pg2osync" "$root/var/lib/pg2osync"
chmod 1777 "$root/tmp"
chown "$uid:$uid" "$root/var/lib/pg2osync"
chmod 750 "$root/var/lib/pg2osync"

make -s -C "$top" install PREFIX=/usr DESTDIR="$root" >/dev/null || die "make install failed"

# every program's libraries resolve inside the root (a missing package in
# $pkgs would otherwise show only when the container starts)
for b in "$root"/usr/bin/*; do
	miss=$(env -i chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "/usr/bin/${b##*/}" 2>&1 |
		grep 'not found' || true)
	[ -z "$miss" ] || die "${b##*/} in the image: $miss"
done

tar -C "$root" --numeric-owner --sort=name --mtime=@0 -cf "$work/layer.tar" .

p2o_podman_init "$work/podman"
name=localhost/pg2osync:$version
p2o_podman import -q \
	--change "ENTRYPOINT [\"/usr/bin/pg2osync\"]" \
	--change "CMD [\"run\", \"-c\", \"/etc/pg2osync/pg2osync.yaml\"]" \
	--change "USER $uid:$uid" \
	--change "ENV PATH=/usr/bin" \
	--change "WORKDIR /var/lib/pg2osync" \
	--change "VOLUME /var/lib/pg2osync" \
	--change "EXPOSE 9187" \
	--change "STOPSIGNAL SIGTERM" \
	--change "LABEL org.opencontainers.image.title=pg2osync" \
	--change "LABEL org.opencontainers.image.version=$version" \
	--change "LABEL org.opencontainers.image.revision=$revision" \
	--change "LABEL org.opencontainers.image.base.name=debian:$suite" \
	"$work/layer.tar" "$name" >/dev/null || die "podman import failed"
mkdir -p "$(dirname "$out")"
rm -f "$out"
p2o_podman save -q --format oci-archive -o "$out" "$name" >/dev/null || die "podman save failed"
echo "image: $out ($name, revision $revision, $(du -m "$out" | cut -f1) MB)"
