# shellcheck shell=bash
# deploy/image/podman.sh - podman as it runs on a machine like the test
# machine, sourced by build.sh and the image test, never run.
#
# p2o_podman_init DIR gives podman a store of its own under DIR (so a build
# or a test never touches the machine's images, and two of them never share
# one), and then p2o_podman ARGS... runs it there. The flags are what this
# kind of host needs: crun refuses its hybrid cgroups (runc does not), there
# is no systemd to manage cgroups, its default ulimits cannot be raised, and
# vfs works on any filesystem DIR sits on (overlay cannot nest in overlay).

p2o_podman_init() {
	P2O_PODMAN_DIR=$1
	mkdir -p "$P2O_PODMAN_DIR/root" "$P2O_PODMAN_DIR/run"
	cat >"$P2O_PODMAN_DIR/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
	export CONTAINERS_CONF=$P2O_PODMAN_DIR/containers.conf
}

p2o_podman() {
	podman --root "$P2O_PODMAN_DIR/root" --runroot "$P2O_PODMAN_DIR/run" \
		--storage-driver vfs --runtime runc --cgroup-manager cgroupfs \
		--tmpdir "$P2O_PODMAN_DIR/tmp" "$@"
}

# p2o_podman_release: every container and image of the store removed, the
# store with them (vfs layers are plain directories)
p2o_podman_release() {
	[ -n "${P2O_PODMAN_DIR:-}" ] || return 0
	p2o_podman rm -a -f -t 0 >/dev/null 2>&1 || true
	p2o_podman system reset -f >/dev/null 2>&1 || true
	rm -rf "$P2O_PODMAN_DIR"
}
