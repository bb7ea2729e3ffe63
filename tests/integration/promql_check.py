#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the PromQL of fragd's Grafana dashboard and Prometheus rules.

Every expression (panel targets, annotations, template variables of the
dashboard; every rule as loaded by Prometheus, from /api/v1/rules) must name
only metrics the given fragd scrape has samples of (or recording rules of the
rules file, or Prometheus' own `up`). Unless --names-only, each expression is
evaluated through Prometheus' /api/v1/query: it must parse, and the
dashboard's must return at least one finite value.

Grafana variables are substituted as Grafana would: $instance and $order by
--var NAME=VALUE (already regex-escaped, as for a multi-value variable),
$__rate_interval and the other interval variables by fixed durations.
Exit status 0 when everything passes, 1 with every failure listed otherwise.
"""
import argparse
import json
import math
import re
import sys
import urllib.parse
import urllib.request

BUILTINS = {"__rate_interval": "1m", "__interval": "15s", "__interval_ms": "15000", "__range": "5m",
            "__range_s": "300", "__range_ms": "300000"}
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset",
            "bool", "inf", "nan", "atan2", "start", "end"}
PROMETHEUS_OWN = {"up"}  # made by Prometheus for every target, not by fragd


def dashboard_exprs(path):
    """(where, expr, kind) of every PromQL expression in a Grafana dashboard."""
    d = json.load(open(path))
    out = []

    def walk(panels):
        for p in panels:
            walk(p.get("panels", []))
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f'panel "{p.get("title")}" target {t.get("refId")}', t["expr"], "panel"))
            if p.get("type") != "row" and not p.get("description"):
                out.append((f'panel "{p.get("title")}"', "", "no-description"))

    walk(d.get("panels", []))
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            out.append((f'annotation "{a.get("name")}"', a["expr"], "panel"))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", q, re.S)
        if m:
            out.append((f'variable "{v["name"]}" (label {m.group(2)})', m.group(1), "panel"))
            continue
        m = re.fullmatch(r"\s*query_result\((.*)\)\s*", q, re.S)
        if m:
            out.append((f'variable "{v["name"]}"', m.group(1), "panel"))
            continue
        out.append((f'variable "{v["name"]}"', q, "unsupported-variable"))
    return d, out


def substitute(expr, variables):
    """Replaces $name, ${name} and [[name]] as Grafana does; unknown names are errors."""
    unknown = []

    def rep(m):
        name = m.group(1) or m.group(2) or m.group(3)
        name = name.split(":")[0]  # ${var:format}
        if name in variables:
            return variables[name]
        if name in BUILTINS:
            return BUILTINS[name]
        unknown.append(name)
        return m.group(0)

    out = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_:]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\[\[([A-Za-z_][A-Za-z0-9_]*)\]\]", rep, expr)
    return out, unknown


def metric_names(expr):
    """Metric names a PromQL expression selects (a tokenizer, not a full parser)."""
    names = set(re.findall(r'__name__\s*=\s*"([^"]*)"', expr))
    s = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)  # strings
    s = re.sub(r"\{[^}]*\}", " ", s)                        # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)                       # ranges and subqueries
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"(?<![A-Za-z0-9_:])\d+(\.\d+)?([eE][+-]?\d+)?(ms|s|m|h|d|w|y)?(?![A-Za-z0-9_:])", " ", s)
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        tok = m.group(0)
        if tok.lower() in KEYWORDS:
            continue
        if re.match(r"\s*\(", s[m.end():]):
            continue  # a function or aggregation
        names.add(tok)
    return names


def scrape_names(path):
    """-> the sample names of a saved scrape (python3-prometheus-client's parser), and the name
    of each histogram family: the series of its native histogram where Prometheus ingests those."""
    from prometheus_client.parser import text_string_to_metric_families
    with open(path) as f:
        fams = list(text_string_to_metric_families(f.read()))
    return {s.name for fam in fams for s in fam.samples} | {fam.name for fam in fams if fam.type == "histogram"}


def github_slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def query(prom, expr):
    url = prom.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # 400 carries the parse error as JSON
        try:
            return json.load(e)
        except ValueError:
            return {"status": "error", "error": f"HTTP {e.code}"}


def finite_values(res):
    data = res.get("data", {})
    rtype, result = data.get("resultType"), data.get("result", [])
    if rtype == "vector":
        vals = [s["value"][1] for s in result]
    elif rtype == "matrix":
        vals = [v[1] for s in result for v in s["values"]]
    elif rtype == "scalar":
        vals = [result[1]]
    else:
        vals = []
    return len(result) if rtype != "scalar" else 1, sum(1 for v in vals if math.isfinite(float(v)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dashboard", required=True)
    ap.add_argument("--rules-json", required=True, help="Prometheus' /api/v1/rules answer, saved")
    ap.add_argument("--scrape", required=True, help="a fragd /metrics scrape")
    ap.add_argument("--runbooks", help="docs/runbooks.md, whose headings the alerts' runbook_url anchors must name")
    ap.add_argument("--prom", help="Prometheus base URL (without it: names only)")
    ap.add_argument("--var", action="append", default=[], help="NAME=VALUE for a dashboard variable")
    ap.add_argument("--names-only", action="store_true")
    ap.add_argument("--contract", help="tests/contract/metrics.txt: the families fragd can export")
    ap.add_argument("--kernel-lacks", action="append", default=[],
                    help="a listed family this kernel cannot give (fragd_cma_* without CMA): expressions that "
                         "need it must parse, but need not return data")
    a = ap.parse_args()

    variables = dict(v.split("=", 1) for v in a.var)
    exported = scrape_names(a.scrape)
    lacking = set()
    if a.kernel_lacks:
        if not a.contract:
            ap.error("--kernel-lacks needs --contract")
        listed = {line.split()[0] for line in open(a.contract) if line.strip() and not line.startswith("#")}
        for fam in a.kernel_lacks:
            if fam not in listed:
                ap.error(f"--kernel-lacks {fam}: not a family of {a.contract}")
            # A histogram's or counter's sample names, as a query names them.
            lacking |= {fam, fam + "_bucket", fam + "_count", fam + "_sum", fam + "_total"}
    rules = [r for g in json.load(open(a.rules_json))["data"]["groups"] for r in g["rules"]]
    recorded = {r["name"] for r in rules if r["type"] == "recording"}
    _, dash = dashboard_exprs(a.dashboard)
    failures = []
    checked = 0

    items = [(w, e, k) for w, e, k in dash]
    items += [(f'{r["type"]} rule "{r["name"]}"', r["query"], "rule") for r in rules]
    for where, expr, kind in items:
        if kind == "no-description":
            failures.append(f"{where}: no description (every panel needs one a new operator understands)")
            continue
        if kind == "unsupported-variable":
            failures.append(f"{where}: query '{expr}' is neither label_values(...) nor query_result(...)")
            continue
        text, unknown = substitute(expr, variables)
        if unknown:
            failures.append(f"{where}: unknown template variable(s) {sorted(set(unknown))} in: {expr}")
            continue
        names = metric_names(text)
        bad = sorted(n for n in names if n not in exported and n not in recorded and n not in PROMETHEUS_OWN
                     and n not in lacking)
        needs_lacking = any(n in lacking and n not in exported for n in names)
        if bad:
            failures.append(f"{where}: names metric(s) fragd does not export: {', '.join(bad)} (in: {text})")
        checked += 1
        if a.names_only or not a.prom:
            continue
        res = query(a.prom, text)
        if res.get("status") != "success":
            failures.append(f"{where}: Prometheus rejected the query: {res.get('error')} (query: {text})")
            continue
        if kind == "panel" and needs_lacking:
            print(f"ok  {where}: parses; its families are absent on this kernel, no data expected")
        elif kind == "panel":
            series, finite = finite_values(res)
            if series == 0:
                failures.append(f"{where}: returned no data (query: {text})")
            elif finite == 0:
                failures.append(f"{where}: returned {series} series, none with a finite value (query: {text})")
            else:
                print(f"ok  {where}: {series} series, {finite} finite")
        else:
            print(f"ok  {where}: parses ({len(res['data'].get('result', []))} series now)")

    if a.runbooks:
        slugs = {github_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", open(a.runbooks).read(), re.M)}
        for r in rules:
            if r["type"] != "alerting":
                continue
            url = r.get("annotations", {}).get("runbook_url", "")
            want = "runbook-" + r["name"].lower()
            if not url.endswith("docs/runbooks.md#" + want):
                failures.append(f'alert {r["name"]}: runbook_url "{url}" is not docs/runbooks.md#{want}')
            elif want not in slugs:
                failures.append(f'alert {r["name"]}: docs/runbooks.md has no heading with anchor #{want}')
            for key in ("summary", "description"):
                if not r.get("annotations", {}).get(key):
                    failures.append(f'alert {r["name"]}: no {key} annotation')

    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    print(f"{checked} expressions checked, {len(failures)} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
