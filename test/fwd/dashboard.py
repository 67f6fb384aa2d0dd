#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Grafana dashboard (docs/grafana/xdp-fwd.json) against what xdp-fwd exposes.

  dashboard.py DASHBOARD.json LIST-COMMAND...

LIST-COMMAND prints the metric families xdp-fwd's text can hold, "NAME TYPE" a line
(fwd_metrics_names --list, from metrics.c itself). Checks: the dashboard's structure (unique
panel ids, every panel with PromQL targets and a grid position, a Prometheus datasource variable
that every panel and query variable uses, instance and interface variables), and that every
metric name in every expression and variable query is one xdp-fwd exposes. Then the checker
itself: a panel given an unknown metric, or an id given twice, must be refused.
"""
import copy
import json
import re
import subprocess
import sys

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
            "and", "or", "unless", "inf", "nan", "atan2"}


def metric_names(expr):
    """The metric names of a PromQL expression (Grafana's $variables allowed)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    e = re.sub(r"\{[^{}]*\}", " ", e)  # label matchers (strings already emptied)
    e = re.sub(r"\[[^\]]*\]", " ", e)  # ranges and subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\$\{[^}]*\}|\$\w+", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w.:])([A-Za-z_:][\w:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def variable_expr(query):
    """The PromQL inside a query variable: label_values(EXPR, label), query_result(EXPR), ..."""
    q = query.get("query", "") if isinstance(query, dict) else query
    m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", q, re.S)
    if m:
        return m.group(1)
    m = re.fullmatch(r"\s*(?:query_result|label_names|metrics)\((.*)\)\s*", q, re.S)
    return m.group(1) if m else q


def all_panels(panels):
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))


def check(dash, exposed):
    """The problems found in dash, [] when none."""
    errs = []
    for key in ("title", "uid", "schemaVersion", "panels", "templating"):
        if key not in dash:
            errs.append(f"no '{key}'")
    variables = dash.get("templating", {}).get("list", [])
    ds = [v for v in variables if v.get("type") == "datasource" and v.get("query") == "prometheus"]
    if not ds:
        errs.append("no Prometheus datasource variable (type datasource, query prometheus)")
        return errs
    ds_refs = {"$" + ds[0]["name"], "${" + ds[0]["name"] + "}"}

    def uses_ds(obj, what):
        d = obj.get("datasource")
        uid = d.get("uid") if isinstance(d, dict) else d
        if uid not in ds_refs:
            errs.append(f"{what}: datasource {d!r}, not the variable {sorted(ds_refs)[0]}")

    names = {v.get("name") for v in variables}
    for need in ("instance", "interface"):
        if need not in names:
            errs.append(f"no '{need}' variable")
    exprs = []
    for v in variables:
        if v.get("type") == "query":
            uses_ds(v, f"variable {v.get('name')}")
            exprs.append((f"variable {v.get('name')}", variable_expr(v.get("query", ""))))
    ids = {}
    for p in all_panels(dash.get("panels", [])):
        what = f"panel {p.get('id')} '{p.get('title')}'"
        if p.get("id") in ids:
            errs.append(f"{what}: id {p.get('id')} also {ids[p.get('id')]}")
        ids[p.get("id")] = what
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24:
            errs.append(f"{what}: gridPos {g}")
        if p.get("type") == "row":
            continue
        uses_ds(p, what)
        targets = p.get("targets", [])
        if not targets:
            errs.append(f"{what}: no targets")
        if len({t.get("refId") for t in targets}) != len(targets):
            errs.append(f"{what}: refIds not unique")
        for t in targets:
            if not t.get("expr"):
                errs.append(f"{what}: target {t.get('refId')} without expr")
                continue
            if "datasource" in t:
                uses_ds(t, f"{what} target {t.get('refId')}")
            exprs.append((f"{what} target {t.get('refId')}", t["expr"]))
    used = set()
    for what, expr in exprs:
        found = metric_names(expr)
        if not found:
            errs.append(f"{what}: no metric in '{expr}'")
        for name in sorted(found - exposed):
            errs.append(f"{what}: '{name}' is not a metric xdp-fwd exposes ({expr})")
        used |= found
    return errs


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        dash = json.load(f)
    listed = subprocess.run(sys.argv[2:], check=True, capture_output=True, text=True).stdout
    exposed = {line.split()[0] for line in listed.splitlines() if line.strip()}
    if len(exposed) < 10:
        sys.exit(f"dashboard: {len(exposed)} families listed by {sys.argv[2:]}")
    # The parser on its own first: what it must find and what it must leave out.
    assert metric_names('sum by (interface) (rate(xdp_fwd_a_total{instance=~"$instance",x="b c"}[$__rate_interval]))') == {"xdp_fwd_a_total"}
    assert metric_names("8 * rate(a[5m] offset 1h) / on (x) group_left (y) b > bool 1e3") == {"a", "b"}
    errs = check(dash, exposed)
    if errs:
        print("\n".join(["dashboard: " + e for e in errs]), file=sys.stderr)
        sys.exit(1)
    # The check must refuse a panel with a metric xdp-fwd does not have, and a repeated id.
    bad = copy.deepcopy(dash)
    panel = next(p for p in all_panels(bad["panels"]) if p.get("targets"))
    panel["targets"][0]["expr"] = "rate(xdp_fwd_no_such_metric_total[5m])"
    errs = check(bad, exposed)
    if not any("xdp_fwd_no_such_metric_total" in e for e in errs):
        sys.exit(f"dashboard: an unknown metric was not refused: {errs}")
    bad = copy.deepcopy(dash)
    panels = list(all_panels(bad["panels"]))
    panels[-1]["id"] = panels[0]["id"]
    if not any("also" in e for e in check(bad, exposed)):
        sys.exit("dashboard: a repeated panel id was not refused")
    n = sum(1 for p in all_panels(dash["panels"]) if p.get("type") != "row")
    print(f"dashboard: {n} panels, every metric among the {len(exposed)} xdp-fwd exposes")


if __name__ == "__main__":
    main()
