#!/usr/bin/env python3
"""AWS's 2026 retry change against 2.0 (docs/src/studies/aws-2026.md).

Reads what aws_2026.sh writes: the sweeps results/aws-2026-*.csv (one row
per point: each metric's mean and 95% half-width, the storm counts and
their Wilson interval) and, from its scratch directory, the same sweeps
with --per-run (one row per run: the recovery times, whose median the
tables give). Prints Markdown, one table per part of the study.

Every comparison is of 2026 against 2.0 on the same service, load, clients,
trigger and seeds. z = (a − b) / sqrt(se_a² + se_b²), se = ci95 / 1.96, a
the 2026 figure and b the 2.0 one; |z| ≥ 2 is called a difference. The
storm probability's z uses the mean and half-width of the 0/1 `stuck` of
the decided runs; the recovery's uses the mean over the recovered runs (the
table shows their median).
Usage: aws_2026.py RESULTS_DIR SCRATCH_DIR
"""
import csv
import math
import statistics
import sys

V20 = "tokens:500,cost:5,refund:1,timeout-cost:10"
V26 = "tokens:500,cost:14,refund:1,throttle-cost:5"
LABEL = {("full", V20): "2.0", ("aws-2026", V26): "2026",
         ("full", V26): "2.0 backoff, 2026 quota", ("aws-2026", V20): "2026 backoff, 2.0 quota"}
OUTAGES = (1, 2, 5, 10)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(s):
    return float(s) if s not in ("", None) else None


def behaviour(r):
    return LABEL[(r["policy"], r["budget"])] + (" adaptive" if r["throttle"] else "")


def medians(path):
    """Median recovery (ms) and the recovered runs' count, per point."""
    by = {}
    for r in rows(path):
        by.setdefault(r["point"], [])
        if r["recovery_ms"] != "":
            by[r["point"]].append(float(r["recovery_ms"]))
    return {p: (statistics.median(v) if v else None, len(v)) for p, v in by.items()}


def z(a_mean, a_ci, b_mean, b_ci):
    if None in (a_mean, b_mean):
        return None
    se = math.hypot((a_ci or 0.0) / 1.96, (b_ci or 0.0) / 1.96)
    if se == 0:
        return 0.0 if a_mean == b_mean else None
    return (a_mean - b_mean) / se


def fz(v):
    return "–" if v is None else f"{v:+.1f}"


def draining(r):
    """Runs neither recovered nor stuck: their backlog still falling at the window's end."""
    n = int(r["storm_draining"])
    return f"; {n} draining" if n else ""


def storm(r):
    return (f"{r['storm_stuck']}/{r['storm_decided']} ({float(r['storm_low']):.2f}–{float(r['storm_high']):.2f})"
            f"{draining(r)}")


def rec(med):
    m, n = med
    return "–" if m is None else f"{m / 1000:.1f} s ({n})"


def mean_ci(r, metric, digits):
    m, c = num(r[metric + "_mean"]), num(r[metric + "_ci95"])
    if m is None:
        return "–"
    return f"{m:.{digits}f} ± {c:.{digits}f}" if c is not None else f"{m:.{digits}f}"


def zs(a, b, metric):
    return z(num(a[metric + "_mean"]), num(a[metric + "_ci95"]), num(b[metric + "_mean"]), num(b[metric + "_ci95"]))


def key(r, *extra):
    return (r["rate_per_s"], r["sources"]) + tuple(r[e] for e in extra)


def rho(r):
    return f"{float(r['offered_load']):.2f}"


def pairs(data, first, second, *extra):
    """(first, second) rows of the same point, in the order of the file."""
    by = {}
    for r in data:
        by.setdefault(key(r, "trigger", "fail_rate", *extra), {})[behaviour(r)] = r
    out = []
    for r in data:
        if behaviour(r) == first:
            out.append((r, by[key(r, "trigger", "fail_rate", *extra)][second]))
    return out


def storm_z(a, b):
    return zs(a, b, "stuck")


def recovery_verdict(a, b, ma, mb, sz, rz):
    """2026 (a) against 2.0 (b) after a trigger."""
    da, db = int(a["storm_decided"]), int(b["storm_decided"])
    if int(a["storm_stuck"]) == da and int(b["storm_stuck"]) == db:
        return "both stuck through the window"
    # A run still draining at the window's end is neither stuck nor
    # recovered: where every run of one side drains, say so (a z-score of
    # the stuck share, both sides without spread, would read no difference).
    dra, drb = int(a["storm_draining"]), int(b["storm_draining"])
    if dra == da and drb == db:
        return "both draining through the window"
    if dra == da and int(b["storm_stuck"]) == db:
        return "2026 draining where 2.0 is stuck"
    if int(a["storm_stuck"]) == da and drb == db:
        return "2026 stuck where 2.0 is draining"
    if sz is not None and sz <= -2:
        return "2026 fewer storms"
    if sz is not None and sz >= 2:
        return "2026 more storms"
    if ma[0] is not None and mb[0] is not None and ma[0] == 0 and mb[0] == 0:
        return "no difference (both recover at once)"
    if rz is not None and rz <= -2:
        return "2026 recovers faster"
    if rz is not None and rz >= 2:
        return "2026 recovers slower"
    return "no difference"


def outage_table(root, scratch):
    data = rows(f"{root}/aws-2026-outage.csv")
    med = medians(f"{scratch}/aws-2026-outage-runs.csv")
    during = {}
    for length in OUTAGES:
        for r in rows(f"{root}/aws-2026-outage-during-{length}s.csv"):
            during[(behaviour(r), r["rate_per_s"], r["sources"], length)] = r
    print("## A full outage\n")
    print("Standard mode (adaptive mode's runs are the same: an unbounded queue never")
    print("throttles, so its rate limiter never starts).\n")
    print("### Storms and recovery\n")
    print("Storm: runs still unhealthy in the last quarter of the 120 s patience window, of")
    print("those decided, with the Wilson 95% interval, and the runs draining (neither")
    print("recovered nor stuck: their backlog still falling steadily at the window's end).")
    print("Recovery: the median time from the")
    print("outage's end until every later window is healthy, over the runs that recovered")
    print("(their number in brackets); its z is of the means.\n")
    print("| ρ | clients | outage | storm 2.0 | storm 2026 | z | recovery 2.0 | recovery 2026 | z | verdict |")
    print("| ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | --- |")
    found = []
    for b, a in pairs(data, "2.0", "2026"):
        length = round(float(b["trigger_length_ms"]) / 1000)
        db, da = during[("2.0", b["rate_per_s"], b["sources"], length)], during[("2026", a["rate_per_s"], a["sources"], length)]
        found.append((b, a, db, da, length))
        mb, ma = med[b["point"]], med[a["point"]]
        sz, rz = storm_z(a, b), zs(a, b, "recovery_ms")
        print(f"| {rho(b)} | {b['sources']} | {length} s | {storm(b)} | {storm(a)} | {fz(sz)} | {rec(mb)} | {rec(ma)} | {fz(rz)} "
              f"| {recovery_verdict(a, b, ma, mb, sz, rz)} |")
    print()
    print("### What the outage costs\n")
    print("Load in the outage: attempts sent during the outage per request made in it")
    print("(`aws-2026-outage-during-*.csv`: the same service with the outage from t = 0 and")
    print("the run cut at its end), the load the server sees while it is down as a multiple")
    print("of the offered load. Queue: the mean of each run's longest queue. Given up:")
    print("requests that ended without success over the whole run (the outage's and any")
    print("storm's after it).\n")
    print("| ρ | clients | outage | load in the outage 2.0 | 2026 | z | queue 2.0 | queue 2026 | z | given up 2.0 | given up 2026 | z |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for b, a, db, da, length in found:
        print(f"| {rho(b)} | {b['sources']} | {length} s "
              f"| {mean_ci(db, 'amplification', 3)} | {mean_ci(da, 'amplification', 3)} | {fz(zs(da, db, 'amplification'))} "
              f"| {float(b['queue_peak_mean']):,.0f} | {float(a['queue_peak_mean']):,.0f} | {fz(zs(a, b, 'queue_peak'))} "
              f"| {float(b['gave_up_mean']):,.0f} | {float(a['gave_up_mean']):,.0f} | {fz(zs(a, b, 'gave_up'))} |")
    print()


def partial_table(root, scratch):
    data = rows(f"{root}/aws-2026-partial.csv")
    whole = rows(f"{root}/aws-2026-partial-during.csv")
    med = medians(f"{scratch}/aws-2026-partial-runs.csv")
    w = {}
    for r in whole:
        w[(behaviour(r), r["rate_per_s"], r["sources"], float(r["fail_rate"]))] = r
    print("## A partial failure\n")
    print("Standard mode (adaptive mode's runs are the same here too). Success and attempts")
    print("per request: 10 s of load in which every attempt fails alone with probability p")
    print("(`aws-2026-partial-during.csv`), beside the exact figures of 3 attempts with")
    print("nothing to stop them, 1 − p³ and 1 + p + p². Storm and recovery: after the same")
    print("failure for 10 s from t = 2 s (`aws-2026-partial.csv`), as in the outage's table.\n")
    print("| ρ | clients | p | success 2.0 | success 2026 | exact | z | attempts/request 2.0 | 2026 | exact | z | storm 2.0 | storm 2026 | recovery 2.0 | recovery 2026 | verdict |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | --- |")
    for b, a in pairs(data, "2.0", "2026"):
        p = float(b["trigger"].split("@")[0].split(":")[1])
        wb, wa = w[("2.0", b["rate_per_s"], b["sources"], p)], w[("2026", a["rate_per_s"], a["sources"], p)]
        sz = zs(wa, wb, "success_rate")
        mb, ma = med[b["point"]], med[a["point"]]
        after = recovery_verdict(a, b, ma, mb, storm_z(a, b), zs(a, b, "recovery_ms"))
        if sz <= -2:
            verdict = "2026 rescues fewer"
        elif sz >= 2:
            verdict = "2026 rescues more"
        else:
            verdict = "same success"
        verdict += "; after: " + after
        print(f"| {rho(b)} | {b['sources']} | {p:g} | {mean_ci(wb, 'success_rate', 4)} | {mean_ci(wa, 'success_rate', 4)} | {1 - p ** 3:.4f} | {fz(sz)} "
              f"| {mean_ci(wb, 'amplification', 3)} | {mean_ci(wa, 'amplification', 3)} | {1 + p + p * p:.3f} | {fz(zs(wa, wb, 'amplification'))} "
              f"| {storm(b)} | {storm(a)} | {rec(mb)} | {rec(ma)} | {verdict} |")
    print()


def throttle_table(root, scratch):
    data = rows(f"{root}/aws-2026-throttle.csv")
    med = medians(f"{scratch}/aws-2026-throttle-runs.csv")
    print("## A service that throttles\n")
    print("The same service with a 64-place queue: an attempt finding it full is refused at")
    print("once, a throttling error. A 2 s trigger from t = 2 s: the workers stop")
    print("(`capacity:0`), the rate of new requests doubles (`spike:2`), or every attempt")
    print("served fails (`outage`). Success in the trigger: successes per request ended")
    print("during it. p99: the 99th percentile latency of the run's successful requests,")
    print("retries and backoff (and the adaptive limiter's wait) included.\n")
    for mode, first, second in (("standard", "2.0", "2026"), ("adaptive", "2.0 adaptive", "2026 adaptive")):
        print(f"### {mode.capitalize()} mode\n")
        print("| trigger | ρ | clients | storm 2.0 | storm 2026 | z | recovery 2.0 | recovery 2026 | z | success in the trigger 2.0 | 2026 | z | p99 2.0 (ms) | p99 2026 (ms) | verdict |")
        print("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for b, a in pairs(data, first, second):
            mb, ma = med[b["point"]], med[a["point"]]
            sz, rz = storm_z(a, b), zs(a, b, "recovery_ms")
            kind = b["trigger"].split("@")[0]
            print(f"| `{kind}` | {rho(b)} | {b['sources']} | {storm(b)} | {storm(a)} | {fz(sz)} | {rec(mb)} | {rec(ma)} | {fz(rz)} "
                  f"| {mean_ci(b, 'success_during_trigger', 3)} | {mean_ci(a, 'success_during_trigger', 3)} | {fz(zs(a, b, 'success_during_trigger'))} "
                  f"| {float(b['latency_p99_ms_mean']):,.0f} | {float(a['latency_p99_ms_mean']):,.0f} | {recovery_verdict(a, b, ma, mb, sz, rz)} |")
        print()


def decompose_table(root, scratch):
    data = rows(f"{root}/aws-2026-decompose.csv")
    med = medians(f"{scratch}/aws-2026-decompose-runs.csv")
    names = ("2.0", "2.0 backoff, 2026 quota", "2026 backoff, 2.0 quota", "2026")
    by = {}
    for r in data:
        by.setdefault(key(r, "trigger"), {})[behaviour(r)] = r
    print("## Which change does what\n")
    print("The 2026 backoff (a 50 ms base) and the 2026 quota (a retry costs 14 tokens), each")
    print("alone, beside 2.0 and 2026: storm, median recovery (recovered runs) and mean")
    print("longest queue, through a 2 s and a 5 s outage (`aws-2026-decompose.csv`).\n")
    print("| ρ | clients | outage | " + " | ".join(names) + " |")
    print("| ---: | ---: | ---: | " + " | ".join("---" for _ in names) + " |")
    for k, group in by.items():
        r0 = group["2.0"]
        cells = []
        for n in names:
            r = group[n]
            cells.append(f"{r['storm_stuck']}/{r['storm_decided']} stuck{draining(r)}, {rec(med[r['point']])}, queue {float(r['queue_peak_mean']):,.0f}")
        print(f"| {rho(r0)} | {r0['sources']} | {round(float(r0['trigger_length_ms']) / 1000)} s | " + " | ".join(cells) + " |")
    print()


def main():
    root, scratch = sys.argv[1], sys.argv[2]
    print("# AWS SDK retries: behaviour 2.0 against 2026\n")
    print("Made by `results/scripts/aws_2026.sh` from the sweeps of `scenarios/aws-2026/`;")
    print("the study is `docs/src/studies/aws-2026.md`. The service: 16 workers of a")
    print("lognormal 20 ms service (mean 20.9 ms) behind an unbounded FIFO queue, 535 or 650")
    print("requests/s (ρ 0.70 or 0.85), a 1 s timeout that does not cancel the server's work,")
    print("from 1, 100 or 1,000 SDK clients, each with its own retry quota; 3 attempts.")
    print("2.0: full jitter from 1 s, quota 500 tokens, a retry 5, after a timeout 10. 2026:")
    print("full jitter from 50 ms (1 s after a throttle), a retry 14, after a throttle 5. 32")
    print("seeds per point from master seed 42, the patience window fixed at 120 s. z compares")
    print("2026 with 2.0 (positive: 2026's figure is higher), se = ci95 / 1.96.\n")
    outage_table(root, scratch)
    partial_table(root, scratch)
    throttle_table(root, scratch)
    decompose_table(root, scratch)


if __name__ == "__main__":
    main()
