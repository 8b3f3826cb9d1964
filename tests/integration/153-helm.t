#!/usr/bin/env bash
# The Helm chart (deploy/helm/pg2osync) and the plain manifests
# (deploy/kubernetes), with no cluster: helm (v4.3.2, built from the Go
# module proxy by deploy/install-tools.sh, cached, as kustomize is) lints
# and renders the default values and the three-pipeline example;
# tests/helper/k8s-check.py
# checks the rendered objects - one replica, Recreate, probes on the port
# metrics.bind names, a startup probe of an hour or more, non-root with a
# read-only root and no capability, every *_env variable from a Secret, no
# secret value in any ConfigMap, a PDB and a Service per pipeline, one
# reader per slot or replica id. The chart refuses an inline password, a
# url with one, a loopback metrics.bind and two pipelines on one slot; a
# changed configuration changes the pod's checksum annotation (restart on
# change); its dashboard is examples/grafana-dashboard.json. The plain
# manifests are built by kustomize (v5.8.2, what `kubectl apply -k` runs;
# no kubectl or cluster here) and checked the same way, and a changed file
# is a new ConfigMap name (restart on change).
# Runs without servers (tests/lib.sh wants their variables, so the few
# helpers it would give are here).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
_n=0 _fail=0
ok() { _n=$((_n + 1)); if [ "$1" -eq 0 ]; then echo "ok $_n - ${*:2}"; else echo "not ok $_n - ${*:2}"; _fail=$((_fail + 1)); fi; return "$1"; }
diag() { echo "# $*"; }
done_testing() { echo "1..$_n"; [ "$_fail" -eq 0 ]; }

t0=$SECONDS
"$TOP/deploy/install-tools.sh" helm kustomize > "$T/install.log" 2>&1
ok $? "helm and kustomize are built or cached ($((SECONDS - t0)) s)" || sed 's/^/#   /' "$T/install.log" | tail
HELM=${P2O_CACHE:-$HOME/.cache/pg2osync}/helm-v4.3.2/helm
python3 -c 'import yaml' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check pyyaml > /dev/null 2>&1
CH=$TOP/deploy/helm/pg2osync
THREE=$CH/examples/three-pipelines.yaml
diag "$("$HELM" version --short 2>&1)"

"$HELM" lint --strict "$CH" > "$T/lint1" 2>&1
ok $? "helm lint --strict, default values: $(grep -o '[0-9]* chart(s) linted, [0-9]* chart(s) failed' "$T/lint1")"
[ $? = 0 ] || sed 's/^/#   /' "$T/lint1"
"$HELM" lint --strict "$CH" -f "$THREE" > "$T/lint3" 2>&1
ok $? "helm lint --strict, three pipelines: $(grep -o '[0-9]* chart(s) linted, [0-9]* chart(s) failed' "$T/lint3")"

kcheck() {	# kcheck NAME FILE ARGS... : k8s-check.py as TAP lines
	local name=$1 f=$2; shift 2
	python3 "$TOP/tests/helper/k8s-check.py" "$@" "$f" > "$T/$name.check" 2>&1
	local st=$?
	ok $st "$name: the rendered objects pass every check ($(tail -n 1 "$T/$name.check"), $(grep -c '^ok:' "$T/$name.check") checks)"
	grep '^FAIL' "$T/$name.check" | sed 's/^/#   /'
	[ $st = 0 ] || tail -n 5 "$T/$name.check" | sed 's/^/#   /'
}
"$HELM" template sync "$CH" > "$T/one.yaml" 2> "$T/one.err"
ok $? "helm template, default values" || sed 's/^/#   /' "$T/one.err"
kcheck "one pipeline" "$T/one.yaml" --expect-deployments 1
"$HELM" template sync "$CH" -f "$THREE" > "$T/three.yaml" 2> "$T/three.err"
ok $? "helm template, three pipelines" || sed 's/^/#   /' "$T/three.err"
kcheck "three pipelines" "$T/three.yaml" --expect-deployments 3
n=$(grep -c '^kind: ServiceMonitor$' "$T/three.yaml")
ok $([ "$n" = 3 ]; echo $?) "a ServiceMonitor per pipeline ($n)"
ok $(grep -q 'credentials: {name: pg2osync-billing, key: P2O_METRICS_TOKEN}' "$T/three.yaml"; echo $?) \
	"the ServiceMonitor of a pipeline with metrics.token_env sends the token from the Secret"
python3 - "$T/three.yaml" "$TOP/examples/grafana-dashboard.json" > "$T/dash" 2>&1 <<'PY'
import json, sys, yaml
objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
d = [o for o in objs if o["kind"] == "ConfigMap" and "pg2osync.json" in (o.get("data") or {})]
assert len(d) == 1, f"{len(d)} dashboard ConfigMaps"
assert d[0]["metadata"]["labels"].get("grafana_dashboard") == "1", "no grafana_dashboard label"
assert json.loads(d[0]["data"]["pg2osync.json"]) == json.load(open(sys.argv[2])), "differs from examples/grafana-dashboard.json"
PY
ok $? "the Grafana dashboard ConfigMap is examples/grafana-dashboard.json $(cat "$T/dash")"

# what the chart refuses. Helm's --set replaces a whole list entry, so
# each case is a values file: the default pipeline with one change
vals() {	# vals FILE YAML-LINES-UNDER-config... : the default pipeline, changed
	local f=$1; shift
	{
		echo "pipelines:"
		echo "  - name: main"
		echo "    secretName: ${SECRET-pg2osync-main}"
		echo "    config:"
		echo "      source: {url_env: P2O_SOURCE_URL, slot_name: pg2osync, publication: pg2osync${SRC_EXTRA:-}}"
		echo "      target: {url: 'http://opensearch:9200'${TGT_EXTRA:-}}"
		echo "      sync: {items: {table: public.items, index: ${INDEX:-items}}}"
		echo "      metrics: {bind: '${BIND:-0.0.0.0:9187}'}"
	} > "$f"
}
refuse() {	# refuse DESCRIPTION WORDS-OF-THE-ERROR VALUES-FILE...
	local d=$1 w=$2 st; shift 2
	local args=() f
	for f; do args+=(-f "$f"); done
	"$HELM" template sync "$CH" "${args[@]}" > "$T/r.out" 2>&1
	st=$?
	ok $([ $st != 0 ] && grep -q -- "$w" "$T/r.out"; echo $?) "$d: refused ($(grep -o "$w[^\"]*" "$T/r.out" | head -n 1 | cut -c1-90))"
	[ $st != 0 ] || sed 's/^/#   /' "$T/r.out" | head -n 5
	if grep -q 'hunter2' "$T/r.out"; then ok 1 "and the refusal does not print the secret"; fi
}
vals "$T/base.yaml"
"$HELM" template sync "$CH" -f "$T/base.yaml" > "$T/base.out" 2>&1
ok $? "the values file the refusals start from renders" || sed 's/^/#   /' "$T/base.out" | head
TGT_EXTRA=", username: u, password: hunter2" vals "$T/v1.yaml"
refuse "an inline target.password" "target.password would put" "$T/v1.yaml"
SRC_EXTRA=", url: 'postgres://u:hunter2@db/app'" vals "$T/v2.yaml"
sed -i 's/url_env: P2O_SOURCE_URL, //' "$T/v2.yaml"
refuse "an inline source.url" "source.url would put" "$T/v2.yaml"
BIND=127.0.0.1:9187 vals "$T/v3.yaml"
refuse "a loopback metrics.bind" "is loopback" "$T/v3.yaml"
SECRET='' vals "$T/v4.yaml"
refuse "variables without a Secret" "secretName must name" "$T/v4.yaml"
python3 - "$THREE" > "$T/v5.yaml" <<'PY'
import sys, yaml
v = yaml.safe_load(open(sys.argv[1]))
v["pipelines"][1]["config"]["source"]["slot_name"] = "shop"
v["pipelines"][1]["secretName"] = "pg2osync-shop"
yaml.safe_dump(v, sys.stdout)
PY
refuse "two pipelines on one slot of one database" "one reader each" "$T/v5.yaml"

# restart on change: the annotation follows the configuration, and only it
sum() { grep -m1 'checksum/config' "$1" | awk '{print $2}'; }
INDEX=items_v2 vals "$T/changed.yaml"
"$HELM" template sync "$CH" -f "$T/changed.yaml" > "$T/changed.out" 2>&1
"$HELM" template sync "$CH" -f "$T/base.yaml" --set image.tag=9.9.9 > "$T/same.out" 2>&1
a=$(sum "$T/base.out") b=$(sum "$T/changed.out") c=$(sum "$T/same.out")
ok $([ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] && [ "$a" = "$c" ]; echo $?) \
	"a changed configuration changes checksum/config, a changed image does not (${a:0:8} ${b:0:8} ${c:0:8})"

# the plain manifests, as kubectl apply -k builds them
KUST=${P2O_CACHE:-$HOME/.cache/pg2osync}/kustomize-v5.8.2/kustomize
"$KUST" build "$TOP/deploy/kubernetes" > "$T/plain.yaml" 2> "$T/plain.err"
ok $? "kustomize build deploy/kubernetes" || sed 's/^/#   /' "$T/plain.err"
kcheck "plain manifests" "$T/plain.yaml" --expect-deployments 1
# restart on change: the generated ConfigMap's name carries a hash of the
# file, and the Deployment mounts it by that name
cp -r "$TOP/deploy/kubernetes" "$T/k2"
sed -i 's/index: items$/index: items_v2/' "$T/k2/pg2osync.yaml"
"$KUST" build "$T/k2" > "$T/plain2.yaml" 2>&1
cmname() { awk '/^kind: ConfigMap/ { c = 1 } c && /^  name:/ { print $2; exit }' "$1"; }
mounted() { grep -A1 'configMap:' "$1" | awk '/name:/ { print $2; exit }'; }
a=$(cmname "$T/plain.yaml") b=$(cmname "$T/plain2.yaml")
ok $([ -n "$a" ] && [ "$a" != "$b" ] && [ "$(mounted "$T/plain.yaml")" = "$a" ] && [ "$(mounted "$T/plain2.yaml")" = "$b" ]; echo $?) \
	"a changed pg2osync.yaml is a new ConfigMap name the Deployment mounts ($a -> $b)"
diag "153 took $((SECONDS - t0)) s"
done_testing
