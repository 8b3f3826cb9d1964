#!/usr/bin/env bash
# deploy/install-tools.sh WHAT... - install what building or testing a
# deployment form needs on a fresh Debian bookworm machine (root).
# Idempotent and quiet unless failing.
#   image   podman (with runc, which works here where crun does not) and
#           mmdebstrap, which extracts the image's root from the mirror
#   deb     dpkg-dev (dpkg-shlibdeps) and lintian
#   helm    helm v4.3.2, built once from the Go module proxy into
#           $P2O_CACHE/helm-v4.3.2/helm (go must be on PATH)
set -eu
P2O_CACHE=${P2O_CACHE:-${HOME:-/root}/.cache/pg2osync}
HELM_VERSION=v4.3.2
die() { echo "install-tools: $*" >&2; exit 1; }

apt_ensure() {
	local p missing=
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "install-tools: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	for _ in $(seq 60); do
		apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing \
			>/dev/null && return 0
		echo "install-tools: apt busy, retrying" >&2; sleep 10
	done
	die "could not install$missing"
}

for what in "$@"; do
	case $what in
	image) apt_ensure podman runc conmon netavark mmdebstrap ca-certificates ;;
	deb) apt_ensure dpkg-dev lintian fakeroot ;;
	helm)
		bin=$P2O_CACHE/helm-$HELM_VERSION/helm
		[ -x "$bin" ] && continue
		command -v go >/dev/null 2>&1 || PATH=$PATH:/usr/local/go/bin
		command -v go >/dev/null 2>&1 || die "helm is built with go, which is not on PATH"
		mkdir -p "$P2O_CACHE"
		exec 9>"$P2O_CACHE/.helm.lock"
		flock 9
		if [ ! -x "$bin" ]; then
			echo "install-tools: building helm $HELM_VERSION from the Go module proxy (once)" >&2
			log=$(mktemp)
			(cd / && GOBIN=$P2O_CACHE/helm-$HELM_VERSION.part GOFLAGS=-mod=mod \
				go install "helm.sh/helm/v4/cmd/helm@$HELM_VERSION") >"$log" 2>&1 ||
				{ tail -n 30 "$log" >&2; rm -f "$log"; die "go install helm failed"; }
			rm -f "$log"
			rm -rf "$P2O_CACHE/helm-$HELM_VERSION"
			mv "$P2O_CACHE/helm-$HELM_VERSION.part" "$P2O_CACHE/helm-$HELM_VERSION"
		fi
		exec 9>&-
		;;
	*) die "unknown '$what' (image, deb, helm)" ;;
	esac
done
