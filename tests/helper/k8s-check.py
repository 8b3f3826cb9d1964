#!/usr/bin/env python3
"""k8s-check.py FILE.yaml... - check the Kubernetes objects pg2osync's chart
renders (helm template) or its plain manifests hold, and print one TAP-ready
line per finding: "ok: ..." or "FAIL: ...". Exits 1 when anything failed.

Per Deployment: one replica, strategy Recreate; the liveness probe on
/healthz, the readiness and startup probes on /ready, all on the port of the
metrics.bind of the pg2osync.yaml the pod mounts (from the ConfigMap of the
same objects), a startup probe that waits at least an hour; the container
runs as non-root with a read-only root and every capability dropped; every
variable the configuration names (*_env) comes from a Secret, and no
container carries a literal value for one. Per ConfigMap: no secret value -
no url with a password, no password/token/api_key value key, none of the
--secret words given. Per pipeline: a PodDisruptionBudget and a Service
selecting its pod.

--expect-deployments N  how many Deployments there must be
--secret WORD           a value that must appear in no ConfigMap
"""
import argparse
import re
import sys

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("files", nargs="+")
ap.add_argument("--expect-deployments", type=int)
ap.add_argument("--secret", action="append", default=[])
args = ap.parse_args()

objs = []
for f in args.files:
    with open(f) as fh:
        objs += [d for d in yaml.safe_load_all(fh) if d]

fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1


def kind(k):
    return [o for o in objs if o.get("kind") == k]


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


configmaps = {o["metadata"]["name"]: o for o in kind("ConfigMap")}
deps = kind("Deployment")
if args.expect_deployments is not None:
    check(len(deps) == args.expect_deployments,
          f"{len(deps)} Deployments (expected {args.expect_deployments})")

SECRET_URL = re.compile(r"://[^/@\s:]+:[^/@\s]+@")
SECRET_KEY = re.compile(r"^\s*(password|token|api_key|secret)\s*:", re.M)
for name, cm in configmaps.items():
    for key, text in (cm.get("data") or {}).items():
        bad = []
        if SECRET_URL.search(text):
            bad.append("a url with a password")
        if SECRET_KEY.search(text):
            bad.append("an inline secret key")
        bad += [f"the secret '{w}'" for w in args.secret if w in text]
        check(not bad, f"ConfigMap {name}/{key} holds no secret value" +
              (f" (holds {', '.join(bad)})" if bad else ""))

readers = {}
for d in deps:
    name = d["metadata"]["name"]
    spec = d["spec"]
    check(spec.get("replicas") == 1, f"{name}: one replica ({spec.get('replicas')})")
    check((spec.get("strategy") or {}).get("type") == "Recreate",
          f"{name}: strategy Recreate ({spec.get('strategy')})")
    pod = spec["template"]["spec"]
    labels = spec["template"].get("metadata", {}).get("labels", {})
    psc = pod.get("securityContext") or {}
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 10001,
          f"{name}: runs as non-root 10001")
    cms = [v["configMap"]["name"] for v in pod.get("volumes", []) if "configMap" in v]
    cfg = None
    for cm in cms:
        if cm in configmaps and "pg2osync.yaml" in (configmaps[cm].get("data") or {}):
            cfg = yaml.safe_load(configmaps[cm]["data"]["pg2osync.yaml"])
    check(cfg is not None, f"{name}: mounts a ConfigMap holding pg2osync.yaml ({cms})")
    if cfg is None:
        continue
    bind = (cfg.get("metrics") or {}).get("bind", "")
    port = int(bind.rsplit(":", 1)[1]) if ":" in bind else None
    src = cfg.get("source") or {}
    reader = ("server_id", src["server_id"]) if "server_id" in src else ("slot", src.get("slot_name", "pg2osync"))
    env_names = []
    for sec in ("source", "target", "metrics", "api"):
        for k, v in (cfg.get(sec) or {}).items():
            if k.endswith("_env"):
                env_names.append(v)
    readers.setdefault(reader, []).append(name)
    for c in pod["containers"]:
        cn = f"{name}/{c['name']}"
        probes = {p: c.get(p) or {} for p in ("livenessProbe", "readinessProbe", "startupProbe")}
        want = {"livenessProbe": "/healthz", "readinessProbe": "/ready", "startupProbe": "/ready"}
        for p, path in want.items():
            g = probes[p].get("httpGet") or {}
            check(g.get("path") == path and g.get("port") == port,
                  f"{cn}: {p} GET {g.get('path')} on {g.get('port')} (metrics.bind {bind})")
        sp = probes["startupProbe"]
        budget = sp.get("periodSeconds", 10) * sp.get("failureThreshold", 3)
        check(budget >= 3600, f"{cn}: the startup probe waits {budget} s for a first start (at least 3600)")
        ports = [p.get("containerPort") for p in c.get("ports", [])]
        check(port in ports, f"{cn}: exposes the metrics port {port} ({ports})")
        sc = c.get("securityContext") or {}
        check(sc.get("readOnlyRootFilesystem") is True, f"{cn}: read-only root filesystem")
        check(sc.get("allowPrivilegeEscalation") is False, f"{cn}: no privilege escalation")
        check((sc.get("capabilities") or {}).get("drop") == ["ALL"] and not (sc.get("capabilities") or {}).get("add"),
              f"{cn}: every capability dropped, none added")
        env = {e["name"]: e for e in c.get("env", [])}
        for n in env_names:
            e = env.get(n, {})
            ref = (e.get("valueFrom") or {}).get("secretKeyRef")
            check(ref is not None and "value" not in e,
                  f"{cn}: {n} (named by the configuration) comes from Secret {ref and ref.get('name')}")
        lit = [n for n, e in env.items() if "value" in e and re.search(r"(URL|PASSWORD|TOKEN|KEY)", n)]
        check(not lit, f"{cn}: no literal secret in env {lit if lit else ''}".rstrip())
    pdbs = [p for p in kind("PodDisruptionBudget") if matches(p["spec"]["selector"].get("matchLabels"), labels)]
    check(len(pdbs) == 1, f"{name}: one PodDisruptionBudget selects its pod ({len(pdbs)})")
    svcs = [s for s in kind("Service") if matches(s["spec"].get("selector"), labels)]
    check(len(svcs) == 1 and any(p.get("port") == port for p in svcs[0]["spec"]["ports"]) if svcs else False,
          f"{name}: a Service selects it on the metrics port")
    ann = spec["template"].get("metadata", {}).get("annotations", {})
    if "checksum/config" in ann:
        check(re.fullmatch(r"[0-9a-f]{64}", ann["checksum/config"]) is not None, f"{name}: checksum/config annotation")

for r, names in readers.items():
    check(len(names) == 1, f"{r[0]} {r[1]} is read by one Deployment ({', '.join(names)})")

print(f"{fails} failed")
sys.exit(1 if fails else 0)
