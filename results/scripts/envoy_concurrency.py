#!/usr/bin/env python3
"""Envoy's min_retry_concurrency against the service's concurrency
(docs/src/studies/grpc-envoy-budgets.md; envoyproxy/envoy#25660).

Reads what grpc_envoy_budgets.sh writes: `herdsim tune --control envoy`'s
results/envoy-concurrency-<workers>w-<bound>.csv and, from the scratch
folder, each service's sweep without a failure (baseline-<workers>.csv),
and prints Markdown.

Envoy lets max(budget_percent × (active + pending requests),
min_retry_concurrency) retries be active at once, a retry counting from its
decision through its backoff to its attempt's end. When the floor binds,
retries flow at about min / τ per second, τ being how long a retry holds its
place, so a full outage's attempts per request are about
1 + min / (λ τ): the floor that keeps them within a bound b is

    min ≈ (b − 1) λ τ,

proportional to the request rate, and so to the requests in flight
C = λ × mean latency (Little's law) at a fixed latency. The script gives τ
from each service's largest min within 1.2× and fits the slope of the
largest min within each bound against C.
"""
import csv
import sys

WORKERS = (2, 4, 8, 16, 32, 64)
BOUNDS = ("1.2", "1.5")
DEFAULT_MIN = 3.0  # Envoy's min_retry_concurrency default


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def fmt(mean, ci, digits=3):
    return f"{mean:.{digits}f} ± {ci:.{digits}f}"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results"
    scratch = sys.argv[2]
    print("## The largest min_retry_concurrency within each bound\n")
    print("The checkout service behind Envoy (scenarios/configs/envoy-concurrency.toml) at")
    print("ρ = 0.78 with 2 to 64 workers, its rate scaled with them, budget_percent 20%.")
    print("C is the requests in flight without a failure: λ × the mean latency of a 10 s")
    print("run (16 seeds). A setting is allowed when a full outage over 10 s of requests")
    print("makes at most the bound's attempts per request (16 seeds) and none of 16 runs")
    print("of a 2 s outage ends stuck; `herdsim tune --control envoy` with four")
    print("refinement rounds finds the edge to a whole number.\n")
    print("| workers | requests/s | C in flight | largest min within 1.2× (attempts/request) | its min / C | τ = min / (λ (A − 1)) | largest min within 1.5× | what stops 1.5× | Envoy's default min 3: attempts/request, success at 10% failing |")
    print("| ---: | ---: | ---: | --- | ---: | ---: | --- | --- | --- |")
    points = {b: [] for b in BOUNDS}
    for workers in WORKERS:
        base = rows(f"{scratch}/baseline-{workers}.csv")[0]
        rate = float(base["rate_per_s"])
        latency_s = float(base["latency_mean_ms_mean"]) / 1000
        in_flight = rate * latency_s
        in_flight_ci = rate * float(base["latency_mean_ms_ci95"]) / 1000
        cells = []
        default_cell = "not searched"
        for bound in BOUNDS:
            data = sorted(rows(f"{root}/envoy-concurrency-{workers}w-{bound}.csv"), key=lambda r: float(r["min"]))
            allowed = [r for r in data if r["within_bound"] == "yes" and r["survives_stall"] == "yes"]
            top = max(allowed, key=lambda r: float(r["min"])) if allowed else None
            beyond = [r for r in data if top is None or float(r["min"]) > float(top["min"])]
            first = beyond[0] if beyond else None
            if top is not None and first is not None:
                limit = "bound" if first["within_bound"] != "yes" else "stall"
                points[bound].append((in_flight, float(top["min"]), limit))
            if first is None:
                stop = f"none up to {float(data[-1]['min']):g}"
            elif first["within_bound"] != "yes":
                stop = f"the bound at {float(first['min']):g}"
            else:
                stop = f"the stall at {float(first['min']):g} ({first['stall_stuck']} of {first['stall_runs']} stuck)"
            amp = "none" if top is None else f"{float(top['min']):g} ({fmt(float(top['amplification_mean']), float(top['amplification_ci95']))})"
            cells.append((amp, top, stop))
            for r in data:
                if float(r["min"]) == DEFAULT_MIN:
                    default_cell = (f"{fmt(float(r['amplification_mean']), float(r['amplification_ci95']))}, "
                                    f"{fmt(float(r['success_mean']), float(r['success_ci95']), 4)}")
        (amp12, top12, _), (amp15, _, stop15) = cells
        ratio = "–" if top12 is None else f"{float(top12['min']) / in_flight:.2f}"
        hold = "–"
        if top12 is not None and float(top12["min"]) > 0:
            hold = f"{1000 * float(top12['min']) / (rate * (float(top12['amplification_mean']) - 1)):.0f} ms"
        print(f"| {workers} | {rate:g} | {fmt(in_flight, in_flight_ci, 2)} | {amp12} | {ratio} | {hold} | {amp15} | {stop15} | {default_cell} |")
    print("\n## The fit\n")
    print("The least-squares line through the origin of the largest min against C, over the")
    print("services where a limit was found, by what set it:\n")
    for bound in BOUNDS:
        for limit in ("bound", "stall"):
            pts = [(c, m) for c, m, l in points[bound] if l == limit]
            if not pts:
                continue
            slope = sum(c * m for c, m in pts) / sum(c * c for c, _ in pts)
            worst = max(abs(m - slope * c) for c, m in pts)
            what = f"{bound}× itself" if limit == "bound" else "the 2 s outage (a larger min leaves runs stuck)"
            print(f"- within {bound}×, set by {what}: min ≈ {slope:.2f} × C over {len(pts)} services "
                  f"(C from {min(c for c, _ in pts):.1f} to {max(c for c, _ in pts):.1f}; largest miss {worst:.1f})")


if __name__ == "__main__":
    main()
