#!/usr/bin/env python3
"""Splitting, brute force, the simulator's passage times and the exact chain,
side by side (results/splitting-agreement.md; issue 38, item 4).

Every cell is one Markovian service that `herdsim exact` solves and `herdsim
run` simulates with the same flags. For each, the chain's storm probability
(storm before calm after the trigger) against:
  - plain runs (brute force, where affordable): k of n, z = (k/n − p) / √(p(1 − p)/n);
  - splitting: the mean of M batches of N paths, z = (mean − p) / (sd/√M);
and, for the plain runs, the return time after the trigger (and, with no
trigger, the first passage from empty) against the chain's, z = (mean − exact)
/ (ci95/1.96). Writes results/splitting-agreement.csv and pastes its tables
into results/splitting-agreement.md between the page's markers.

Usage: splitting_agreement.py HERDSIM RESULTS_DIR
"""
import csv
import math
import sys

from pages import herdsim, paste

RETRIES = ["--workers", "1", "--queue-limit", "10", "--service", "exp:1ms",
           "--discipline", "random", "--policy", "memoryless", "--base", "20ms",
           "--cap", "10s", "--budget", "persistence:0.75"]
TIMEOUTS = ["--timeout", "10ms", "--timeout-law", "exponential"]
MM1 = ["--workers", "1", "--queue-limit", "40", "--service", "exp:1ms",
       "--discipline", "random", "--max-attempts", "1", "--rate", "500"]

# (case, service flags, trigger, duration, [(high, low, plain seeds, paths, batches)])
CASES = [
    ("retries+timeouts ρ0.4, outage 20 ms", RETRIES + TIMEOUTS + ["--rate", "400"],
     "outage@500ms..520ms", "2s",
     [(12, 1, 100000, 1000, 20), (20, 1, 100000, 1000, 20), (30, 1, 100000, 1000, 20),
      (35, 1, 0, 1000, 20), (40, 1, 0, 1000, 40), (43, 1, 0, 1000, 40)]),
    ("retries ρ0.4, fail:0.5 for 20 ms", RETRIES + ["--rate", "400"],
     "fail:0.5@300ms..320ms", "1s",
     [(12, 1, 100000, 1000, 20), (20, 1, 0, 1000, 20), (25, 1, 0, 1000, 40)]),
    ("retries+timeouts ρ0.6, outage 20 ms", RETRIES + TIMEOUTS + ["--rate", "600"],
     "outage@500ms..520ms", "5s",
     [(43, 1, 20000, 1000, 20), (60, 1, 0, 1000, 20)]),
    ("M/M/1/40 ρ0.5, no retries, outage 10 ms", MM1,
     "outage@500ms..510ms", "1s",
     [(8, 1, 100000, 1000, 20), (14, 1, 0, 1000, 40), (30, 1, 0, 1000, 40)]),
]


# With no trigger: the mean first passage from an empty service into the
# storm region. (service flags, high, low, duration, seeds)
PASSAGES = [
    ("retries+timeouts ρ0.6", RETRIES + TIMEOUTS + ["--rate", "600"], 9, 1, "5s", 20000),
    ("retries+timeouts ρ0.6", RETRIES + TIMEOUTS + ["--rate", "600"], 15, 1, "5s", 20000),
]


def main():
    lines = []

    def out(text="", file=None):
        if file is None:
            lines.append(text)
        else:
            print(text, file=file)

    binary, results = sys.argv[1], sys.argv[2]
    rows = []
    for case, flags, trigger, duration, levels in CASES:
        for high, low, seeds, paths, batches in levels:
            regions = ["--high", str(high), "--low", str(low)]
            chain = herdsim(binary, ["exact", *flags, "--trigger", trigger, *regions,
                                     "--orbit-cap", "120", "--json"])
            after = chain["after_trigger"]
            p = after["storm_probability"]
            row = {"case": case, "trigger": trigger, "high": high, "low": low,
                   "chain_storm_probability": p,
                   "chain_return_s": after["return_time"]["mean_s"]}
            args = ["run", "--resource", "server", *flags, "--trigger", trigger,
                    "--duration", duration, *regions, "--json", "-q"]
            if seeds:
                run = herdsim(binary, args + ["--seeds", str(seeds)])
                plain = run["backlog"]["plain"]
                k, n = plain["storm"], plain["runs"]
                ret = plain["to_calm"]
                row.update({
                    "plain_runs": n, "plain_storms": k, "plain_p": k / n,
                    "plain_wilson_low": plain["wilson_low"],
                    "plain_wilson_high": plain["wilson_high"],
                    "z_plain": (k / n - p) / math.sqrt(p * (1 - p) / n),
                    "plain_return_s": ret["mean_s"],
                    "z_return": (ret["mean_s"] - row["chain_return_s"]) / (ret["ci95_s"] / 1.96),
                })
            run = herdsim(binary, args + ["--seeds", "2", "--splitting", str(paths),
                                          "--batches", str(batches)])
            s = run["backlog"]["splitting"]
            b = s["batch_estimates"]
            m = len(b)
            mean = sum(b) / m
            se = math.sqrt(sum((x - mean) ** 2 for x in b) / (m - 1) / m)
            row.update({
                "split_paths": paths, "split_batches": batches, "split_p": mean,
                "split_se": se, "z_split": (mean - p) / se if se > 0 else "",
                "split_paths_run": s["paths"], "split_events": s["events"],
                "gain_in_events": s["gain_in_events"] or "",
            })
            rows.append(row)
            out(f"{case} high {high}: chain {p:.4e}, splitting {mean:.4e} ± {se:.2e}"
                  + (f", plain {row['plain_p']:.4e}" if seeds else ""), file=sys.stderr)
    fields = ["case", "trigger", "high", "low", "chain_storm_probability",
              "plain_runs", "plain_storms", "plain_p", "plain_wilson_low",
              "plain_wilson_high", "z_plain", "split_paths", "split_batches", "split_p",
              "split_se", "z_split", "split_paths_run", "split_events", "gain_in_events",
              "chain_return_s", "plain_return_s", "z_return"]
    with open(f"{results}/splitting-agreement.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                        for k, v in r.items() if k in fields})

    def g(v, spec=".3e"):
        return "" if v in ("", None) else format(v, spec)

    out("| service | storm ≥ | chain | plain runs | z | splitting (N × M) | z | gain |")
    out("|---|---:|---:|---|---:|---|---:|---:|")
    for r in rows:
        plain = (f"{r['plain_storms']} of {r['plain_runs']:,} = {r['plain_p']:.3e}"
                 if "plain_runs" in r else "")
        out(f"| {r['case']} | {r['high']} | {r['chain_storm_probability']:.3e} | {plain} "
              f"| {g(r.get('z_plain'), '+.2f')} | {r['split_p']:.3e} ± {r['split_se']:.1e} "
              f"({r['split_paths']} × {r['split_batches']}) | {g(r['z_split'], '+.2f')} "
              f"| {g(r['gain_in_events'], '.1f')} |")
    out()
    out("| service | chain's return to calm (≤ 1) | simulator's (plain runs) | z |")
    out("|---|---:|---:|---:|")
    shown = set()
    for r in rows:
        # The return to calm does not depend on the storm region: once a case.
        if "plain_return_s" in r and r["case"] not in shown:
            shown.add(r["case"])
            out(f"| {r['case']} | {1e3 * r['chain_return_s']:.3f} ms "
                  f"| {1e3 * r['plain_return_s']:.3f} ms | {r['z_return']:+.2f} |")

    out()
    out("| service (no trigger) | storm ≥ | chain's first passage | simulator's | runs reaching it | z |")
    out("|---|---:|---:|---:|---:|---:|")
    for case, flags, high, low, duration, seeds in PASSAGES:
        regions = ["--high", str(high), "--low", str(low)]
        chain = herdsim(binary, ["exact", *flags, *regions, "--orbit-cap", "120", "--json"])
        exact = chain["time_to_storm"]["mean_s"]
        run = herdsim(binary, ["run", "--resource", "server", *flags, *regions,
                               "--duration", duration, "--seeds", str(seeds), "--json", "-q"])
        plain = run["backlog"]["plain"]
        t = plain["to_storm"]
        z = (t["mean_s"] - exact) / (t["ci95_s"] / 1.96)
        out(f"| {case} | {high} | {1e3 * exact:.3f} ms | {1e3 * t['mean_s']:.3f} ms "
              f"| {plain['storm']:,} of {plain['runs']:,} | {z:+.2f} |")

    paste(f"{results}/splitting-agreement.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
