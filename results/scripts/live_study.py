#!/usr/bin/env python3
"""herdsim against a real server (issue 58, item 3; docs/src/studies/live.md).

For each scenario of scenarios/live/: N live runs, each a fresh `herdsim
serve` on a free loopback port and a `herdsim drill` against it (seeds 1 to
N: other arrival times each run), beside `herdsim run` of the same file over
M simulated seeds. Per metric, z = (mean_live − mean_sim) /
√(s²_live/n_live + s²_sim/n_sim); the verdict's share of stuck runs the same
way (its 0/1 values). First the testbed's own faithfulness: serve and drill
at rising rates with no trigger, how late their timers fire.

Each |z| >= 3 is then put to runs that isolate its cause: the simulation
calibrated by what the testbed measured in that scenario's live runs (the
serve's service-sleep lateness, the round trip, the timeouts' lateness), one
at a time and all together, and live runs with one thing changed
(ISOLATIONS).

Writes into RESULTS_DIR: live-faithfulness.csv, live-runs.csv (every live
run and its timers), live-study.csv (per scenario and metric: both means,
spreads and z), live-calibrated.csv, live-isolated.csv, live-<scenario>.svg
(the series drawn together), and pastes the tables into live-study.md
between its markers.

Usage: live_study.py BIN_DIR RESULTS_DIR [--runs N] [--seeds M]
       [--only NAME] [--no-faithfulness]
BIN_DIR holds `herdsim` and `herdsim-live` (release builds). Loopback only;
every serve stops by itself (--for) or at the Ctrl-C this script sends.
"""
import argparse
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from pages import paste

SCENARIOS = ["stall-recovers", "stall-stuck", "stall-budget", "partial", "spike"]
# Compared per run; server_amplification is the serve's attempts over the
# drill's requests live, the simulator's own metric simulated.
METRICS = ["server_amplification", "amplification", "success_rate",
           "success_during_trigger", "success_after_trigger", "recovery_ms",
           "timeouts", "latency_p50_ms"]
# The faithfulness sweep: requests/s, workers (ρ = 0.5 at 1 ms), seconds.
RATES = [500, 1000, 2000, 3000, 5000, 7500, 10000]
# Live runs that isolate a cause (name, scenario, the serve's own flags,
# what it tests, the metric to watch): the serve's clock starts when the
# drill's first request arrives, less the drill's send time, and that
# request also opens the connection, so the serve's outage may end after
# the drill's; moving the serve's 1 ms earlier tests it.
ISOLATIONS = [
    ("serve's outage 1 ms earlier", "stall-budget",
     ["--trigger", "outage@1999ms..2499ms"], "success_after_trigger"),
]
# The simulation calibrated by what the testbed measured, one cause at a
# time, then all: (name, which measured lateness it adds).
CALIBRATIONS = [("service", ["service"]), ("network", ["network"]),
                ("timeout", ["timeout"]), ("all", ["service", "network", "timeout"])]


def parse_lateness(text, label):
    """`label: n N, mean M µs, p50 A µs, p99 B µs, max C µs` as a dict."""
    m = re.search(label + r"[^:]*: n (\d+), mean (\d+) µs, p50 (\d+) µs, p99 (\d+) µs, "
                  r"max (\d+) µs", text)
    if not m:
        return {"n": 0, "mean": 0, "p50": 0, "p99": 0, "max": 0}
    return dict(zip(["n", "mean", "p50", "p99", "max"], map(int, m.groups())))


def live_run(bins, scenario_args, seed, workdir, serve_for, serve_extra=()):
    """One serve and one drill against it; the drill's JSON metrics and
    series, the serve's series and totals, and both sides' timers.
    `serve_extra`: flags for the serve alone (an isolating run's)."""
    serve_csv = os.path.join(workdir, "serve.csv")
    drill_csv = os.path.join(workdir, "drill.csv")
    server = subprocess.Popen(
        [os.path.join(bins, "herdsim-live"), "serve", *scenario_args, "--seed", str(seed),
         "--listen", "127.0.0.1:0", "--for", serve_for, "--series", serve_csv, "--force",
         *serve_extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = re.search(r"127\.0\.0\.1:(\d+)", server.stderr.readline()).group(1)
        drill = subprocess.run(
            [os.path.join(bins, "herdsim-live"), "drill", *scenario_args, "--seed", str(seed),
             "--target", f"http://127.0.0.1:{port}", "--json", "--series", drill_csv,
             "--force"], capture_output=True, text=True, timeout=300, check=True)
    finally:
        time.sleep(0.2)
        server.send_signal(signal.SIGINT)
        serve_out, _ = server.communicate(timeout=30)
    report = json.loads(drill.stdout)
    run = {k: v["mean"] for k, v in report["metrics"].items()}
    served = int(re.search(r"(\d+) attempts arrived", serve_out).group(1))
    run["server_amplification"] = served / run["requests"]
    run["verdict"] = ("stuck" if run["stuck"] else "draining" if run["draining"]
                      else "unresolved" if run["unresolved"] else "recovered")
    timers = {
        "service": parse_lateness(serve_out, "service sleeps ended late"),
        "arrivals": parse_lateness(drill.stderr, "arrivals sent late"),
        "timeouts": parse_lateness(drill.stderr, "timeouts fired late"),
        "retries": parse_lateness(drill.stderr, "retry delays ended late"),
    }
    with open(serve_csv) as f:
        serve_series = list(csv.DictReader(f))
    with open(drill_csv) as f:
        drill_series = list(csv.DictReader(f))
    util = re.search(r"utilisation ([\d.]+)", serve_out).group(1)
    connections = re.search(r"(\d+) connections accepted", serve_out)
    run["connections_per_attempt"] = (int(connections.group(1)) / served if connections and served
                                      else None)
    return run, timers, serve_series, drill_series, float(util)


def simulate(bins, scenario_args, seeds, workdir):
    """`herdsim run` over `seeds` replicates: every run's metrics and
    verdict, and every replicate's series."""
    series = os.path.join(workdir, "sim.csv")
    done = subprocess.run(
        [os.path.join(bins, "herdsim"), "run", *scenario_args, "--seeds", str(seeds), "-q",
         "--json", "--per-run", "--series", series, "--series-all", "--force"],
        capture_output=True, text=True, check=True)
    report = json.loads(done.stdout)
    runs = []
    for r in report["runs"]:
        m = dict(r["metrics"])
        m["verdict"] = r.get("verdict", "none")
        runs.append(m)
    with open(series) as f:
        rows = list(csv.DictReader(f))
    return runs, rows


def mean_sd(values):
    n = len(values)
    if n == 0:
        return None, None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def zscore(live, sim):
    (ml, sl), (ms, ss) = mean_sd(live), mean_sd(sim)
    if ml is None or ms is None:
        return None
    se = math.sqrt(sl ** 2 / len(live) + ss ** 2 / len(sim))
    if se == 0:
        return 0.0 if ml == ms else math.inf
    return (ml - ms) / se


def values(runs, metric):
    if metric == "stuck_share":
        return [1.0 if r["verdict"] == "stuck" else 0.0 for r in runs]
    return [float(r[metric]) for r in runs if r.get(metric) is not None]


def faithfulness(bins, workdir, out):
    """Serve and drill at each rate, no trigger, ρ = 0.5: their timers."""
    rows = []
    for rate in RATES:
        workers = max(1, rate // 500)
        args = ["--resource", "server", "--rate", str(rate), "--workers", str(workers),
                "--service", "exp:1ms",
                "--timeout", "100ms", "--policy", "no-backoff", "--max-attempts", "4",
                "--duration", "4s"]
        run, timers, _, _, util = live_run(bins, args, 1, workdir, "10s")
        sim, _ = simulate(bins, args, 20, workdir)
        row = {"rate": rate, "workers": workers, "utilisation": round(util, 4),
               "latency_p50_ms": round(run["latency_p50_ms"], 3),
               "sim_latency_p50_ms": round(mean_sd(values(sim, "latency_p50_ms"))[0], 3),
               "latency_p99_ms": round(run["latency_p99_ms"], 3),
               "sim_latency_p99_ms": round(mean_sd(values(sim, "latency_p99_ms"))[0], 3),
               "timeouts": int(run["timeouts"])}
        for side, t in timers.items():
            for k in ["mean", "p50", "p99", "max"]:
                row[f"{side}_late_{k}_us"] = t[k]
        rows.append(row)
        print(f"faithfulness {rate}/s: {row}", file=sys.stderr)
        time.sleep(1)
    write_csv(os.path.join(out, "live-faithfulness.csv"), rows)
    return rows


def round_trip(bins, workdir):
    """What a call costs beyond its service: a drill of 100 requests/s
    against one worker of constant 1 ms (no queueing to speak of); its
    median latency less the service held (1 ms and the sleep's lateness)
    is HTTP, loopback and scheduling, both ways. µs."""
    args = ["--resource", "server", "--rate", "100", "--workers", "1", "--service", "const:1ms",
            "--duration", "5s",
            "--timeout", "100ms", "--max-attempts", "1"]
    run, timers, _, _, _ = live_run(bins, args, 1, workdir, "10s")
    overhead = run["latency_p50_ms"] * 1000 - 1000 - timers["service"]["p50"]
    print(f"round trip: latency p50 {run['latency_p50_ms']:.3f} ms, service late p50 "
          f"{timers['service']['p50']} µs: overhead {overhead:.0f} µs", file=sys.stderr)
    return max(0.0, overhead)


def calibrated_args(kinds, lateness, overhead_us):
    """Flags that give the simulation what the testbed measured: service
    held longer by the sleeps' mean lateness, the round trip's overhead
    split between request and reply, timeouts later by theirs."""
    flags = []
    if "service" in kinds:
        flags += ["--service", f"exp:{1000 + lateness['service']:.0f}us"]
    if "network" in kinds:
        half = overhead_us / 2
        flags += ["--request-delay", f"const:{half:.0f}us", "--reply-delay", f"const:{half:.0f}us"]
    if "timeout" in kinds:
        flags += ["--timeout", f"{100000 + lateness['timeout']:.0f}us"]
    return flags


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def fmt(x, digits=3):
    if x is None:
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:,.{digits}f}"


def window_means(rows, column, key="window_start_ms", group="replicate"):
    """Per window, the mean over the runs that have a value of `column`
    there, and the 5th and 95th percentiles over them."""
    by_run = {}
    for r in rows:
        if r[column] not in ("", None):
            by_run.setdefault(r.get(group, "0"), {})[float(r[key])] = float(r[column])
    windows = sorted({w for run in by_run.values() for w in run})
    out = []
    for w in windows:
        vals = sorted(run[w] for run in by_run.values() if w in run)
        n = len(vals)
        out.append((w, sum(vals) / n, vals[int(0.05 * (n - 1))], vals[int(0.95 * (n - 1) + 0.5)]))
    return out


def svg_picture(path, title, panels, t_end_ms, shade):
    """Panels of (label, sim band [(w, mean, lo, hi)], live runs [[(w, y)]])
    over [0, t_end_ms], the trigger window shaded."""
    width, ph, left, top = 760, 190, 70, 40
    height = top + len(panels) * (ph + 40) + 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    pw = width - left - 20

    def x_of(t):
        return left + pw * t / t_end_ms

    for i, (label, band, runs) in enumerate(panels):
        y0 = top + i * (ph + 40)
        ymax = max([hi for w, _, _, hi in band if w <= t_end_ms] +
                   [y for run in runs for w, y in run if w <= t_end_ms] + [1e-9]) * 1.08

        def y_of(v):
            return y0 + ph - ph * v / ymax

        a, b = shade
        parts.append(f'<rect x="{x_of(a):.1f}" y="{y0}" width="{x_of(b) - x_of(a):.1f}" '
                     f'height="{ph}" fill="#f4d6d6"/>')
        parts.append(f'<rect x="{left}" y="{y0}" width="{pw}" height="{ph}" fill="none" '
                     f'stroke="#888"/>')
        for k in range(5):
            v = ymax / 1.08 * k / 4
            parts.append(f'<text x="{left - 6}" y="{y_of(v) + 4:.1f}" text-anchor="end">'
                         f'{v:,.3g}</text>')
            parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{y_of(v):.1f}" '
                         f'y2="{y_of(v):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left + 4}" y="{y0 + 14}">{label}</text>')
        pts = [(w, lo, hi) for w, _, lo, hi in band if w <= t_end_ms]
        if pts:
            poly = " ".join(f"{x_of(w):.1f},{y_of(hi):.1f}" for w, _, hi in pts)
            poly += " " + " ".join(f"{x_of(w):.1f},{y_of(lo):.1f}" for w, lo, _ in reversed(pts))
            parts.append(f'<polygon points="{poly}" fill="#9ecae1" fill-opacity="0.5"/>')
            line = " ".join(f"{x_of(w):.1f},{y_of(m):.1f}" for w, m, _, _ in band
                            if w <= t_end_ms)
            parts.append(f'<polyline points="{line}" fill="none" stroke="#08519c" '
                         f'stroke-width="2"/>')
        for run in runs:
            line = " ".join(f"{x_of(w):.1f},{y_of(y):.1f}" for w, y in run if w <= t_end_ms)
            parts.append(f'<polyline points="{line}" fill="none" stroke="#d94801" '
                         f'stroke-width="1" stroke-opacity="0.7"/>')
    yb = top + len(panels) * (ph + 40) - 22
    for k in range(0, int(t_end_ms / 1000) + 1, 2):
        parts.append(f'<text x="{x_of(k * 1000):.1f}" y="{yb}" text-anchor="middle">{k} s'
                     f'</text>')
    parts.append(f'<line x1="{left}" x2="{left + 24}" y1="{yb + 16}" y2="{yb + 16}" '
                 f'stroke="#08519c" stroke-width="2"/><text x="{left + 30}" y="{yb + 20}">'
                 'simulated: mean over seeds, 5–95% band</text>')
    parts.append(f'<line x1="{left + 330}" x2="{left + 354}" y1="{yb + 16}" y2="{yb + 16}" '
                 f'stroke="#d94801"/><text x="{left + 360}" y="{yb + 20}">each live run '
                 '(drill against serve)</text>')
    parts.append("</svg>\n")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def trigger_window(scenario_path):
    with open(scenario_path) as f:
        text = f.read()
    m = re.search(r'trigger = "[^@]+@([\d.]+)s\.\.([\d.]+)s"', text)
    return float(m.group(1)) * 1000, float(m.group(2)) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bins")
    parser.add_argument("results")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--only", action="append")
    parser.add_argument("--no-faithfulness", action="store_true")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    workdir = tempfile.mkdtemp(prefix="herdsim-live-study-")
    faith = [] if args.no_faithfulness else faithfulness(args.bins, workdir, args.results)
    overhead_us = round_trip(args.bins, workdir)
    summary, live_rows, calibrated = [], [], []
    for name in args.only or SCENARIOS:
        path = os.path.join(root, "scenarios", "live", f"{name}.toml")
        sim_runs, sim_series = simulate(args.bins, [path], args.seeds, workdir)
        live, serve_series, drill_series = [], [], []
        for i in range(args.runs):
            seed = i + 1
            run, timers, s_rows, d_rows, util = live_run(args.bins, [path], seed, workdir, "60s")
            live.append(run)
            for r in s_rows:
                r["replicate"] = str(i)
            serve_series += s_rows
            for r in d_rows:
                r["replicate"] = str(i)
            drill_series += d_rows
            row = {"scenario": name, "run": i, "seed": seed, "verdict": run["verdict"]}
            row.update({m: run.get(m) for m in METRICS})
            row["requests"] = run["requests"]
            row["server_utilisation"] = util
            row["connections_per_attempt"] = run["connections_per_attempt"]
            for side, t in timers.items():
                row[f"{side}_late_mean_us"] = t["mean"]
                row[f"{side}_late_p99_us"] = t["p99"]
            live_rows.append(row)
            print(f"{name} live {i}: {run['verdict']} amp {run['server_amplification']:.3f}",
                  file=sys.stderr)
            time.sleep(1)
        for metric in METRICS + ["stuck_share"]:
            lv, sv = values(live, metric), values(sim_runs, metric)
            (ml, sl), (ms, ss) = mean_sd(lv), mean_sd(sv)
            summary.append({"scenario": name, "metric": metric, "n_live": len(lv),
                            "live_mean": ml, "live_sd": sl, "n_sim": len(sv), "sim_mean": ms,
                            "sim_sd": ss, "z": zscore(lv, sv)})
        lateness = {
            "service": mean_sd([r["service_late_mean_us"] for r in live_rows
                                if r["scenario"] == name])[0],
            "timeout": mean_sd([r["timeouts_late_mean_us"] for r in live_rows
                                if r["scenario"] == name])[0],
        }
        for label, kinds in CALIBRATIONS:
            flags = calibrated_args(kinds, lateness, overhead_us)
            cal_runs, _ = simulate(args.bins, [path, *flags], args.seeds, workdir)
            for metric in METRICS + ["stuck_share"]:
                lv, sv = values(live, metric), values(cal_runs, metric)
                calibrated.append({"scenario": name, "calibration": label,
                                   "flags": " ".join(flags), "metric": metric,
                                   "sim_mean": mean_sd(sv)[0], "z": zscore(lv, sv)})
        a, b = trigger_window(path)
        end = max(float(r["window_start_ms"]) for r in drill_series)

        def runs_of(rows, column):
            by = {}
            for r in rows:
                if r[column] not in ("", None):
                    by.setdefault(r["replicate"], []).append(
                        (float(r["window_start_ms"]), float(r[column])))
            return list(by.values())

        svg_picture(
            os.path.join(args.results, f"live-{name}.svg"),
            f"{name}: {args.runs} live runs (drill against serve) over {args.seeds} "
            "simulated seeds",
            [("attempts reaching the server per 100 ms window",
              window_means(sim_series, "attempts"), runs_of(serve_series, "attempts")),
             ("requests succeeding per window (client side)",
              window_means(sim_series, "successes"), runs_of(drill_series, "successes")),
             ("success rate of the requests ending in the window",
              window_means(sim_series, "success_rate"), runs_of(drill_series, "success_rate"))],
            end, (a, b))
    isolated = []
    for label, name, serve_extra, metric in ISOLATIONS:
        if args.only and name not in args.only:
            continue
        path = os.path.join(root, "scenarios", "live", f"{name}.toml")
        vals = []
        for i in range(args.runs):
            run, *_ = live_run(args.bins, [path], i + 1, workdir, "60s", serve_extra)
            vals.append(float(run[metric]))
            time.sleep(1)
        plain = [float(r[metric]) for r in live_rows if r["scenario"] == name]
        isolated.append({"isolation": label, "scenario": name, "serve_flags": " ".join(serve_extra),
                         "metric": metric, "n": len(vals), "mean": mean_sd(vals)[0],
                         "sd": mean_sd(vals)[1], "runs_below_1": sum(v < 1 for v in vals),
                         "plain_mean": mean_sd(plain)[0],
                         "plain_runs_below_1": sum(v < 1 for v in plain)})
        print(f"isolation {label}: {isolated[-1]}", file=sys.stderr)
    if isolated:
        write_csv(os.path.join(args.results, "live-isolated.csv"), isolated)
    write_csv(os.path.join(args.results, "live-runs.csv"), live_rows)
    write_csv(os.path.join(args.results, "live-study.csv"), summary)
    write_csv(os.path.join(args.results, "live-calibrated.csv"), calibrated)
    load_after = os.getloadavg()
    tables = render(summary, faith, live_rows, calibrated, overhead_us, args, started,
                    load_before, load_after, isolated)
    paste(os.path.join(args.results, "live-study.md"), tables)


def faithful(row):
    """The testbed held at this rate (see the page's criterion)."""
    return (row["timeouts"] == 0 and abs(row["utilisation"] - 0.5) <= 0.03
            and row["latency_p99_ms"] <= 1.5 * row["sim_latency_p99_ms"] + 1.0)


def highest_in_a_row(faith):
    """The highest rate with every rate up to it faithful."""
    best = 0
    for r in sorted(faith, key=lambda r: r["rate"]):
        if not faithful(r):
            break
        best = r["rate"]
    return best


def zfmt(z):
    if z is None:
        return "–"
    flag = " ◀" if abs(z) >= 3 else ""
    return ("∞" if math.isinf(z) else f"{z:+.2f}") + flag


def render(summary, faith, live_rows, calibrated, overhead_us, args, started, load_before,
           load_after, isolated):
    lines = [f"Made {started} on {os.uname().nodename} ({os.cpu_count()} cores), "
             f"{args.runs} live runs and {args.seeds} simulated seeds per scenario; "
             f"1-minute load {load_before[0]:.2f} before, {load_after[0]:.2f} after.", ""]
    if faith:
        lines += ["Faithfulness: serve and drill at each rate, ρ = 0.5 (workers = rate/500, "
                  "exp:1ms), 4 s of load, no trigger, one live run beside 20 simulated seeds; "
                  "lateness past the deadline in µs (mean / p99).", "",
                  "| requests/s | workers | utilisation | latency p50 ms, live / sim | "
                  "latency p99 ms, live / sim | service sleeps | arrivals sent |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in faith:
            lines.append(f"| {r['rate']:,} | {r['workers']} | {r['utilisation']:.3f} | "
                         f"{r['latency_p50_ms']:.2f} / {r['sim_latency_p50_ms']:.2f} | "
                         f"{r['latency_p99_ms']:.2f} / {r['sim_latency_p99_ms']:.2f} | "
                         f"{r['service_late_mean_us']} / {r['service_late_p99_us']} | "
                         f"{r['arrivals_late_mean_us']} / {r['arrivals_late_p99_us']} |")
        held = [r["rate"] for r in faith if faithful(r)]
        lines += ["", "Faithful here means: no timeouts (the 100 ms timeout never fires at "
                  "ρ = 0.5), the server's utilisation within 0.03 of 0.5, and the live latency's "
                  "p99 at most 1.5 times the simulated one plus 1 ms (the round trip). "
                  f"Highest rate at which every rate up to it was faithful: "
                  f"{highest_in_a_row(faith):,} requests/s."
                  if held else "No rate was faithful.", ""]
    lines += [f"A call's cost beyond its service (HTTP/1.1, loopback, scheduling; a drill of "
              f"100 requests/s against one worker of const:1ms, its median latency less the "
              f"service held): {overhead_us:.0f} µs.", ""]
    lines += ["| scenario | metric | live mean ± sd (n) | simulated mean ± sd (n) | z |",
              "| --- | --- | --- | --- | --- |"]
    for s in summary:
        digits = 0 if s["metric"] in ("timeouts", "recovery_ms") else 3
        lines.append(f"| {s['scenario']} | {s['metric']} | {fmt(s['live_mean'], digits)} ± "
                     f"{fmt(s['live_sd'], digits)} ({s['n_live']}) | {fmt(s['sim_mean'], digits)}"
                     f" ± {fmt(s['sim_sd'], digits)} ({s['n_sim']}) | {zfmt(s['z'])} |")
    lines += ["", "◀: |z| ≥ 3. The same live runs against the simulation calibrated by what "
              "the testbed measured, one cause at a time (service: each attempt held its mean "
              "sleep lateness longer; network: the round trip's overhead as request and reply "
              "delays; timeout: timeouts later by their mean lateness), then all three; z of "
              "each metric that had |z| ≥ 3:", "",
              "| scenario | metric | z, plain | " +
              " | ".join(f"z, {c}" for c, _ in CALIBRATIONS) + " |",
              "| --- | --- | --- | " + " | ".join("---" for _ in CALIBRATIONS) + " |"]
    for s in summary:
        if s["z"] is None or abs(s["z"]) < 3:
            continue
        zs = {c["calibration"]: c["z"] for c in calibrated
              if c["scenario"] == s["scenario"] and c["metric"] == s["metric"]}
        lines.append(f"| {s['scenario']} | {s['metric']} | {zfmt(s['z'])} | " +
                     " | ".join(zfmt(zs.get(c)) for c, _ in CALIBRATIONS) + " |")
    flags = {}
    for c in calibrated:
        if c["calibration"] == "all":
            flags[c["scenario"]] = c["flags"]
    lines += ["", "The calibrated flags (all three), per scenario:", ""]
    lines += [f"- {k}: `{v}`" for k, v in flags.items()]
    if isolated:
        lines += ["", "Live runs that isolate a cause (the drill as in its scenario, the serve "
                  "given other flags):", "",
                  "| isolation | scenario | serve's flags | metric | mean ± sd (n) | runs below 1 "
                  "| as in the study: mean, runs below 1 |", "| --- | --- | --- | --- | --- | --- "
                  "| --- |"]
        for r in isolated:
            lines.append(f"| {r['isolation']} | {r['scenario']} | `{r['serve_flags']}` | "
                         f"{r['metric']} | {fmt(r['mean'], 5)} ± {fmt(r['sd'], 5)} ({r['n']}) | "
                         f"{r['runs_below_1']} | {fmt(r['plain_mean'], 5)}, "
                         f"{r['plain_runs_below_1']} |")
    lines += ["", "Every live run's timers (lateness past the deadline, µs, mean / p99):", "",
              "| scenario | run | verdict | server amplification | connections per attempt | "
              "service sleeps | arrivals | timeouts fired | retries |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in live_rows:
        conn = r["connections_per_attempt"]
        lines.append(f"| {r['scenario']} | {r['run']} | {r['verdict']} | "
                     f"{r['server_amplification']:.3f} | {fmt(conn, 3)} | "
                     f"{r['service_late_mean_us']} / "
                     f"{r['service_late_p99_us']} | {r['arrivals_late_mean_us']} / "
                     f"{r['arrivals_late_p99_us']} | {r['timeouts_late_mean_us']} / "
                     f"{r['timeouts_late_p99_us']} | {r['retries_late_mean_us']} / "
                     f"{r['retries_late_p99_us']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
