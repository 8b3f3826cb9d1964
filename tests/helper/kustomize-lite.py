#!/usr/bin/env python3
"""kustomize-lite.py DIR - print, as one YAML stream, the objects of the
plain manifests in DIR the way `kubectl apply -k DIR` would make them, for
the parts deploy/kubernetes uses: its resources, the ConfigMap of each
configMapGenerator file (named as written; kustomize adds a hash suffix to
it and to every reference), the labels with includeSelectors added to
metadata, selectors and pod templates, and the images' newName/newTag.
There is no kubectl or kustomize on the test machine; tests/integration/
153-helm.t checks what this prints with k8s-check.py. Anything else in a
kustomization is refused, so that the file cannot grow past what is checked.
"""
import os
import sys

import yaml

d = sys.argv[1]
with open(os.path.join(d, "kustomization.yaml")) as fh:
    k = yaml.safe_load(fh)
known = {"apiVersion", "kind", "labels", "resources", "configMapGenerator", "images"}
extra = set(k) - known
if extra:
    sys.exit(f"kustomize-lite: {d}/kustomization.yaml uses {sorted(extra)}, which it does not model")
objs = []
for r in k.get("resources", []):
    with open(os.path.join(d, r)) as fh:
        objs += [o for o in yaml.safe_load_all(fh) if o]
for g in k.get("configMapGenerator", []):
    data = {}
    for f in g.get("files", []):
        with open(os.path.join(d, f)) as fh:
            data[os.path.basename(f)] = fh.read()
    objs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": g["name"]}, "data": data})
for lab in k.get("labels", []):
    pairs = lab["pairs"]
    for o in objs:
        o.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
        if not lab.get("includeSelectors"):
            continue
        spec = o.get("spec") or {}
        if o["kind"] == "Deployment":
            spec.setdefault("selector", {}).setdefault("matchLabels", {}).update(pairs)
            spec["template"].setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
        elif o["kind"] == "Service":
            if spec.get("selector") is None:
                spec["selector"] = {}
            spec["selector"].update(pairs)
        elif o["kind"] == "PodDisruptionBudget":
            spec.setdefault("selector", {}).setdefault("matchLabels", {}).update(pairs)
for img in k.get("images", []):
    for o in objs:
        if o["kind"] != "Deployment":
            continue
        for c in o["spec"]["template"]["spec"]["containers"]:
            if c["image"] == img["name"]:
                c["image"] = f"{img.get('newName', img['name'])}:{img.get('newTag', 'latest')}"
yaml.safe_dump_all(objs, sys.stdout, sort_keys=False)
