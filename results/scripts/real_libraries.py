"""Real retry libraries against herdsim serve, beside herdsim's prediction
from the very configuration file each ran (issue 59; docs/src/studies/real-libraries.md).

For each library, scenario and repetition: serve the scenario's server with
--trace, drive it with the library's own retries (results/scripts/libraries/),
read the figures off the server's trace and the client's record, hold the
trace to the library's configuration with `herdsim conform` (and to a wrong
one, which must be refused), and predict the same run with
`herdsim run --import CONFIG --seeds N`. Writes CSV and a Markdown table.

Usage: real_libraries.py HERDSIM OUT_PREFIX [--libraries a,b] [--scenarios x,y]
        [--reps N] [--seeds N]   (python and node interpreters from the environment
        variables the runner sets: GRPCIO_PYTHON, BOTOCORE143_PYTHON, ...)
Live runs are not byte-identical from one run to the next.
"""

import argparse
import csv
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

LOAD_BEFORE = f"{os.getloadavg()[0]:.2f}"
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(HERE, "libraries")

# The server: 8 workers of exp:2ms, unbounded queue; the load: Poisson,
# 25 calls/s for 8 s (ρ ≈ 0.006 outside the triggers: the clients' retries
# are the only thing that differs between libraries).
SERVER = ["--workers", "8", "--service", "exp:2ms"]
RATE, LOAD_S, SERVE_S = 25.0, 8.0, 16
SCENARIOS = {
    # name: (trigger, (from_s, to_s) of the trigger within the load)
    "outage": ("outage@0s..30s", (0.0, 30.0)),
    "partial-10": ("fail:0.1@0s..30s", (0.0, 30.0)),
    "partial-30": ("fail:0.3@0s..30s", (0.0, 30.0)),
    "stall-recovers": ("capacity:0@2s..4s", (2.0, 4.0)),
    "stall-stays": ("capacity:0@2s..30s", (2.0, 30.0)),
}


def library_table():
    cfg_grpc = os.path.join(LIBS, "grpc-service-config.json")
    cfg_aws = os.path.join(LIBS, "aws-config")
    table = {}
    if os.environ.get("GRPCIO_PYTHON"):
        table["grpcio"] = dict(
            driver=[os.environ["GRPCIO_PYTHON"], "grpcio_driver.py"],
            config=cfg_grpc, select=[], header="x-call-id", predict_extra=[],
            wrong=["--policy", "full", "--base", "10ms", "--cap", "100ms", "--max-attempts", "4"],
            wrong_name="--policy full (base 10ms, cap 100ms, 4 attempts)")
    if os.environ.get("GRPCJS_NODE"):
        table["grpc-js"] = dict(
            driver=["node", os.environ["GRPCJS_NODE"]],
            config=cfg_grpc, select=[], header="x-call-id", predict_extra=[],
            wrong=["--policy", "full", "--base", "10ms", "--cap", "100ms", "--max-attempts", "4"],
            wrong_name="--policy full (base 10ms, cap 100ms, 4 attempts)")
    if os.environ.get("TOWER_DRIVER"):
        table["tower"] = dict(
            driver=[os.environ["TOWER_DRIVER"]],
            config=os.path.join(LIBS, "linkerd-service-profile.yaml"), select=[], header="x-call-id",
            predict_extra=[],
            wrong=["--policy", "full", "--base", "10ms", "--cap", "100ms", "--max-attempts", "4"],
            wrong_name="--policy full (base 10ms, cap 100ms, 4 attempts)")
    for key, env, behaviour, wrong in (("botocore-1.43", "BOTOCORE143_PYTHON", "2.0", "2026"),
                                       ("botocore-1.44", "BOTOCORE144_PYTHON", "2026", "2.0")):
        if os.environ.get(env):
            table[key] = dict(
                driver=[os.environ[env], "botocore_driver.py"],
                config=cfg_aws, select=["--select", f"behaviour={behaviour}"],
                header="amz-sdk-invocation-id", predict_extra=["--timeout", "2s"],
                wrong=["--import", cfg_aws, "--select", f"behaviour={wrong}"],
                wrong_name=f"the same file as behaviour {wrong}")
    return table


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def live_run(herdsim, lib, trigger, seed, workdir):
    """One real run; returns (trace rows, client rows, versions line)."""
    port = free_port()
    trace = os.path.join(workdir, "trace.csv")
    record = os.path.join(workdir, "client.csv")
    serve = subprocess.Popen(
        [herdsim, "serve", "--listen", f"127.0.0.1:{port}", *SERVER, "--trigger", trigger,
         "--seed", str(seed),
         "--for", f"{SERVE_S}s", "--trace", trace, "--call-id-header", lib["header"], "--force"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    driver = subprocess.run(
        [*lib["driver"], "--port", str(port), "--rate", str(RATE), "--duration", str(LOAD_S),
         "--seed", str(seed), "--out", record, "--config", lib["config"]],
        cwd=LIBS, capture_output=True, text=True, timeout=60)
    try:
        out, err = serve.communicate(timeout=SERVE_S + 15)
    except subprocess.TimeoutExpired:
        serve.kill()
        raise
    if driver.returncode != 0 or serve.returncode != 0:
        sys.exit(f"run failed: {driver.stderr[-2000:]} {err[-2000:]}")
    with open(trace) as f:
        rows = list(csv.DictReader(f))
    with open(record) as f:
        client = list(csv.DictReader(f))
    return rows, client, driver.stdout.strip(), trace


def figures(rows, client, window):
    """The run's figures, times on serve's clock (ms from the first request)."""
    calls = len(client)
    first_sent = min(float(c["start_ms"]) for c in client)
    ok = [c["outcome"] == "success" for c in client]
    ends = [float(c["end_ms"]) - first_sent for c in client]
    lo, hi = window[0] * 1e3, min(window[1], LOAD_S + 30) * 1e3
    during = [o for o, e in zip(ok, ends) if lo <= e < hi]
    after = [o for o, e in zip(ok, ends) if e >= hi]
    traced_calls = len({r["call"] for r in rows})
    fresh_fail = [e for o, e, c in zip(ok, ends, client)
                  if not o and float(c["start_ms"]) - first_sent >= hi]
    return {
        "requests": calls,
        "attempts": len(rows),
        "amplification": len(rows) / calls if calls else float("nan"),
        "retries": len(rows) - traced_calls,
        "success_rate": sum(ok) / calls if calls else float("nan"),
        "success_during_trigger": sum(during) / len(during) if len(during) >= 10 else float("nan"),
        "success_after_trigger": sum(after) / len(after) if len(after) >= 10 else float("nan"),
        "last_fresh_failure_ms": (max(fresh_fail) - hi) if fresh_fail else (0.0 if after else float("nan")),
    }


def conform(herdsim, trace, args):
    done = subprocess.run([herdsim, "conform", trace, *args], capture_output=True, text=True, timeout=300)
    verdict = [l for l in done.stdout.splitlines() if l.startswith(("conforms", "does not conform"))]
    return done.returncode, (verdict[0] if verdict else (done.stderr.strip().splitlines() or ["?"])[0])


def predict(herdsim, lib, trigger, seeds):
    cmd = [herdsim, "run", "--import", lib["config"], *lib["select"], *SERVER, *lib["predict_extra"],
           "--rate", str(int(RATE)), "--duration", f"{int(LOAD_S)}s", "--trigger", trigger,
           "--seeds", str(seeds), "--json", "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    metrics = json.loads(done.stdout)["metrics"]
    show = " ".join(c if " " not in c else f"'{c}'" for c in cmd[1:]).replace(HERE + "/", "results/scripts/")
    return metrics, show


def z_score(real, sim):
    """z = (mean_real − mean_sim)/sqrt(s²_real/n_real + s²_sim/n_sim)."""
    real = [x for x in real if not math.isnan(x)]
    if len(real) < 2 or not sim or sim.get("n", 0) < 2:
        return float("nan")
    s2 = statistics.variance(real) / len(real) + sim["sd"] ** 2 / sim["n"]
    diff = statistics.mean(real) - sim["mean"]
    if s2 == 0:
        return 0.0 if diff == 0 else math.copysign(float("inf"), diff)
    return diff / math.sqrt(s2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("herdsim")
    parser.add_argument("out_prefix")
    parser.add_argument("--libraries", default="")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--workdir", default="/tmp/herdsim-real-libraries")
    parser.add_argument("--keep-traces", metavar="DIR",
                        help="copy each library's and scenario's first trace to DIR/LIBRARY-SCENARIO.csv")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless every trace conforms to its own configuration and is "
                             "refused against the wrong one (at α = 0.01 with 999 resamples: a "
                             "conforming trace fails about one time in a hundred; with conform's "
                             "default 199 resamples no p-value is below 0.005)")
    args = parser.parse_args()
    herdsim = os.path.abspath(args.herdsim)
    libs = library_table()
    chosen = [l for l in (args.libraries.split(",") if args.libraries else libs) if l in libs]
    os.makedirs(args.workdir, exist_ok=True)
    metric_names = ["amplification", "retries", "success_rate", "success_during_trigger",
                    "success_after_trigger"]
    runs_csv, table = [], []
    for name in chosen:
        lib = libs[name]
        for scenario in args.scenarios.split(","):
            trigger, window = SCENARIOS[scenario]
            reals, versions, verdicts = [], "", []
            for rep in range(args.reps):
                rows, client, versions, trace = live_run(herdsim, lib, trigger, 100 + rep, args.workdir)
                fig = figures(rows, client, window)
                alpha = ["--alpha", "0.01", "--resamples", "999"] if args.check else []
                own = conform(herdsim, trace, ["--import", lib["config"], *lib["select"], *alpha])
                wrong = conform(herdsim, trace, [*lib["wrong"], *alpha])
                reals.append(fig)
                if args.keep_traces and rep == 0:
                    os.makedirs(args.keep_traces, exist_ok=True)
                    shutil.copyfile(trace, os.path.join(args.keep_traces, f"{name}-{scenario}.csv"))
                verdicts.append((own, wrong))
                runs_csv.append({"library": name, "version": versions, "scenario": scenario, "rep": rep,
                                 **fig, "conform_own_exit": own[0], "conform_own": own[1],
                                 "conform_wrong_exit": wrong[0], "conform_wrong": wrong[1]})
                print(f"{name} {scenario} rep {rep}: {fig} own={own[0]} wrong={wrong[0]}",
                      file=sys.stderr, flush=True)
            sim, command = predict(herdsim, lib, trigger, args.seeds)
            row = {"library": name, "version": versions.split(":")[0], "scenario": scenario,
                   "reps": args.reps, "seeds": args.seeds, "prediction": command}
            sim["retries"] = None
            if sim.get("attempts") and sim.get("requests"):
                # retries = attempts − requests, per seed: its mean is exact,
                # its sd bounded by the sum of the two (kept conservative).
                sim["retries"] = {"n": sim["attempts"]["n"],
                                  "mean": sim["attempts"]["mean"] - sim["requests"]["mean"],
                                  "sd": sim["attempts"]["sd"] + sim["requests"]["sd"]}
            for m in metric_names:
                values = [r[m] for r in reals if not math.isnan(r[m])]
                row[f"{m}_real"] = statistics.mean(values) if values else float("nan")
                s = sim.get(m)
                row[f"{m}_sim"] = s["mean"] if s else float("nan")
                row[f"{m}_z"] = z_score([r[m] for r in reals], s)
            row["last_fresh_failure_ms_real"] = statistics.mean([r["last_fresh_failure_ms"] for r in reals])
            rec = sim.get("recovery_ms")
            row["recovery_ms_sim"] = rec["mean"] if rec else float("nan")
            row["conform_own"] = f"{sum(v[0][0] == 0 for v in verdicts)}/{len(verdicts)}"
            row["conform_wrong_refused"] = f"{sum(v[1][0] == 1 for v in verdicts)}/{len(verdicts)}"
            table.append(row)
    with open(args.out_prefix + "-runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(runs_csv[0]))
        w.writeheader()
        w.writerows(runs_csv)
    with open(args.out_prefix + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    print(f"<!-- written by results/scripts/real_libraries.sh; a live run: another gives other figures -->")
    print(f"Load before: {LOAD_BEFORE}; after: {os.getloadavg()[0]:.2f} (1-minute load average, 2 cores).")
    print()
    print(f"serve: `herdsim serve {' '.join(SERVER)} --trigger TRIGGER --seed 100+REP --for {SERVE_S}s "
          f"--trace trace.csv --call-id-header HEADER`; each library's driver sends Poisson arrivals at "
          f"{RATE:g} calls/s for {LOAD_S:g} s (results/scripts/libraries/).")
    print()
    print("| library | scenario | trigger | versions | prediction |")
    print("|---|---|---|---|---|")
    for r in table:
        print(f"| {r['library']} | {r['scenario']} | `{SCENARIOS[r['scenario']][0]}` | {r['version']} | "
              f"`herdsim {r['prediction']}` |")
    print()
    print(markdown(table, metric_names))
    print()
    print("Per run (the conform verdicts on each trace):")
    print()
    print("| library | scenario | rep | requests | attempts | retries | success | conform (own) | conform (wrong) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in runs_csv:
        print(f"| {r['library']} | {r['scenario']} | {r['rep']} | {r['requests']} | {r['attempts']} | "
              f"{r['retries']} | {r['success_rate']:.3f} | {r['conform_own_exit']}: {r['conform_own']} | "
              f"{r['conform_wrong_exit']}: {r['conform_wrong']} |")
    if args.check:
        bad = [r for r in runs_csv if r["conform_own_exit"] != 0 or r["conform_wrong_exit"] != 1]
        for r in bad:
            print(f"check failed: {r['library']} {r['scenario']}: own: {r['conform_own']}; "
                  f"wrong: {r['conform_wrong']}", file=sys.stderr)
        sys.exit(1 if bad else 0)


def cell(x, digits=3):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def markdown(table, metric_names):
    head = ["library", "scenario"]
    for m in ("amplification", "retries", "success_rate", "success_during_trigger", "success_after_trigger"):
        head += [f"{m} real", "sim", "z"]
    head += ["conforms (own)", "refused (wrong)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table:
        cells = [r["library"], r["scenario"]]
        for m in ("amplification", "retries", "success_rate", "success_during_trigger", "success_after_trigger"):
            d = 1 if m == "retries" else 3
            cells += [cell(r[f"{m}_real"], d), cell(r[f"{m}_sim"], d), cell(r[f"{m}_z"], 1)]
        cells += [r["conform_own"], r["conform_wrong_refused"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
