#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders fragd's kustomizations as kustomize would, for the tests, without kustomize (which no
Debian package ships):

  tests/contract/render_overlay.py DIR > rendered.yaml

DIR holds a kustomization (configs/kubernetes/act, or the one `make image` writes beside the image,
scripts/build-image.sh): its resources (files, or directories holding a kustomization, rendered
first), then its patches (strategic merge, by path: maps merged key by key; containers merged by
name, volumeMounts by mountPath, volumes by name, as the Kubernetes API's patch strategy for those
lists says), then its images entries (name, newName, newTag, digest: a container or init container
whose image has that name gets the new name, tag or digest, as kustomize's image transformer sets
them). Any other field is an error naming the file and the field.
"""
import os
import sys

import yaml

MERGE_KEYS = {"containers": "name", "volumeMounts": "mountPath", "volumes": "name", "initContainers": "name"}
KUSTOMIZATION_FIELDS = {"apiVersion", "kind", "resources", "patches", "patchesStrategicMerge", "images"}
IMAGE_FIELDS = {"name", "newName", "newTag", "digest"}


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


def apply_patch(docs, patch, patch_name, base_name):
    hit = False
    for i, d in enumerate(docs):
        if d["kind"] == patch["kind"] and d["metadata"]["name"] == patch["metadata"]["name"]:
            docs[i] = merge(d, patch)
            hit = True
    if not hit:
        sys.exit(f"{patch_name} patches {patch['kind']} {patch['metadata']['name']}, which {base_name} lacks")
    return docs


def split_image(image):
    """name, tag, digest of an image reference (a registry's port is part of the name)."""
    name, _, digest = image.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = ""
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
    return name, tag, digest


def set_image(image, entry):
    """kustomize's image transformer: a new tag or digest replaces both the old tag and digest."""
    name, tag, digest = split_image(image)
    name = entry.get("newName") or name
    new_tag, new_digest = str(entry.get("newTag") or ""), entry.get("digest") or ""
    if new_tag or new_digest:
        tag, digest = new_tag, new_digest
    return name + (":" + tag if tag else "") + ("@" + digest if digest else "")


def pod_specs(doc):
    spec = doc.get("spec") or {}
    if doc.get("kind") == "Pod":
        yield spec
    template = spec.get("template") or spec.get("jobTemplate", {}).get("spec", {}).get("template")
    if template:
        yield template.get("spec") or {}


def apply_images(docs, entries, where):
    for entry in entries:
        unknown = set(entry) - IMAGE_FIELDS
        if unknown or "name" not in entry:
            sys.exit(f"{where}: images entry {entry}: " + (f"unknown field {sorted(unknown)[0]}" if unknown else "no name")
                     + f" (this renderer knows {', '.join(sorted(IMAGE_FIELDS))})")
        for doc in docs:
            for spec in pod_specs(doc):
                for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
                    if "image" in c and split_image(c["image"])[0] == entry["name"]:
                        c["image"] = set_image(c["image"], entry)
    return docs


def render_dir(path):
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        kfile = os.path.join(path, name)
        if os.path.isfile(kfile):
            break
    else:
        sys.exit(f"{path} holds no kustomization.yaml")
    with open(kfile) as f:
        k = yaml.safe_load(f) or {}
    unknown = set(k) - KUSTOMIZATION_FIELDS
    if unknown:
        sys.exit(f"{kfile}: field {sorted(unknown)[0]} is not one this renderer knows "
                 f"({', '.join(sorted(KUSTOMIZATION_FIELDS))}): render with kubectl kustomize instead")
    docs = []
    for res in k.get("resources") or []:
        if os.path.isabs(res):
            sys.exit(f"{kfile}: resource {res} is an absolute path, which kustomize refuses: name it relative to {path}")
        full = os.path.join(path, res)
        if os.path.isdir(full):
            docs += render_dir(full)
        elif os.path.isfile(full):
            with open(full) as f:
                docs += [d for d in yaml.safe_load_all(f) if d]
        else:
            sys.exit(f"{kfile}: resource {res} is neither a file nor a directory ({full})")
    patches = list(k.get("patchesStrategicMerge") or [])
    for p in k.get("patches") or []:
        if set(p) != {"path"}:
            sys.exit(f"{kfile}: patch {p}: only a strategic merge patch by path is known here")
        patches.append(p["path"])
    for p in patches:
        full = os.path.join(path, p)
        with open(full) as f:
            docs = apply_patch(docs, yaml.safe_load(f), full, kfile)
    return apply_images(docs, k.get("images") or [], kfile)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: render_overlay.py KUSTOMIZATION_DIR")
    yaml.safe_dump_all(render_dir(sys.argv[1]), sys.stdout, sort_keys=False, explicit_start=True)


if __name__ == "__main__":
    main()
