#!/usr/bin/env python3
"""Writes the exact figures of Brooker 2022's model for no retries and three
retries (reference/brooker-models.md §1.3) as a reference file of the shape of
reference/brooker-2022-retries.csv: success 1 - p^(N+1) and load
1 + p + ... + p^N per call, with no sampling error (sd 0), for every failure
rate and client count of the reference. `herdsim compare --reference` on it
judges herdsim against the exact values alone."""
import csv
import sys

P = [0, 0.001, 0.01, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.9]
CONFIGS = [("main", 100, 10), ("clients_total1000", 10, 100), ("clients_total1000", 1000, 1)]
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["study", "p", "strategy", "clients", "rate_per_client", "seeds",
              "success_mean", "success_sd", "load_mean", "load_sd"])
for study, clients, rate in CONFIGS:
    for strategy, retries in [("no_retries", 0), ("three_retries", 3)]:
        for p in P:
            success = 100 * (1 - p ** (retries + 1))
            load = 100 * sum(p ** k for k in range(retries + 1))
            out.writerow([study, p, strategy, clients, rate, 1,
                          f"{success:.10g}", 0, f"{load:.10g}", 0])
