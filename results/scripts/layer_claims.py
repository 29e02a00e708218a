#!/usr/bin/env python3
"""Judges the published claims on retry amplification through layers (the
Google SRE book, the AWS Builders' Library, a practitioner's measurement)
against herdsim's sweeps results/layers.csv and results/layers-controls.csv,
and prints a Markdown table with a verdict on each.

Each claim is a number in words; its range is what the words allow, stated
in the table ("exactly 64", "just below 3": from 2.85 up to but not 3,
"about 1.1" and "about 50": within 5% and 10%). A claim holds where
herdsim's 95% confidence interval lies inside the range, fails where it
lies outside, and is borderline where it straddles an end. The exact value
of the model is printed beside it: (1 - p^(a^k))/(1 - p) server attempts
per user request for k callers of a attempts each and a server failing with
probability p (src/model/chain.rs), and 1.1^k under the 10% budget.

usage: layer_claims.py [RESULTS_DIR]"""
import csv
import sys
from pathlib import Path

results = Path(sys.argv[1] if len(sys.argv) > 1 else "results")


def rows(name):
    with open(results / name, newline="") as f:
        return list(csv.DictReader(f))


def find(table, **keys):
    """The one row of `table` whose columns equal `keys`."""
    found = [r for r in table if all(r[k] == v for k, v in keys.items())]
    if len(found) != 1:
        raise SystemExit(f"expected one row for {keys}, found {len(found)}")
    return found[0]


def exact(depth, attempts, p):
    if p == 1:
        return float(attempts ** depth)
    return (1 - p ** (attempts ** depth)) / (1 - p)


def verdict(mean, ci, low, high, high_open=False):
    lo, hi = mean - ci, mean + ci
    inside_high = (hi < high) if high_open else (hi <= high)
    outside_high = (lo >= high) if high_open else (lo > high)
    if lo >= low and inside_high:
        return "holds"
    if hi < low or outside_high:
        return "fails"
    return "borderline"


layers = rows("layers.csv")
controls = rows("layers-controls.csv")
claims = []


def claim(source, words, allowed, row, depth, attempts, p, low, high, high_open=False,
          model=None):
    mean = float(row["server_amplification_mean"])
    ci = float(row["server_amplification_ci95"] or 0)
    model = exact(depth, attempts, p) if model is None else model
    claims.append((source, words, allowed,
                   f"{depth} × {attempts}, p = {p:g}",
                   f"{mean:.3f} ± {ci:.3f}", f"{model:.3f}",
                   verdict(mean, ci, low, high, high_open)))


for p in ["1"]:
    r = find(layers, depth="3", max_attempts="4", fail_rate=p)
    claim("SRE book", "3 layers × 4 attempts: 64× at the database", "exactly 64",
          r, 3, 4, float(p), 64, 64)
    r = find(layers, depth="5", max_attempts="3", fail_rate=p)
    claim("Builders' Library", "5 layers × 3 tries: 3⁵ = 243×", "exactly 243",
          r, 5, 3, float(p), 243, 243)
for p in ["0.9", "0.98", "1"]:
    r = find(layers, depth="1", max_attempts="3", fail_rate=p)
    claim("SRE book", "3 attempts per request: just below 3×", "2.85 to below 3",
          r, 1, 3, float(p), 2.85, 3, high_open=True)
for p in ["0.9", "1"]:
    for depth in ["1", "3"]:
        r = find(controls, depth=depth, fail_rate=p, budget="ratio:0.1,min:0",
                 retry_scope="every")
        claim("SRE book", "a 10% per-client retry budget: about 1.1×", "1.045 to 1.155",
              r, int(depth), 3, float(p), 1.045, 1.155, model=1.1 ** int(depth))
for p in ["0.9", "0.98", "1"]:
    r = find(layers, depth="5", max_attempts="3", fail_rate=p)
    claim("practitioner", "5 layers × 3 tries: about 50× measured where 243× was expected",
          "45 to 55", r, 5, 3, float(p), 45, 55)

print("| source | claim | the words allow | layers × attempts, server failing | "
      "herdsim (mean ± 95% CI) | model, exact | verdict |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for c in claims:
    print("| " + " | ".join(c) + " |")
print()
print("Retrying only at the layer above the failing service (`retry_scope = adjacent`), "
      "3 attempts a layer:")
print()
print("| layers | server failing | every layer retries | only the adjacent one | removed |")
print("| --- | --- | --- | --- | --- |")
for p in ["0.9", "1"]:
    for depth in ["2", "3", "5"]:
        every = float(find(controls, depth=depth, fail_rate=p, budget="",
                           retry_scope="every")["server_amplification_mean"])
        adjacent = float(find(controls, depth=depth, fail_rate=p, budget="",
                              retry_scope="adjacent")["server_amplification_mean"])
        print(f"| {depth} | p = {p} | {every:.3f} | {adjacent:.3f} | "
              f"{100 * (1 - adjacent / every):.1f}% |")
