#!/usr/bin/env python3
"""The retry-budget shoot-out's tables (docs/src/studies/budgets.md).

Reads results/budgets-tune-*.csv and results/budgets-shootout-{client,fleet,w2}.csv
(written by results/scripts/budgets_shootout.sh) and prints
results/budgets-shootout.md. Standard library only. Run from the repo root:

    python3 results/scripts/budgets_shootout.py > results/budgets-shootout.md

Every figure is a mean over the runs of its point with its 95% interval
(herdsim's Student t half-width; storm probability: stuck runs of decided runs,
Wilson 95%). A z-score of a difference is z = (a - b) / sqrt(se_a^2 + se_b^2),
se = ci95 / 1.96.
"""

import csv
import math
import sys

R = "results/"
CONTROLS = ["envoy", "tower", "finagle", "grpc", "aws2", "aws2026", "earned", "ratio"]
RHO = {"382.4": 0.5, "458.9": 0.6, "535.4": 0.7, "611.8": 0.8, "688.3": 0.9,
       "47.8": 0.5, "57.4": 0.6, "66.9": 0.7, "76.5": 0.8, "86": 0.9, "86.0": 0.9}
OUTAGE = "outage@2s..4s"
OUTAGE_S = 2.0


def name(rule):
    """A budget rule's short name."""
    if rule in ("", "none"):
        return "none"
    head = rule.split(":")[0]
    if head == "tokens":
        return "AWS 2026" if "cost:14" in rule else "AWS 2.0"
    if rule == "envoy:0.2,min:3":
        return "Envoy default"
    return {"envoy": "Envoy", "tower": "Linkerd", "finagle": "Finagle", "grpc": "gRPC",
            "earned": "Yandex", "ratio": "ratio"}[head]


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    return float(x) if x not in ("", None) else None


def se(ci):
    return (ci or 0.0) / 1.96


def z(a, sa, b, sb):
    d = math.sqrt(sa * sa + sb * sb)
    if d == 0:
        return float("inf") if a != b else 0.0
    return (a - b) / d


def rho(rate):
    return RHO.get(rate, RHO.get(rate.rstrip("0").rstrip("."), None))


class Sweep:
    def __init__(self, path):
        self.rows = read(path)
        self.budgets = []
        self.rates = []
        self.triggers = []
        self.at = {}
        for r in self.rows:
            b, t, x = r["budget"] or "none", r["trigger"] or "none", r["rate_per_s"]
            for lst, v in ((self.budgets, b), (self.triggers, t), (self.rates, x)):
                if v not in lst:
                    lst.append(v)
            self.at[(b, t, x)] = r
        self.rates.sort(key=float)

    def get(self, b, t, x, col):
        r = self.at[(b, t, x)]
        return num(r[col + "_mean"]), num(r.get(col + "_ci95"))

    def storm(self, b, t, x):
        r = self.at[(b, t, x)]
        return int(r["storm_stuck"]), int(r["storm_decided"]), int(r["storm_unresolved"])

    def warm_amp(self, b, x):
        """Attempts the outage adds per request made during it: 1 + (attempts with the
        outage - attempts without a trigger) / (rate x 2 s); the same seeds, so the
        same arrivals. Its se combines both points' (conservative: they correlate)."""
        a, ca = self.get(b, OUTAGE, x, "attempts")
        n, cn = self.get(b, "none", x, "attempts")
        k = float(x) * OUTAGE_S
        return 1 + (a - n) / k, math.sqrt(se(ca) ** 2 + se(cn) ** 2) / k


def fmt(m, ci, d=3):
    if m is None:
        return "–"
    return f"{m:.{d}f} ± {ci or 0:.{d}f}"


def stuck_note(s, b, t, x):
    k, n, u = s.storm(b, t, x)
    out = []
    if k:
        out.append(f"{k}/{n} stuck")
    if u:
        out.append(f"{u} unres.")
    return f" ({', '.join(out)})" if out else ""


def header(s):
    return ("| budget | " + " | ".join(f"ρ {rho(x)}" for x in s.rates) + " |\n"
            + "|---" * (len(s.rates) + 1) + "|")


def table_metric(s, t, col, d=3):
    print(header(s))
    for b in s.budgets:
        cells = []
        for x in s.rates:
            m, ci = s.get(b, t, x, col)
            cells.append(fmt(m, ci, d) + stuck_note(s, b, t, x))
        print(f"| {name(b)} | " + " | ".join(cells) + " |")
    print()


def table_storm(s, t):
    print(header(s))
    for b in s.budgets:
        cells = []
        for x in s.rates:
            k, n, u = s.storm(b, t, x)
            r = s.at[(b, t, x)]
            lo, hi = num(r["storm_low"]), num(r["storm_high"])
            cells.append(f"{k}/{n} [{lo:.2f}, {hi:.2f}]" + (f" {u} unres." if u else ""))
        print(f"| {name(b)} | " + " | ".join(cells) + " |")
    print()


def table_warm(s):
    print(header(s))
    for b in s.budgets:
        cells = []
        for x in s.rates:
            m, e = s.warm_amp(b, x)
            cells.append(f"{m:.3f} ± {1.96 * e:.3f}")
        print(f"| {name(b)} | " + " | ".join(cells) + " |")
    print()


def tuned():
    print("## The tuned settings\n")
    print("`herdsim tune scenarios/budgets/service.toml [--sources 1000] --control NAME …`, "
          "16 seeds, 2 refinement rounds, bound 1.2×: the row marked `best` (the most success "
          "with 10% of attempts failing, within the bound, surviving `outage@2s..4s`). "
          "Amplification is tune's cold outage (10 s of requests, all inside the failure, "
          "from an empty budget window).\n")
    print("| budget | scope | setting | amplification (cold outage) | success (10% failing) | stall stuck | within 1.2× |")
    print("|---|---|---|---|---|---|---|")
    best = {}
    for mode in ("client", "fleet"):
        for c in CONTROLS:
            rows = read(f"{R}budgets-tune-{c}-{mode}.csv")
            b = [r for r in rows if r["best"] == "yes"]
            if not b:
                al = sorted((r for r in rows if r["survives_stall"] == "yes"),
                            key=lambda r: float(r["amplification_mean"]))
                b, mark = al[:1], " (closest: none within the bound)"
            else:
                mark = ""
            r = b[0]
            best[(c, mode)] = r["rule"]
            print(f"| {name(r['rule'])} | {mode} | `{r['rule']}`{mark} | "
                  f"{fmt(num(r['amplification_mean']), num(r['amplification_ci95']))} | "
                  f"{fmt(num(r['success_mean']), num(r['success_ci95']), 4)} | "
                  f"{r['stall_stuck']} of {r['stall_runs']} | {r['within_bound']} |")
    print()
    return best


def floors():
    print("## Per-client floors in a fleet (from the tune CSVs)\n")
    print("Cold-outage amplification of the floor-based budgets at their default ratio "
          "(0.2), by floor, as one client and as 1,000 clients each with its own budget. "
          "A floor of N retries/s per client is 1,000 N retries/s for the fleet, against "
          "535 requests/s.\n")
    print("| budget | scope | min 0 | min 1 | min 3 | min 10 | min 30 |")
    print("|---|---|---|---|---|---|---|")
    for c in ("tower", "finagle", "ratio", "envoy"):
        for mode in ("client", "fleet"):
            rows = read(f"{R}budgets-tune-{c}-{mode}.csv")
            cells = []
            for m in ("0", "1", "3", "10", "30"):
                hit = [r for r in rows if r[c] == "0.2" and r["min"] == m]
                cells.append(fmt(num(hit[0]["amplification_mean"]), num(hit[0]["amplification_ci95"]))
                             if hit else "–")
            print(f"| {name(c + ':')} `{c}:0.2` | {mode} | " + " | ".join(cells) + " |")
    print()


def check(best, sweeps):
    """The sweeps must compare the settings tune calls best."""
    for mode in ("client", "fleet"):
        want = {best[(c, mode)] for c in CONTROLS}
        have = set(sweeps[mode].budgets) - {"none"}
        if want != have:
            sys.exit(f"budgets_shootout.py: the {mode} sweep's budgets {sorted(have)} "
                     f"are not tune's best {sorted(want)}")


def comparisons(sweeps):
    """The verdicts' pairs: (scope, trigger, rate, metric, a, b)."""
    print("## The verdicts' comparisons\n")
    print("z = (a − b)/√(se_a² + se_b²), se = ci95/1.96; metric `warm_amp` is the "
          "outage's attempts per request made during it (see above), the others are "
          "sweep columns (means over 16 runs).\n")
    print("| scope | trigger | ρ | metric | a | b | a − b | z |")
    print("|---|---|---|---|---|---|---|---|")
    c, f, w = sweeps["client"], sweeps["fleet"], sweeps["w2"]
    pairs = []

    def by(s, short):
        return [b for b in s.budgets if name(b) == short][0]

    for s, scope in ((c, "client"), (f, "fleet")):
        for x in s.rates:
            if rho(x) in (0.7, 0.9):
                pairs.append((s, scope, OUTAGE, x, "warm_amp", by(s, "Linkerd"), by(s, "AWS 2.0")))
                pairs.append((s, scope, OUTAGE, x, "warm_amp", by(s, "Envoy"), by(s, "AWS 2.0")))
                pairs.append((s, scope, OUTAGE, x, "warm_amp", by(s, "Finagle"), by(s, "AWS 2.0")))
                pairs.append((s, scope, OUTAGE, x, "warm_amp", by(s, "ratio"), by(s, "AWS 2.0")))
        for t in ("fail:0.1@2s..12s", "fail:0.25@2s..12s"):
            for x in s.rates:
                if rho(x) in (0.5, 0.7, 0.9):
                    for other in ("AWS 2.0", "gRPC", "Yandex", "Linkerd", "Finagle", "ratio"):
                        pairs.append((s, scope, t, x, "success_during_trigger", by(s, "Envoy"), by(s, other)))
    for x in w.rates:
        if rho(x) in (0.7, 0.9):
            pairs.append((w, "2 workers", OUTAGE, x, "warm_amp", by(w, "Envoy"), by(w, "AWS 2.0")))
            pairs.append((w, "2 workers", OUTAGE, x, "warm_amp", by(w, "Envoy default"), by(w, "AWS 2.0")))
            pairs.append((w, "2 workers", "fail:0.1@2s..12s", x, "success_during_trigger",
                          by(w, "Envoy"), by(w, "AWS 2.0")))
    for s, scope, t, x, col, a, b in pairs:
        if col == "warm_amp":
            ma, ea = s.warm_amp(a, x)
            mb, eb = s.warm_amp(b, x)
        else:
            ma, ca = s.get(a, t, x, col)
            mb, cb = s.get(b, t, x, col)
            if ma is None or mb is None:
                continue
            ea, eb = se(ca), se(cb)
        zz = z(ma, ea, mb, eb)
        print(f"| {scope} | {t} | {rho(x)} | {col} | {name(a)} {ma:.4f} | {name(b)} {mb:.4f} | "
              f"{ma - mb:+.4f} | {zz:+.1f} |")
    print()


def main():
    sweeps = {m: Sweep(f"{R}budgets-shootout-{m}.csv") for m in ("client", "fleet", "w2")}
    print("# The retry-budget shoot-out: tables\n")
    print("Written by `results/scripts/budgets_shootout.py` from the CSVs "
          "`results/scripts/budgets_shootout.sh` writes; the study is "
          "[docs/src/studies/budgets.md](../docs/src/studies/budgets.md). "
          "Service: `scenarios/budgets/service.toml` (16 workers, lognormal 20 ms/0.3, "
          "1 s timeout, 5 attempts of full jitter from 100 ms capped at 1 s), 35 s of "
          "load, patience 20 s, 16 seeds per point. Cells: mean ± 95% half-width; "
          "`k/n stuck` when runs ended stuck.\n")
    best = tuned()
    check(best, sweeps)
    floors()
    for mode, title in (("client", "One client (one budget for all 535 requests/s)"),
                        ("fleet", "A fleet of 1,000 clients, each its own budget"),
                        ("w2", "Low concurrency: 2 workers, one client")):
        s = sweeps[mode]
        print(f"## {title}\n")
        print("### Full outage `outage@2s..4s`: storm probability (stuck of decided runs, Wilson 95%)\n")
        table_storm(s, OUTAGE)
        print("### Full outage: attempts per request made during it (warm: the budget has "
              "seen 2 s of healthy traffic)\n")
        print("1 + (attempts with the outage − attempts without a trigger)/(λ × 2 s), same seeds.\n")
        table_warm(s)
        print("### Full outage: recovery (ms after its end, over recovered runs)\n")
        table_metric(s, OUTAGE, "recovery_ms", 0)
        for t in s.triggers:
            if t in ("none", OUTAGE):
                continue
            print(f"### `{t}`: success during the trigger\n")
            table_metric(s, t, "success_during_trigger", 3)
        print("### No trigger: amplification (attempts per request)\n")
        table_metric(s, "none", "amplification", 4)
    comparisons(sweeps)


if __name__ == "__main__":
    main()
