#!/usr/bin/env python3
"""Draws tools/perf/time_memory.svg from tools/perf/results.json (hand-written SVG, stdlib only).

    python3 tools/perf/plot.py [results.json] [out.svg]

Two log-log panels against the number of parameters (parameter paths of the model):
left, wall time of `shardplan check` (1 and 2 threads) with the reference's figures and the
targets; right, peak RSS with the document's size and 3x the document's size.
measure.py calls write_svg() after every run.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

BLUE, ORANGE, GREEN, RED, GRAY, PURPLE = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#666666", "#9467bd"
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fmt_count(v):
    for div, suf in ((1e6, "M"), (1e3, "k")):
        if v >= div:
            q = v / div
            return f"{q:g}{suf}"
    return f"{v:g}"


def fmt_seconds(v):
    if v >= 1:
        return f"{v:g} s"
    if v >= 1e-3:
        return f"{v * 1e3:g} ms"
    return f"{v * 1e6:g} µs"


def fmt_mb(v):
    return f"{v / 1024:g} GB" if v >= 1024 else f"{v:g} MB"


class Panel:
    def __init__(self, x, y, w, h, xr, yr):
        self.x, self.y, self.w, self.h = x, y, w, h
        self.lx0, self.lx1 = math.log10(xr[0]), math.log10(xr[1])
        self.ly0, self.ly1 = math.log10(yr[0]), math.log10(yr[1])
        self.out = []

    def px(self, v):
        return self.x + (math.log10(v) - self.lx0) / (self.lx1 - self.lx0) * self.w

    def py(self, v):
        return self.y + self.h - (math.log10(v) - self.ly0) / (self.ly1 - self.ly0) * self.h

    def inside(self, vx, vy):
        return self.lx0 <= math.log10(vx) <= self.lx1 and self.ly0 <= math.log10(vy) <= self.ly1

    def frame(self, title, xlabel, ylabel, xfmt, yfmt):
        o = self.out
        o.append(f'<rect x="{self.x}" y="{self.y}" width="{self.w}" height="{self.h}" fill="#ffffff" '
                 f'stroke="#333" stroke-width="1"/>')
        for lo, hi, is_x in ((self.lx0, self.lx1, True), (self.ly0, self.ly1, False)):
            for dec in range(math.floor(lo), math.ceil(hi) + 1):
                for k in range(1, 10):
                    v = k * 10.0 ** dec
                    lv = math.log10(v)
                    if not lo <= lv <= hi:
                        continue
                    major = k == 1
                    col, sw = ("#cccccc", 1) if major else ("#eeeeee", 0.7)
                    if is_x:
                        p = self.px(v)
                        o.append(f'<line x1="{p:.1f}" y1="{self.y}" x2="{p:.1f}" y2="{self.y + self.h}" '
                                 f'stroke="{col}" stroke-width="{sw}"/>')
                        if major:
                            o.append(f'<text x="{p:.1f}" y="{self.y + self.h + 17}" text-anchor="middle" '
                                     f'font-size="12">{esc(xfmt(v))}</text>')
                    else:
                        p = self.py(v)
                        o.append(f'<line x1="{self.x}" y1="{p:.1f}" x2="{self.x + self.w}" y2="{p:.1f}" '
                                 f'stroke="{col}" stroke-width="{sw}"/>')
                        if major:
                            o.append(f'<text x="{self.x - 6}" y="{p + 4:.1f}" text-anchor="end" '
                                     f'font-size="12">{esc(yfmt(v))}</text>')
        o.append(f'<text x="{self.x + self.w / 2}" y="{self.y - 10}" text-anchor="middle" font-size="15" '
                 f'font-weight="bold">{esc(title)}</text>')
        o.append(f'<text x="{self.x + self.w / 2}" y="{self.y + self.h + 38}" text-anchor="middle" '
                 f'font-size="13">{esc(xlabel)}</text>')
        cy = self.y + self.h / 2
        o.append(f'<text x="{self.x - 62}" y="{cy}" text-anchor="middle" font-size="13" '
                 f'transform="rotate(-90 {self.x - 62} {cy})">{esc(ylabel)}</text>')

    def line(self, pts, color, dash=None, width=2):
        pts = [(x, y) for x, y in pts if x > 0 and y > 0]
        if len(pts) < 2:
            return
        d = " ".join(f"{self.px(x):.1f},{self.py(y):.1f}" for x, y in pts)
        da = f' stroke-dasharray="{dash}"' if dash else ""
        self.out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="{width}"{da} '
                        f'clip-path="url(#clip{id(self)})"/>')

    def marker(self, x, y, color, shape="circle", hollow=False, size=4.5):
        if not (x > 0 and y > 0 and self.inside(x, y)):
            return
        cx, cy = self.px(x), self.py(y)
        fill = "#ffffff" if hollow else color
        self.out.append(shape_svg(shape, cx, cy, size, color, fill))

    def label(self, x, y, text, color="#333", dx=6, dy=-6, anchor="start", size=11):
        if not (x > 0 and y > 0 and self.inside(x, y)):
            return
        self.out.append(f'<text x="{self.px(x) + dx:.1f}" y="{self.py(y) + dy:.1f}" font-size="{size}" '
                        f'fill="{color}" text-anchor="{anchor}">{esc(text)}</text>')

    def legend(self, entries):
        """Below the panel, outside the plot area, so it never hides data."""
        h = 18 * len(entries) + 8
        w = self.w
        x0, y0 = self.x, self.y + self.h + 52
        self.out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="#ffffff" fill-opacity="0.92" '
                        f'stroke="#bbbbbb"/>')
        for i, (text, color, shape, dash, hollow) in enumerate(entries):
            cy = y0 + 14 + 18 * i
            if dash is not None:
                da = f' stroke-dasharray="{dash}"' if dash else ""
                self.out.append(f'<line x1="{x0 + 8}" y1="{cy}" x2="{x0 + 32}" y2="{cy}" stroke="{color}" '
                                f'stroke-width="2"{da}/>')
            if shape:
                self.out.append(shape_svg(shape, x0 + 20, cy, 4.5, color, "#ffffff" if hollow else color))
            self.out.append(f'<text x="{x0 + 40}" y="{cy + 4}" font-size="12">{esc(text)}</text>')

    def svg(self):
        clip = (f'<clipPath id="clip{id(self)}"><rect x="{self.x}" y="{self.y}" width="{self.w}" '
                f'height="{self.h}"/></clipPath>')
        return [clip] + self.out


def shape_svg(shape, cx, cy, r, stroke, fill):
    if shape == "square":
        return (f'<rect x="{cx - r:.1f}" y="{cy - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" fill="{fill}" '
                f'stroke="{stroke}" stroke-width="1.5"/>')
    if shape == "diamond":
        r *= 1.3
        return (f'<polygon points="{cx:.1f},{cy - r:.1f} {cx + r:.1f},{cy:.1f} {cx:.1f},{cy + r:.1f} '
                f'{cx - r:.1f},{cy:.1f}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')
    if shape == "triangle":
        r *= 1.25
        return (f'<polygon points="{cx:.1f},{cy - r:.1f} {cx + r:.1f},{cy + r * 0.8:.1f} '
                f'{cx - r:.1f},{cy + r * 0.8:.1f}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')
    if shape == "bar":
        return (f'<line x1="{cx - 10:.1f}" y1="{cy:.1f}" x2="{cx + 10:.1f}" y2="{cy:.1f}" stroke="{stroke}" '
                f'stroke-width="3"/>')
    return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'


def span(values, pad=1.8):
    values = [v for v in values if v and v > 0]
    return min(values) / pad, max(values) * pad


def write_svg(results, path):
    docs = results["documents"]
    t = lambda d, th: d["median"][str(th)]["wall_s"]  # noqa: E731
    rss = lambda d, th: d["median"][str(th)]["rss_kb"] / 1024  # noqa: E731  (MiB)
    generic = sorted((d for d in docs if d["group"] == "generic"), key=lambda d: d["param_paths"])
    refs = sorted((d for d in docs if d["group"] == "reference"), key=lambda d: d["param_paths"])
    ds = next((d for d in docs if d["id"] == "deepseek"), None)
    plans = [d for d in docs if d["group"] == "plan"]
    ref_by_modules = {r["modules"]: r["seconds"] for r in results["reference"]}
    targets = results["targets_def"]

    xs = [d["param_paths"] for d in docs]
    xr = span(xs, 2.2)
    times = [t(d, th) for d in docs for th in (1, 2)] + [ref_by_modules.get(d.get("reference_modules"), 0)
                                                         for d in refs] + [targets["deepseek_cli_s"]]
    yt = span(times)
    mems = [rss(d, th) for d in docs for th in (1, 2)] + [d["doc_bytes"] / 2**20 for d in docs] + \
           [3 * d["doc_bytes"] / 2**20 for d in generic]
    ym = span(mems)

    W, H = 1160, 700
    left = Panel(95, 70, 440, 380, xr, yt)
    right = Panel(680, 70, 440, 380, xr, ym)
    left.frame("Wall time of shardplan check", "parameters (parameter paths)", "wall time (median)",
               fmt_count, fmt_seconds)
    right.frame("Peak memory (max RSS)", "parameters (parameter paths)", "peak RSS", fmt_count, fmt_mb)

    # Left: time.
    if generic:
        x0, y0 = generic[0]["param_paths"], t(generic[0], 1)
        left.line([(x0, y0), (xr[1], y0 * xr[1] / x0)], GRAY, dash="2,4", width=1.5)
        left.label(xr[1] / 1.5, y0 * xr[1] / 1.5 / x0, "∝ parameters", GRAY, dx=-4, dy=24, anchor="end")
    for th, color, shape, dash in ((1, BLUE, "circle", ""), (2, ORANGE, "square", "6,3")):
        left.line([(d["param_paths"], t(d, th)) for d in generic], color, dash=dash)
        for d in generic:
            left.marker(d["param_paths"], t(d, th), color, shape)
    for d in refs:
        x = d["param_paths"]
        ref_s = ref_by_modules.get(d.get("reference_modules"))
        left.marker(x, t(d, 1), GREEN, "triangle", hollow=True)
        left.marker(x, t(d, 2), GREEN, "triangle")
        if ref_s:
            left.line([(x, t(d, 2)), (x, ref_s)], RED, dash="1,3", width=1.2)
            left.marker(x, ref_s, RED, "diamond")
            left.label(x, ref_s, f"{ref_s / t(d, 2):.0f}x", RED, dx=7, dy=4)
    if ds:
        left.marker(ds["param_paths"], t(ds, 1), GREEN, "diamond", hollow=True)
        left.marker(ds["param_paths"], t(ds, 2), GREEN, "diamond")
        left.marker(ds["param_paths"], targets["deepseek_cli_s"], RED, "bar")
        left.label(ds["param_paths"], targets["deepseek_cli_s"], "target 50 ms", RED, dx=12, dy=4)
    for d in plans:
        left.marker(d["param_paths"], t(d, 2), PURPLE, "square", hollow=True)
    if generic:
        big = generic[-1]
        left.marker(big["param_paths"], targets["million_cli_s"], RED, "bar")
        left.label(big["param_paths"], targets["million_cli_s"], f"target {targets['million_cli_s']:g} s", RED,
                   dx=0, dy=18, anchor="middle")
    left.legend([
        ("generic documents, 1 thread", BLUE, "circle", "", False),
        ("generic documents, 2 threads", ORANGE, "square", "6,3", False),
        ("DeepSeek-like, sized like a reference figure (filled: 2 threads, hollow: 1)", GREEN, "triangle",
         None, False),
        ("DeepSeek-V3-sized document (filled: 2 threads, hollow: 1)", GREEN, "diamond", None, False),
        ("reference Python figure, same module count (label: our speedup)", RED, "diamond", None, False),
        ("document with a final plan, 2 threads", PURPLE, "square", None, True),
        ("target (50 ms DeepSeek-V3, 1.5 s at 1M parameters)", RED, "bar", None, False),
        ("time proportional to parameters (from the smallest, 1 thread)", GRAY, None, "2,4", False),
    ])

    # Right: memory.
    right.line([(d["param_paths"], d["doc_bytes"] / 2**20) for d in generic], GRAY, width=1.5)
    right.line([(d["param_paths"], 3 * d["doc_bytes"] / 2**20) for d in generic], RED, dash="6,3", width=1.5)
    for th, color, shape, dash in ((2, ORANGE, "square", "6,3"),):
        right.line([(d["param_paths"], rss(d, th)) for d in generic], color, dash=dash)
        for d in generic:
            right.marker(d["param_paths"], rss(d, th), color, shape)
    for d in refs + ([ds] if ds else []):
        right.marker(d["param_paths"], rss(d, 2), GREEN, "diamond" if d is ds else "triangle")
        right.marker(d["param_paths"], d["doc_bytes"] / 2**20, GRAY, "diamond" if d is ds else "triangle",
                     hollow=True, size=3.5)
    for d in plans:
        right.marker(d["param_paths"], rss(d, 2), PURPLE, "square", hollow=True)
    if generic:
        big = generic[-1]
        right.label(big["param_paths"], rss(big, 2), f"{rss(big, 2) * 2**20 / big['doc_bytes']:.1f}x doc",
                    ORANGE, dx=-8, dy=-8, anchor="end")
    right.legend([
        ("generic documents, peak RSS (2 threads)", ORANGE, "square", "6,3", False),
        ("DeepSeek-like documents, peak RSS (diamond: DeepSeek-V3-sized)", GREEN, "triangle", None, False),
        ("document with a final plan, peak RSS", PURPLE, "square", None, True),
        ("document size (line: generic; hollow markers: DeepSeek-like)", GRAY, None, "", False),
        ("3x the document size (the target's ceiling)", RED, None, "6,3", False),
    ])

    m = results["machine"]
    title = (f"shardplan check vs model size: {m['cpu_model']}, {m['nproc']} cores, {m['date']}"
             + (" (quick run)" if results.get("quick") else ""))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" {FONT}>',
             f'<rect width="{W}" height="{H}" fill="#ffffff"/>',
             f'<text x="{W / 2}" y="28" text-anchor="middle" font-size="17" font-weight="bold">{esc(title)}</text>']
    parts += left.svg() + right.svg()
    parts.append(f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle" font-size="11" fill="#555">'
                 f'{esc("Generated by tools/perf/measure.py from tools/perf/results.json; medians of the runs; opt build; log-log axes.")}'
                 f'</text>')
    parts.append("</svg>")
    Path(path).write_text("\n".join(parts) + "\n")


def main():
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results.json"
    dst = Path(sys.argv[2]) if len(sys.argv) > 2 else HERE / "time_memory.svg"
    write_svg(json.loads(src.read_text()), dst)


if __name__ == "__main__":
    main()
