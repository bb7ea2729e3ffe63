#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws fragd's Grafana dashboard as one PNG from a real Prometheus.

Grafana is not needed: every panel target of the dashboard (as found by
tests/integration/promql_check.py, with Grafana's variables substituted the
same way) is evaluated over a time window with Prometheus' /api/v1/query_range,
then drawn with matplotlib, one subplot per panel, placed by the panel's
gridPos (24 columns), titled as the panel, in the panel's unit:
  timeseries  one line per series, legend from legendFormat (the N series with
              the highest peak when there are more; the instance is left out
              of the legends and named once in the header)
  heatmap     bucket increases over time as an image (Grafana's "heatmap"
              format: cumulative `le` buckets turned into per-bucket counts),
              colour scale Oranges with exponent 0.5 as the panel asks
  stat        each series' last value on a tile coloured by the thresholds
The dashboard's annotations (fragd's actions) and the scenario's phases (a
file of "EPOCH<TAB>LABEL" lines) are drawn on a timeline above the panels;
the phases also as thin lines across every time series panel.

Two steps, so that the picture can be redrawn without re-running a scenario:
  --prom URL --dashboard JSON --instance HOST:PORT --start T --end T --save DATA
      queries everything into DATA (JSON)
  --load DATA --output PNG
      draws; both sets of options in one call do both.
Prints one line per panel (series, points) and exits 1 when a query fails.
"""
import argparse
import datetime
import json
import math
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import promql_check  # noqa: E402  (the dashboard's expressions and Grafana's variable substitution)

SCRAPE_INTERVAL = 1.0  # seconds; bench/dashboard.sh's Prometheus scrapes fragd every second


# --- querying ------------------------------------------------------------------

def grafana_intervals(step):
    """$__interval and $__rate_interval as Grafana derives them from the step and the scrape interval."""
    interval = max(step, SCRAPE_INTERVAL)
    rate = max(interval + SCRAPE_INTERVAL, 4 * SCRAPE_INTERVAL)
    return interval, rate


def query_range(prom, expr, start, end, step):
    q = urllib.parse.urlencode({"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}s"})
    url = prom.rstrip("/") + "/api/v1/query_range?" + q
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            res = json.load(r)
    except urllib.error.HTTPError as e:  # 400 carries Prometheus' error as JSON
        try:
            res = json.load(e)
        except ValueError:
            res = {"status": "error", "error": f"HTTP {e.code}"}
    except (urllib.error.URLError, OSError) as e:
        res = {"status": "error", "error": f"cannot reach {prom}: {e}"}
    if res.get("status") != "success":
        raise RuntimeError(f"Prometheus rejected or failed the query: {res.get('error')} (query: {expr})")
    return [{"metric": s["metric"], "values": [[float(t), float(v)] for t, v in s["values"]]}
            for s in res["data"]["result"]]


def panels_of(dashboard):
    """Every panel (rows included), nested ones too, in document order."""
    out = []

    def walk(ps):
        for p in ps:
            out.append(p)
            walk(p.get("panels", []))
    walk(dashboard.get("panels", []))
    return out


def fetch(a):
    dashboard, exprs = promql_check.dashboard_exprs(a.dashboard)
    interval, rate = grafana_intervals(a.step)
    # Grafana escapes a multi-value variable's value as a regex, inside a PromQL string (backslashes doubled).
    variables = {"job": ".+", "instance": re.escape(a.instance).replace("\\", "\\\\"), "order": ".+",
                 "__interval": f"{interval:g}s", "__rate_interval": f"{rate:g}s",
                 "__interval_ms": f"{interval * 1000:g}", "__range": f"{a.end - a.start:.0f}s",
                 "__range_s": f"{a.end - a.start:.0f}", "__range_ms": f"{(a.end - a.start) * 1000:.0f}"}
    start = math.floor(a.start / a.step) * a.step  # aligned to the step, as Grafana does
    end = math.ceil(a.end / a.step) * a.step

    def run(expr):
        text, unknown = promql_check.substitute(expr, variables)
        if unknown:
            raise RuntimeError(f"unknown template variable(s) {sorted(set(unknown))} in: {expr}")
        return text, query_range(a.prom, text, start, end, a.step)

    panels, drawn = [], []
    for p in panels_of(dashboard):
        entry = {k: p.get(k) for k in ("title", "type", "gridPos", "description")}
        entry["unit"] = p.get("fieldConfig", {}).get("defaults", {}).get("unit", "short")
        entry["thresholds"] = p.get("fieldConfig", {}).get("defaults", {}).get("thresholds")
        entry["custom"] = p.get("fieldConfig", {}).get("defaults", {}).get("custom", {})
        entry["overrides"] = p.get("fieldConfig", {}).get("overrides", [])
        entry["options"] = p.get("options", {})
        entry["targets"] = []
        for t in p.get("targets", []):
            if not t.get("expr"):
                continue
            text, series = run(t["expr"])
            drawn.append(t["expr"])
            entry["targets"].append({"refId": t.get("refId"), "legendFormat": t.get("legendFormat", ""),
                                     "format": t.get("format", "time_series"), "expr": text, "series": series})
        panels.append(entry)
    # Every panel expression the dashboard checker knows of is drawn, and nothing else.
    known = sorted(e for w, e, k in exprs if k == "panel" and w.startswith("panel "))
    if sorted(drawn) != known:
        raise RuntimeError(f"panels drawn ({len(drawn)} targets) differ from the dashboard's panel "
                           f"expressions ({len(known)}): the panel walk is out of step with promql_check.py")
    annotations = []
    for an in dashboard.get("annotations", {}).get("list", []):
        if an.get("expr"):
            text, series = run(an["expr"])
            annotations.append({"name": an.get("name"), "titleFormat": an.get("titleFormat", ""),
                                "expr": text, "series": series})
    phases = []
    if a.phases:
        for line in open(a.phases):
            if line.strip():
                t, label = line.rstrip("\n").split("\t", 1)
                phases.append([float(t), label])
    return {"dashboard": dashboard.get("title", ""), "instance": a.instance, "start": start, "end": end,
            "step": a.step, "interval": interval, "rate_interval": rate, "note": a.note or "",
            "phases": phases, "panels": panels, "annotations": annotations}


# --- drawing -------------------------------------------------------------------

def legend_text(fmt, metric, drop_instance):
    if drop_instance:
        fmt = fmt.replace("{{instance}}", "")
    if not fmt:
        return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k != "instance") + "}"
    text = re.sub(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt)
    return re.sub(r"\s+", " ", text).strip() or "value"


def fmt_seconds(v):
    a = abs(v)
    if a == 0:
        return "0"
    if a < 1e-3:
        return f"{v * 1e6:.3g} µs"
    if a < 1:
        return f"{v * 1e3:.3g} ms"
    return f"{v:.3g} s"


def fmt_short(v):
    a = abs(v)
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}" if a else "0"


UNITS = {  # Grafana unit -> (tick formatter, axis label)
    "percent": (lambda v: f"{v:.0f}%", "percent"),
    "percentunit": (lambda v: f"{v * 100:.0f}%", "share"),
    "s": (fmt_seconds, "seconds"),
    "ops": (lambda v: fmt_short(v), "per second"),
    "short": (fmt_short, "count"),
}


def unit_of(u):
    return UNITS.get(u, (fmt_short, u or ""))


def threshold_color(thresholds, value):
    color = "tab:green"
    for st in (thresholds or {}).get("steps", []):
        if st.get("value") is None or value >= st["value"]:
            color = st.get("color", color)
    return {"red": "#d44a3a", "green": "#299c46", "yellow": "#e0b400", "orange": "#eb7b18"}.get(color, color)


def draw(data, output, top_n):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import PowerNorm
    from matplotlib.ticker import FuncFormatter

    W_PX, H_PX, DPI = 1800, 2400, 100
    fig = plt.figure(figsize=(W_PX / DPI, H_PX / DPI), dpi=DPI)
    plt.rcParams.update({"font.size": 8})
    start, end = data["start"], data["end"]
    to_dt = np.vectorize(lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc).replace(tzinfo=None))
    x0, x1 = to_dt(start), to_dt(end)
    phases = data["phases"]
    phase_starts = [p for p in phases if p[1] != "end"]

    # Vertical budget (pixels): header, timeline, then the gridPos rows.
    HEADER, TIMELINE, MARGIN = 70, 95, 20
    panels = [p for p in data["panels"] if p.get("gridPos")]
    rows_total = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    unit_px = (H_PX - HEADER - TIMELINE - MARGIN) / rows_total
    col_px = (W_PX - 2 * MARGIN) / 24

    def box(x, y, w, h):  # pixel box (top-left origin) -> figure fraction [left, bottom, width, height]
        return [x / W_PX, 1 - (y + h) / H_PX, w / W_PX, h / H_PX]

    when = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    fig.text(MARGIN / W_PX, 1 - 22 / H_PX, f"{data['dashboard']}  —  Grafana dashboard dashboards/fragd.json, drawn from Prometheus",
             fontsize=15, weight="bold", va="center")
    sub = (f"instance {data['instance']} · {when}, {(end - start) / 60:.1f} min · step {data['step']:g} s, "
           f"$__rate_interval {data['rate_interval']:g}s · scrape every {SCRAPE_INTERVAL:g} s")
    fig.text(MARGIN / W_PX, 1 - 42 / H_PX, sub, fontsize=9.5, color="#333", va="center")
    if data.get("note"):
        fig.text(MARGIN / W_PX, 1 - 58 / H_PX, data["note"], fontsize=9.5, color="#333", va="center")

    date_fmt = mdates.DateFormatter("%H:%M:%S")
    locator = mdates.SecondLocator(bysecond=[0, 30]) if end - start <= 600 else mdates.AutoDateLocator()

    def time_axis(ax, labels=True):
        ax.set_xlim(x0, x1)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(date_fmt)
        ax.tick_params(axis="x", labelbottom=labels, labelsize=7)

    # Timeline: the scenario's phases and fragd's actions (the dashboard's annotations).
    tl = fig.add_axes(box(MARGIN + 95, HEADER, W_PX - 2 * MARGIN - 95, TIMELINE - 30))
    colors = {"baseline": "#e8e8e8", "fragment": "#f6c8a0", "compact": "#9ecae1", "release": "#c7e9c0"}
    for i, (t, label) in enumerate(phase_starts):
        t_next = phases[i + 1][0] if i + 1 < len(phases) else end
        c = colors.get(label, "#fdae6b" if label.startswith("burst") else "#dddddd")
        tl.axvspan(to_dt(t), to_dt(t_next), ymin=0.5, ymax=1, color=c)
        tl.text(to_dt(t + (t_next - t) / 2), 0.75, label, ha="center", va="center", fontsize=8.5)
    tl.text(-0.005, 0.75, "scenario", transform=tl.transAxes, ha="right", va="center", fontsize=8.5, weight="bold")
    tl.text(-0.005, 0.25, "fragd actions", transform=tl.transAxes, ha="right", va="center", fontsize=8.5, weight="bold")
    kinds = {}
    for an in data["annotations"]:
        for s in an["series"]:
            label = legend_text(an["titleFormat"].replace("fragd ", ""), s["metric"], True)
            ts = [t for t, v in s["values"] if math.isfinite(v)]
            kinds.setdefault(label, []).extend(ts)
    cmap = plt.get_cmap("tab10")
    handles = []
    for i, (label, ts) in enumerate(sorted(kinds.items())):
        if ts:
            h = tl.vlines(to_dt(np.array(ts)), 0.05 + 0.4 * i / max(len(kinds), 1), 0.05 + 0.4 * (i + 1) / max(len(kinds), 1),
                          color=cmap(i % 10), linewidth=1.2, label=f"{label} ({len(ts)} points)")
            handles.append(h)
    if handles:
        tl.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.28), ncol=min(len(handles), 4),
                  fontsize=7.5, frameon=False)
    else:
        tl.text(0.5, 0.25, "no fragd action in the window", transform=tl.transAxes, ha="center", va="center", fontsize=8)
    tl.set_ylim(0, 1)
    tl.set_yticks([])
    time_axis(tl, labels=False)
    for side in ("top", "right", "left"):
        tl.spines[side].set_visible(False)

    summary = []
    for p in data["panels"]:
        g = p.get("gridPos")
        if not g:
            continue
        x, y = MARGIN + g["x"] * col_px, HEADER + TIMELINE + g["y"] * unit_px
        w, h = g["w"] * col_px, g["h"] * unit_px
        if p["type"] == "row":
            fig.text((x + 4) / W_PX, 1 - (y + h * 0.55) / H_PX, p["title"], fontsize=12.5, weight="bold",
                     color="#1f60c4", va="center")
            fig.add_artist(plt.Line2D([x / W_PX, (x + w) / W_PX], [1 - (y + h) / H_PX] * 2, color="#1f60c4", lw=0.8))
            continue
        series = [(t, s) for t in p["targets"] for s in t["series"]]
        npoints = sum(1 for _, s in series for _, v in s["values"] if math.isfinite(v))
        summary.append(f'{p["title"]}: {len(series)} series, {npoints} points')
        fmt, ylabel = unit_of(p["unit"])
        title_h, pad_l, pad_r = 22, 62, 12
        ax_top = y + title_h
        fig.text((x + pad_l) / W_PX, 1 - (y + 12) / H_PX, p["title"], fontsize=10.5, weight="bold", va="center")
        if npoints == 0:  # no series, or none with a value
            ax = fig.add_axes(box(x + pad_l, ax_top, w - pad_l - pad_r, h - title_h - 30))
            ax.text(0.5, 0.5, "No data in this scenario", transform=ax.transAxes, ha="center", va="center",
                    fontsize=11, color="#888")
            ax.set_xticks([])
            ax.set_yticks([])
            summary[-1] += "  <- NO DATA"
            continue

        if p["type"] == "stat":
            ax = fig.add_axes(box(x + 8, ax_top, w - 16, h - title_h - 8))
            ax.set_axis_off()
            tiles = []
            for t, s in series:
                vals = [v for _, v in s["values"] if math.isfinite(v)]
                tiles.append((legend_text(t["legendFormat"], s["metric"], True), vals[-1] if vals else float("nan")))
            tiles.sort()
            ncol = max(1, min(len(tiles), 3 if w < 700 else 4))
            nrow = math.ceil(len(tiles) / ncol)
            for i, (name, v) in enumerate(tiles):
                r, c = divmod(i, ncol)
                ax.add_patch(plt.Rectangle((c / ncol + 0.005, 1 - (r + 1) / nrow + 0.01), 1 / ncol - 0.01,
                                           1 / nrow - 0.02, color=threshold_color(p["thresholds"], v)))
                ax.text((c + 0.5) / ncol, 1 - (r + 0.5) / nrow, f"{name}\n{fmt(v) if math.isfinite(v) else '—'}",
                        ha="center", va="center", color="white", fontsize=8, weight="bold")
            continue

        if p["type"] == "heatmap":
            ax = fig.add_axes(box(x + pad_l, ax_top, w - pad_l - 90, h - title_h - 26))
            by_le = {}
            for _, s in series:
                le = float(s["metric"].get("le", "nan"))
                by_le[le] = dict((t, v) for t, v in s["values"])
            les = sorted(by_le)
            times = np.arange(start, end + data["step"] / 2, data["step"])
            cum = np.array([[by_le[le].get(round(t, 3), np.nan) for t in times] for le in les])
            counts = np.diff(np.nan_to_num(cum), axis=0, prepend=0)  # cumulative buckets -> per bucket
            counts[counts < 0] = 0
            keep = np.where(counts.sum(axis=1) > 0)[0]
            lo, hi = (keep[0], keep[-1]) if len(keep) else (0, len(les) - 1)
            counts = counts[lo:hi + 1]
            names = ["≤ " + (fmt_seconds(le) if math.isfinite(le) else "+Inf") for le in les[lo:hi + 1]]
            masked = np.ma.masked_where(counts <= 0, counts)
            cm = plt.get_cmap("Oranges").copy()
            cm.set_bad("#f4f4f4")
            exponent = p["options"].get("color", {}).get("exponent", 0.5)
            im = ax.imshow(masked, aspect="auto", origin="lower", cmap=cm,
                           norm=PowerNorm(gamma=exponent, vmin=0, vmax=max(1, counts.max())),
                           extent=[mdates.date2num(x0), mdates.date2num(x1), -0.5, len(names) - 0.5],
                           interpolation="nearest")
            ax.xaxis_date()
            time_axis(ax)
            ax.set_yticks(range(len(names)))
            ax.set_yticklabels(names, fontsize=7)
            ax.set_ylabel("stall latency bucket", fontsize=8)
            cb = fig.colorbar(im, cax=fig.add_axes(box(x + w - 80, ax_top, 12, h - title_h - 26)))
            cb.set_label(f"stalls per {data['rate_interval']:g} s window", fontsize=7.5)
            cb.ax.tick_params(labelsize=7)
            for t, _ in phase_starts:
                ax.axvline(to_dt(t), color="#555", lw=0.6, ls=":")
            continue

        # timeseries, with the panel's field config: stacking, fill, log scale, threshold
        # lines, and per-query overrides (unit, right axis, dashes)
        custom = p.get("custom") or {}
        stacked = custom.get("stacking", {}).get("mode") == "normal"
        fill = custom.get("fillOpacity", 0) / 100
        log_scale = custom.get("scaleDistribution", {}).get("type") == "log"
        per_ref = {}
        for o in p.get("overrides") or []:
            if o.get("matcher", {}).get("id") == "byFrameRefID":
                props = per_ref.setdefault(o["matcher"]["options"], {})
                for prop in o.get("properties", []):
                    props[prop["id"]] = prop["value"]
        lines, empty = [], 0
        for t, s in series:
            vals = [v for _, v in s["values"] if math.isfinite(v)]
            if not vals:  # e.g. a quantile of an order that never stalled: nothing to draw
                empty += 1
                continue
            peak = max(vals)
            lines.append((peak, legend_text(t["legendFormat"], s["metric"], True), s, per_ref.get(t["refId"], {})))
        if not stacked:
            lines.sort(key=lambda l: (-l[0], l[1]))
        shown = lines[:top_n] if not stacked else lines  # a stack is drawn whole, or its total is wrong
        if not stacked:  # the N highest, listed in natural order ("order 2" before "order 10")
            shown.sort(key=lambda l: [int(c) if c.isdigit() else c for c in re.split(r"(\d+)", l[1])])
        ncol = 2 if w < 700 else (3 if w < 1000 else 4)
        leg_rows = math.ceil(len(shown) / ncol) + (1 if len(lines) > len(shown) or empty else 0)
        leg_h = 12 + 12 * leg_rows
        right = any(o.get("custom.axisPlacement") == "right" for _, _, _, o in shown)
        ax_h = h - title_h - 22 - leg_h
        ax = fig.add_axes(box(x + pad_l, ax_top, w - pad_l - pad_r - (50 if right else 0), ax_h))
        ax2 = ax.twinx() if right else None
        grid_t = np.arange(start, end + data["step"] / 2, data["step"])
        base = np.zeros(len(grid_t))
        handles = []
        for i, (_, label, s, ov) in enumerate(shown):
            by_t = {round(t, 3): v for t, v in s["values"]}
            vs = np.array([by_t.get(round(t, 3), np.nan) for t in grid_t])
            target = ax2 if ov.get("custom.axisPlacement") == "right" else ax
            color = cmap(i % 10)
            dash = ov.get("custom.lineStyle", {}).get("fill") == "dash" or i >= 10
            style = "--" if dash else "-"
            if stacked:
                top = base + np.nan_to_num(vs)
                target.fill_between(to_dt(grid_t), base, top, where=~np.isnan(vs), color=color, alpha=fill, lw=0)
                vs, base = np.where(np.isnan(vs), np.nan, top), top
            if log_scale:
                vs = np.where(vs > 0, vs, np.nan)
            sparse = np.count_nonzero(~np.isnan(vs)) < len(grid_t) / 4
            handles += target.plot(to_dt(grid_t), vs, style, lw=1.3, color=color, marker="o" if sparse else None,
                                   markersize=2.5, label=label + (" (right axis)" if target is ax2 else ""))
        time_axis(ax)
        if log_scale:
            ax.set_yscale("log", base=custom["scaleDistribution"].get("log", 10))
        else:
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos, f=fmt: f(v)))
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylabel(ylabel + (", log scale" if log_scale else ""), fontsize=8)
        ax.grid(True, color="#e6e6e6", lw=0.6)
        if not log_scale:
            ymin, ymax = ax.get_ylim()
            if p["unit"] in ("percent", "percentunit"):
                ax.set_ylim(0, 100 if p["unit"] == "percent" else 1)
            elif min(l[0] for l in shown) >= 0 and all(v >= 0 for _, _, s, _ in shown for _, v in s["values"]
                                                          if math.isfinite(v)):
                ax.set_ylim(0, ymax if max(l[0] for l in shown) > 0 else 1)  # from 0; 0..1 when all are 0
        if ax2 is not None:
            unit2 = next(o.get("unit") for _, _, _, o in shown if o.get("custom.axisPlacement") == "right") or p["unit"]
            fmt2, label2 = unit_of(unit2)
            ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos, f=fmt2: f(v)))
            ax2.tick_params(axis="y", labelsize=7)
            ax2.set_ylabel(label2, fontsize=8)
            ax2.set_ylim(0, max(ax2.get_ylim()[1], 1))
        if custom.get("thresholdsStyle", {}).get("mode") == "line":
            for st in (p.get("thresholds") or {}).get("steps", []):
                if st.get("value") is not None:
                    ax.axhline(st["value"], color=threshold_color(p["thresholds"], st["value"]), lw=1, ls="--")
        for t, _ in phase_starts:
            ax.axvline(to_dt(t), color="#999", lw=0.6, ls=":")
        title = None if len(lines) <= len(shown) else f"top {len(shown)} of {len(lines)} series by peak"
        if empty:
            title = (title + "; " if title else "") + f"{empty} series without a value left out"
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -24 / ax_h), ncol=ncol, fontsize=7,
                  frameon=False, title=title, title_fontsize=7, borderaxespad=0, handlelength=1.6,
                  columnspacing=1.2, labelspacing=0.25, alignment="left")
        if len(lines) > len(shown):
            summary[-1] += f" (top {len(shown)} drawn)"

    fig.savefig(output, dpi=DPI)
    plt.close(fig)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prom", help="Prometheus base URL to query")
    ap.add_argument("--dashboard", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                         "dashboards", "fragd.json"))
    ap.add_argument("--instance", help="fragd's scrape target HOST:PORT (the $instance variable)")
    ap.add_argument("--start", type=float, help="window start, Unix seconds")
    ap.add_argument("--end", type=float, help="window end, Unix seconds")
    ap.add_argument("--step", type=float, default=2.0, help="seconds between points (default 2)")
    ap.add_argument("--phases", help='scenario timeline: lines "EPOCH<TAB>LABEL"')
    ap.add_argument("--note", help="one line describing the scenario, printed under the title")
    ap.add_argument("--save", help="write the queried data here (JSON)")
    ap.add_argument("--load", help="draw from data saved by --save instead of querying")
    ap.add_argument("--output", help="PNG to write")
    ap.add_argument("--top", type=int, default=12, help="series drawn per time series panel at most (default 12)")
    a = ap.parse_args()

    if a.load:
        with open(a.load) as f:
            data = json.load(f)
        if a.note:
            data["note"] = a.note
    else:
        missing = [o for o in ("prom", "instance", "start", "end") if getattr(a, o) is None]
        if missing:
            ap.error("without --load, --" + ", --".join(missing) + " are needed to query Prometheus")
        if a.end <= a.start or a.step <= 0:
            ap.error(f"need --start < --end and --step > 0 (got {a.start}, {a.end}, {a.step})")
        try:
            data = fetch(a)
        except (RuntimeError, OSError, ValueError) as e:
            print(f"dashboards/render.py: {e}", file=sys.stderr)
            return 1
        if a.save:
            with open(a.save, "w") as f:
                json.dump(data, f)
    if not a.output:
        if not a.save:
            ap.error("nothing to do: give --output (draw) and/or --save (keep the data)")
        return 0
    try:
        summary = draw(data, a.output, a.top)
    except OSError as e:
        print(f"dashboards/render.py: cannot write {a.output}: {e}", file=sys.stderr)
        return 1
    for line in summary:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
