#!/usr/bin/env bash
# deploy/install-tools.sh WHAT... - install what building or testing a
# deployment form needs on a fresh Debian bookworm machine (root).
# Idempotent and quiet unless failing.
#   image   podman (with runc, which works here where crun does not) and
#           mmdebstrap, which extracts the image's root from the mirror
#   deb     dpkg-dev (dpkg-shlibdeps) and lintian
#   helm    helm v4.3.2, built once from the Go module proxy into
#           $P2O_CACHE/helm-v4.3.2/helm (go must be on PATH)
#   kustomize  kustomize v5.8.2 (what kubectl apply -k runs), the same way,
#           into $P2O_CACHE/kustomize-v5.8.2/kustomize (v5.8.3 needs go 1.27)
set -eu
P2O_CACHE=${P2O_CACHE:-${HOME:-/root}/.cache/pg2osync}
HELM_VERSION=v4.3.2
KUSTOMIZE_VERSION=v5.8.2
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
		apt-get update -qq && apt-get install -y -qq $missing \
			>/dev/null && return 0
		echo "install-tools: apt busy, retrying" >&2; sleep 10
	done
	die "could not install$missing"
}

# go_tool NAME VERSION PACKAGE: NAME built once by go install into
# $P2O_CACHE/NAME-VERSION/NAME, under a lock (two lanes may ask at once)
go_tool() {
	local name=$1 version=$2 pkg=$3 dir bin log
	dir=$P2O_CACHE/$name-$version
	bin=$dir/$name
	[ -x "$bin" ] && return 0
	command -v go >/dev/null 2>&1 || PATH=$PATH:/usr/local/go/bin
	command -v go >/dev/null 2>&1 || die "$name is built with go, which is not on PATH"
	mkdir -p "$P2O_CACHE"
	(
		flock 9
		[ -x "$bin" ] && exit 0
		echo "install-tools: building $name $version from the Go module proxy (once)" >&2
		log=$(mktemp)
		(cd / && GOBIN=$dir.part GOFLAGS=-mod=mod go install "$pkg@$version") >"$log" 2>&1 ||
			{ tail -n 30 "$log" >&2; rm -f "$log"; die "go install $pkg@$version failed"; }
		rm -f "$log"
		rm -rf "$dir"
		mv "$dir.part" "$dir"
	) 9>"$P2O_CACHE/.$name.lock" || exit 1
}

for what in "$@"; do
	case $what in
	image) apt_ensure podman runc conmon netavark mmdebstrap ca-certificates ;;
	deb) apt_ensure dpkg-dev lintian fakeroot ;;
	helm) go_tool helm "$HELM_VERSION" helm.sh/helm/v4/cmd/helm ;;
	kustomize) go_tool kustomize "$KUSTOMIZE_VERSION" sigs.k8s.io/kustomize/kustomize/v5 ;;
	*) die "unknown '$what' (image, deb, helm, kustomize)" ;;
	esac
done
