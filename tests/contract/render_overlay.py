#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders configs/kubernetes/act as kustomize would, for the linters, without kustomize: the
base's resources with the overlay's strategic merge patch applied to the DaemonSet (maps merged
key by key; containers merged by name, volumeMounts by mountPath, volumes by name, as the
Kubernetes API's patch strategy for those lists says).

  tests/contract/render_overlay.py BASE_YAML PATCH_YAML > rendered.yaml
"""
import sys

import yaml

MERGE_KEYS = {"containers": "name", "volumeMounts": "mountPath", "volumes": "name", "initContainers": "name"}


def merge(base, patch, key=None):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = merge(base[k], v, k) if k in base else v
        return out
    if isinstance(base, list) and isinstance(patch, list) and key in MERGE_KEYS:
        mk = MERGE_KEYS[key]
        out = [dict(x) for x in base]
        for item in patch:
            for i, x in enumerate(out):
                if x.get(mk) == item.get(mk):
                    out[i] = merge(x, item)
                    break
            else:
                out.append(item)
        return out
    return patch


def main():
    docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
    patch = yaml.safe_load(open(sys.argv[2]))
    hit = False
    for i, d in enumerate(docs):
        if d["kind"] == patch["kind"] and d["metadata"]["name"] == patch["metadata"]["name"]:
            docs[i] = merge(d, patch)
            hit = True
    if not hit:
        sys.exit(f"{sys.argv[2]} patches {patch['kind']} {patch['metadata']['name']}, which {sys.argv[1]} lacks")
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False, explicit_start=True)


if __name__ == "__main__":
    main()
