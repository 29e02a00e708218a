#!/usr/bin/env python3
"""metafor's CTMC against herdsim's mechanistic simulation of the same
service (results/metafor-mechanistic.md; issue 38, item 2).

For each cell of reference/metafor-ctmc.csv (λ, μ, τ, R; one worker, 100
jobs at most), herdsim simulates what metafor's chain abstracts: Poisson
arrivals, exponential service in FIFO order, at most 99 jobs at the server
(98 waiting and one in service; an arrival beyond is refused and not
retried, metafor's retry_when_full=False), a fixed per-attempt timeout τ
that does not cancel work (the abandoned attempt stays queued and is
served), and on a timeout an immediate retry, R of them at most (metafor's
own simulator's client, with its timer armed on every request). Three
figures per cell, beside metafor's:

- E[q], jobs at the server: 4 runs of 20,000 s from empty (queue_mean +
  utilisation, the mean over runs and its 95% half-width);
- the fault's return time: λ raised to 20/s from 200 s to 400 s, then the
  time until at most 9 jobs are at the server (waiting ≤ 8: the backlog of
  `run --low 8`, with nothing waiting in backoff), 20 runs;
- the entry time: from empty with no fault, the time until 90 jobs are at
  the server (waiting ≥ 89), 20 runs of up to 20,000 s (those that never get
  there are counted, not averaged).

Writes results/metafor-mechanistic.csv and pastes the table into
results/metafor-mechanistic.md between the page's markers.
Usage: metafor_mechanistic.py HERDSIM REFERENCE_CSV RESULTS_DIR
"""
import csv
import sys

from pages import herdsim, paste

DURATION = "20000s"


def service(lam, mu, tau, retries):
    return ["run", "--resource", "server", "--rate", f"{lam:g}", "--workers", "1",
            "--queue-limit", "98", "--service", f"exp:{1000 / mu:g}ms",
            "--discipline", "fifo", "--timeout", f"{tau:g}s",
            "--max-attempts", str(retries + 1), "--retry-on", "timeout",
            "--policy", "no-backoff", "--json", "-q"]


def main():
    lines = []

    def out(text="", file=None):
        if file is None:
            lines.append(text)
        else:
            print(text, file=file)

    binary, reference, results = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(reference, newline="") as f:
        cells = list(csv.DictReader(f))
    rows = []
    for c in cells:
        lam, mu = float(c["lambda_rps"]), float(c["mu_rps"])
        tau, retries = float(c["timeout_s"]), int(c["retries"])
        base = service(lam, mu, tau, retries)
        stationary = herdsim(binary, base + ["--duration", DURATION, "--seeds", "4"])
        m = stationary["metrics"]
        eq = m["queue_mean"]["mean"] + m["utilisation"]["mean"]
        eq_ci = m["queue_mean"]["ci95"] + m["utilisation"]["ci95"]
        fault = herdsim(binary, base + [
            "--trigger", f"spike:{20 / lam:.6g}@200s..400s", "--duration", DURATION,
            "--seeds", "20", "--high", "89", "--low", "8"])
        back = fault["backlog"]["plain"]["to_calm"]
        entry = herdsim(binary, base + ["--duration", DURATION, "--seeds", "20",
                                        "--high", "89", "--low", "8"])
        plain = entry["backlog"]["plain"]
        row = {
            "lambda_rps": lam, "mu_rps": mu, "timeout_s": tau, "retries": retries,
            "metafor_mean_jobs": float(c["mean_queue_jobs"]),
            "metafor_p_high": float(c["p_high_q_ge_90pct"]),
            "metafor_fault_return_s": float(c["fault_return_time_s"]),
            "metafor_entry_from_empty_s": float(c["entry_time_from_empty_s"]),
            "herdsim_mean_jobs": eq, "herdsim_mean_jobs_ci95": eq_ci,
            "herdsim_fault_return_s": back["mean_s"], "herdsim_fault_return_ci95_s": back["ci95_s"],
            "herdsim_fault_returned": back["n"],
            "herdsim_entry_s": plain["to_storm"]["mean_s"],
            "herdsim_entry_ci95_s": plain["to_storm"]["ci95_s"],
            "herdsim_entered": plain["storm"], "runs": plain["runs"],
        }
        rows.append(row)
        out(f"{lam} {tau} {retries}: E[q] {row['metafor_mean_jobs']:.2f} vs {eq:.2f}",
              file=sys.stderr)
    fields = list(rows[0].keys())
    with open(f"{results}/metafor-mechanistic.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

    def t(v, ci=None):
        if v is None:
            return "–"
        text = f"{v:.4g} s"
        return text + (f" ± {ci:.2g}" if ci else "")

    out("| λ, τ, R | E[q] metafor | E[q] herdsim | P(q ≥ 90) metafor | fault return metafor "
          "| herdsim (returned of 20) | entry from empty metafor | herdsim (entered of 20) |")
    out("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        out(f"| {r['lambda_rps']:g}, {r['timeout_s']:g}, {r['retries']} "
              f"| {r['metafor_mean_jobs']:.2f} | {r['herdsim_mean_jobs']:.2f} ± {r['herdsim_mean_jobs_ci95']:.2g} "
              f"| {r['metafor_p_high']:.3g} | {r['metafor_fault_return_s']:.4g} s "
              f"| {t(r['herdsim_fault_return_s'], r['herdsim_fault_return_ci95_s'])} ({r['herdsim_fault_returned']}) "
              f"| {r['metafor_entry_from_empty_s']:.4g} s "
              f"| {t(r['herdsim_entry_s'], r['herdsim_entry_ci95_s'])} ({r['herdsim_entered']}) |")

    paste(f"{results}/metafor-mechanistic.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
