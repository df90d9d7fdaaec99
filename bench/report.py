#!/usr/bin/env python3
"""The table and results.json of `make bench`, from what bench/run.sh measured.

    report.py --out FILE [--meta KEY=VALUE]...
              [--case ID TITLE TIMEIT_JSONL]... [--skip ID TITLE REASON]...
              [--memory ID TITLE RSS_JSONL]...
              [--throughput ID TITLE PROXY_JSONL]... [--connrate ID TITLE PROXY_JSONL]...

A --case file is bench/timeit's output: one {"label", "argv"} line per
candidate, then one {"label", "round", "ms", "cpu_ms"} line per run.  Per
candidate: the median and the 90th percentile (linear interpolation between
closest ranks, as numpy's default) of the wall-clock times, n, and the
ratios of its median to the median of "bare" (and, for jailrun rows, of
"bwrap") from the same file, that is from the same interleaved run.

A --memory file holds one rss.py object per line; per process the peak is
the largest VmHWM seen over the runs.

A --throughput or --connrate file is bench/proxy.py's output: timeit's
shape, each run also giving the bytes and connections it moved, and
{"label", "skipped"} for a candidate left out.  Per candidate: the median
rate (MB/s, 10^6 bytes, or connections/s) and the p90 rate, that of the
run at the 90th percentile of time (the slow end), and the ratios of its
median time to that of "direct" and, for jailrun rows, of "socat": as in
the other cases, 1.30 is 1.3 times the time for the same work.

Cases are reported in the order given, the rate cases in a second table.
The tables go to stdout.
"""
import argparse
import json
import statistics
import sys


def percentile(values, q):
    v = sorted(values)
    if len(v) == 1:
        return v[0]
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def timing_case(path):
    argv = {}
    runs = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "argv" in rec:
                argv[rec["label"]] = rec["argv"]
                runs.setdefault(rec["label"], [])
            else:
                runs[rec["label"]].append(rec)
    cands = {}
    for label, recs in runs.items():
        ms = [r["ms"] for r in recs]
        cands[label] = {
            "median_ms": round(statistics.median(ms), 3),
            "p90_ms": round(percentile(ms, 0.9), 3),
            "n": len(ms),
            "median_cpu_ms": round(statistics.median(r["cpu_ms"] for r in recs), 3),
            "argv": argv[label],
        }
    for ref, key in (("bare", "ratio_to_bare"), ("bwrap", "ratio_to_bwrap")):
        if ref not in cands:
            continue
        base = cands[ref]["median_ms"]
        for label, c in cands.items():
            if key == "ratio_to_bare" or label.startswith("jailrun"):
                c[key] = round(c["median_ms"] / base, 3)
    return {"candidates": cands}


def rate_case(path, unit):
    argv, runs, skipped = {}, {}, {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if "skipped" in rec:
                skipped[rec["label"]] = rec["skipped"]
            elif "argv" in rec:
                argv[rec["label"]] = rec["argv"]
                runs.setdefault(rec["label"], [])
            else:
                runs[rec["label"]].append(rec)
    cands = {}
    for label, recs in runs.items():
        ms = [r["ms"] for r in recs]
        amount = recs[0]["bytes"] / 1e6 if unit == "MB/s" else recs[0]["connections"]
        cands[label] = {
            "unit": unit,
            "median_rate": round(amount / statistics.median(ms) * 1000, 1),
            "p90_rate": round(amount / percentile(ms, 0.9) * 1000, 1),
            "median_ms": round(statistics.median(ms), 3),
            "p90_ms": round(percentile(ms, 0.9), 3),
            "median_wall_ms": round(statistics.median(r["wall_ms"] for r in recs), 3),
            "n": len(ms),
            "bytes_per_run": recs[0]["bytes"],
            "connections_per_run": recs[0]["connections"],
            "argv": argv[label],
        }
    for ref, key in (("direct", "ratio_to_direct"), ("socat", "ratio_to_socat")):
        if ref not in cands:
            continue
        base = cands[ref]["median_ms"]
        for label, c in cands.items():
            if key == "ratio_to_direct" or label.startswith("jailrun"):
                c[key] = round(c["median_ms"] / base, 3)
    for label, reason in skipped.items():
        cands[label] = {"skipped": reason}
    return {"candidates": cands}


def memory_case(path):
    samples = []
    with open(path) as f:
        for line in f:
            samples.append(json.loads(line))
    cands = {}
    for label, key in (("jailrun supervisor", "supervisor_kib"), ("jailrun init", "init_kib")):
        vals = [s[key] for s in samples if s.get(key) is not None]
        if vals:
            cands[label] = {"peak_rss_kib": max(vals), "median_peak_rss_kib": statistics.median(vals),
                            "n": len(vals)}
    return {"candidates": cands}


def fmt(x, spec):
    return "" if x is None else format(x, spec)


def is_rate(case):
    return case.get("kind") == "rate"


def table(cases):
    head = ("case", "candidate", "median ms", "p90 ms", "x bare", "x bwrap")
    rows = []
    for cid, c in cases.items():
        title = c["title"]
        if is_rate(c):
            continue
        if "skipped" in c:
            rows.append((title, "skipped (" + c["skipped"] + ")", "", "", "", ""))
            continue
        for label, v in c["candidates"].items():
            if "peak_rss_kib" in v:
                rows.append((title, label, f"peak {v['peak_rss_kib']} KiB", "", "", ""))
                continue
            rows.append((title, label, fmt(v["median_ms"], ".2f"), fmt(v["p90_ms"], ".2f"),
                         fmt(v.get("ratio_to_bare"), ".2f"), fmt(v.get("ratio_to_bwrap"), ".2f")))
    return render(head, rows) if rows else ""


def rate_table(cases):
    head = ("case", "candidate", "median", "p90", "x direct", "x socat")
    rows = []
    for cid, c in cases.items():
        if not is_rate(c):
            continue
        title = c["title"]
        for label, v in c["candidates"].items():
            if "skipped" in v:
                rows.append((title, label + ": skipped (" + v["skipped"] + ")", "", "", "", ""))
                continue
            spec = ".0f"
            rows.append((title, label, fmt(v["median_rate"], spec) + " " + v["unit"],
                         fmt(v["p90_rate"], spec) + " " + v["unit"],
                         fmt(v.get("ratio_to_direct"), ".2f"), fmt(v.get("ratio_to_socat"), ".2f")))
    return render(head, rows) if rows else ""


def render(head, rows):
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    right = (False, False, True, True, True, True)

    def line(r):
        cells = [r[i].rjust(widths[i]) if right[i] else r[i].ljust(widths[i]) for i in range(len(r))]
        return " | ".join(cells).rstrip()

    out = [line(head), "-+-".join("-" * w for w in widths)]
    prev = None
    for r in rows:
        out.append(line(r if r[0] != prev else ("",) + r[1:]))
        prev = r[0]
    return "\n".join(out)


class InOrder(argparse.Action):
    """Appends (option, values) to one list shared by several options."""

    def __call__(self, parser, namespace, values, option_string=None):
        getattr(namespace, self.dest).append((option_string, values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", action="append", default=[])
    # The kinds of case share one list, so they keep the command line's order.
    for kind in ("case", "skip", "memory", "throughput", "connrate"):
        ap.add_argument("--" + kind, nargs=3, action=InOrder, dest="cases", default=[],
                        metavar=("ID", "TITLE", "REASON" if kind == "skip" else "FILE"))
    args = ap.parse_args()

    cases = {}
    for kind, (cid, title, arg) in args.cases:
        if kind == "--case":
            cases[cid] = {"title": title, **timing_case(arg)}
        elif kind == "--memory":
            cases[cid] = {"title": title, **memory_case(arg)}
        elif kind in ("--throughput", "--connrate"):
            unit = "MB/s" if kind == "--throughput" else "conn/s"
            cases[cid] = {"title": title, "kind": "rate", **rate_case(arg, unit)}
        else:
            cases[cid] = {"title": title, "skipped": arg}

    meta = dict(kv.split("=", 1) for kv in args.meta)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "cases": cases}, f, indent=2)
        f.write("\n")
    print("\n\n".join(t for t in (table(cases), rate_table(cases)) if t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
