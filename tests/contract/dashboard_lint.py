#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Holds dashboards/fragd.json to the rules of Grafana's dashboard-linter.

The linter itself is not packaged for Debian and its module cannot be fetched here, so
its rules are checked by this script (the `dashboard` test of `make test`, no root):

  template-datasource   a variable `datasource` of type datasource over prometheus
  template-job          a `job` variable: query type on ${datasource}, multi, "All" with
  template-instance     allValue ".+", refreshed on time range change; the same for `instance`
  panel-datasource      every panel and target on ${datasource}
  panel-title-description  every panel has a title and a description
  panel-units           every graph, stat and heatmap panel has a unit
  target-job, target-instance  every series selector of every query (targets, annotations,
                        variables other than job's own) matches job=~"$job", instance=~"$instance"
  target-rate-interval  rate(), irate() and increase() ranges are [$__rate_interval]
  target-counter-agg    a counter (_total, _count, _sum, _bucket) only inside rate(), irate() or
                        increase(), or in a label_values() lookup
  dashboard-editable    not editable (dashboards are provisioned from this file)

  tests/contract/dashboard_lint.py dashboards/fragd.json [dashboards/.lint]
Prints one line per finding; exit 1 when there is any not excluded. Exclusions come from
the linter's own file (dashboards/.lint): rule -> reason, entries (an annotation's or a
panel's name); an exclusion without a reason, or one that excludes nothing, is a finding.
"""
import json
import re
import sys

COUNTER = re.compile(r"(_total|_count|_sum|_bucket)$")
SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
RANGE_FN = re.compile(r"\b(rate|irate|increase)\s*\(")


def strip_strings(expr):
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)


def calls_enclosing(expr, pos):
    """Names of the function calls whose parentheses enclose position pos."""
    names, depth_stack = [], []
    for m in re.finditer(r"([a-zA-Z_][a-zA-Z0-9_]*)?\s*\(|\)", expr[:pos]):
        if m.group(0) == ")":
            if depth_stack:
                depth_stack.pop()
        else:
            depth_stack.append(m.group(1) or "")
    names.extend(depth_stack)
    return names


def check_expr(where, expr, findings, own_variable=None):
    for m in SELECTOR.finditer(expr):
        name, matchers = m.group(1), m.group(2)
        if name in ("by", "without", "on", "ignoring", "group_left", "group_right"):
            continue
        if own_variable != "job" and 'job=~"$job"' not in matchers:
            findings.append(f'{where}: target-job: {name}{{{matchers}}} lacks job=~"$job"')
        if own_variable not in ("job", "instance") and 'instance=~"$instance"' not in matchers:
            findings.append(f'{where}: target-instance: {name}{{{matchers}}} lacks instance=~"$instance"')
        if COUNTER.search(name):
            enclosing = calls_enclosing(strip_strings(expr), m.start())
            if not any(f in ("rate", "irate", "increase", "label_values") for f in enclosing):
                findings.append(f"{where}: target-counter-agg: counter {name} outside rate/irate/increase")
    for m in RANGE_FN.finditer(expr):
        # The range of this call: the first [...] after it at the same nesting.
        rest = expr[m.end():]
        r = re.search(r"\[([^\]]*)\]", rest)
        if r and r.group(1) != "$__rate_interval":
            findings.append(f"{where}: target-rate-interval: {m.group(1)}(...[{r.group(1)}]) should use [$__rate_interval]")


def main():
    path = sys.argv[1]
    d = json.load(open(path))
    exclusions = {}
    if len(sys.argv) > 2:
        import yaml
        exclusions = (yaml.safe_load(open(sys.argv[2])) or {}).get("exclusions", {}) or {}
    findings = []
    if d.get("editable", True):
        findings.append("dashboard-editable: the dashboard is editable (set \"editable\": false)")
    variables = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        findings.append("template-datasource: no variable `datasource` of type datasource over prometheus")
    for name, label in (("job", "Job"), ("instance", "Instance")):
        v = variables.get(name)
        if not v:
            findings.append(f"template-{name}: no `{name}` variable")
            continue
        want = {"type": "query", "label": label, "multi": True, "includeAll": True, "allValue": ".+", "refresh": 2}
        for k, val in want.items():
            if v.get(k) != val:
                findings.append(f"template-{name}: {k} is {v.get(k)!r}, want {val!r}")
        if v.get("datasource", {}).get("uid") != "${datasource}":
            findings.append(f"template-{name}: datasource is not ${{datasource}}")
    for name, v in variables.items():
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query", "") if isinstance(q, dict) else (q or "")
            check_expr(f"variable {name}", q, findings, own_variable=name)
    for a in d.get("annotations", {}).get("list", []):
        if a.get("expr"):
            check_expr(f'annotation "{a.get("name")}"', a["expr"], findings)
    for p in d.get("panels", []):
        if p.get("type") == "row":
            continue
        title = p.get("title", "")
        where = f'panel "{title}"'
        if not title or not p.get("description"):
            findings.append(f"{where}: panel-title-description: a title and a description are required")
        if p.get("datasource", {}).get("uid") != "${datasource}":
            findings.append(f"{where}: panel-datasource: not ${{datasource}}")
        if p.get("type") in ("timeseries", "stat", "heatmap", "gauge", "bargauge"):
            if not p.get("fieldConfig", {}).get("defaults", {}).get("unit"):
                findings.append(f"{where}: panel-units: no unit (fieldConfig.defaults.unit)")
        for t in p.get("targets", []):
            if t.get("datasource", {}).get("uid") != "${datasource}":
                findings.append(f"{where} target {t.get('refId')}: panel-datasource: not ${{datasource}}")
            check_expr(f"{where} target {t.get('refId')}", t.get("expr", ""), findings)
    # Exclusions: rule "target-counter-agg-rule" covers findings "target-counter-agg" of the
    # entries named.
    left, justified = [], []
    used = set()
    for f in findings:
        hit = None
        for rule, ex in exclusions.items():
            short = rule[:-len("-rule")] if rule.endswith("-rule") else rule
            if f": {short}:" not in f or not (ex or {}).get("reason"):
                continue
            for e in (ex or {}).get("entries", []) or []:
                name = e.get("annotation") or e.get("panel")
                kind = "annotation" if e.get("annotation") else "panel"
                if name and f.startswith(f'{kind} "{name}"'):
                    hit = rule
        if hit:
            justified.append(f)
            used.add(hit)
        else:
            left.append(f)
    for rule, ex in exclusions.items():
        if not (ex or {}).get("reason"):
            left.append(f"exclusion {rule}: no reason given")
        elif rule not in used:
            left.append(f"exclusion {rule}: excludes nothing (remove it)")
    for f in justified:
        print("justified: " + f)
    for f in left:
        print(f)
    print(f"{path}: {len(left)} finding(s), {len(justified)} justified in the exclusions file")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
