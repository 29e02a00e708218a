#!/usr/bin/env python3
"""gRPC retryThrottling against its arithmetic (docs/src/studies/grpc-envoy-budgets.md).

Reads what grpc_envoy_budgets.sh writes, `herdsim tune --control grpc`'s
results/grpc-throttling-<channels>ch-<bound>.csv and the sweep
results/grpc-throttling-ratio.csv, and prints Markdown.

The arithmetic (gRFC A6; grpc-go's retryThrottler): a channel's tokens
start at maxTokens M, lose 1 per failed attempt, gain tokenRatio r per
success, stay within [0, M], and a failed attempt is retried only while the
tokens left stay above M/2. Each retry follows a failure that took a token
while the count stayed above M/2, and over any stretch the count comes down
through its upper half only by what it held there at the start (at most
M/2) and what its S successes added (r each), so the retries are at most
M/2 + r·S and, over N requests of one channel,

    attempts per request ≤ 1 + r·S/N + M/(2N)          (the bound)

In a full outage S = 0 and the first ceil(M/2) − 1 failures are each
retried while their requests have attempts left, so a channel makes exactly
ceil(M/2) − 1 retries when its tokens run out first (the count, at most), and
fewer when its requests run out of attempts (5 within a 2 s deadline here)
first. In a partial failure that lasts, the bound tends to 1 + r·S/N: the
tokens drift down when a share f > r/(1 + r) of attempts fails, and retries
then stop until the failure ends.
"""
import csv
import math
import sys

RATE = 550.0  # requests/s of scenarios/configs/grpc-assess.toml
OUTAGE_S = 10.0  # tune's full outage: 10 s of requests (FAILURE_LOAD_US)
RATIO_S = 60.0  # the ratio sweep's --duration
RATIO_TOKENS = 100.0  # the ratio sweep's maxTokens
RATIO_CHANNELS = 50  # sources of grpc-assess.toml
CHANNELS = (10, 50, 250)
BOUNDS = ("1.1", "1.5")


def exact_outage(max_tokens, channels):
    """Attempts per request in the outage when the tokens run out first."""
    per_channel = RATE * OUTAGE_S / channels
    return 1 + (math.ceil(max_tokens / 2) - 1) / per_channel


def largest_allowed(bound, channels):
    """The largest whole maxTokens (gRPC accepts 1 to 1000) whose count (at most) is within the bound."""
    return max((m for m in range(1, 1001) if exact_outage(m, channels) <= bound + 1e-12), default=None)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def z_of(mean, ci95, want):
    se = ci95 / 1.96
    if se == 0:
        return 0.0 if abs(mean - want) < 1e-9 else math.inf
    return (mean - want) / se


def outage_tables(root):
    print("## The largest maxTokens within each bound\n")
    print(f"A full outage over {OUTAGE_S:g} s of requests at {RATE:g} requests/s, spread evenly over the")
    print("channels, each channel with its own tokens (tokenRatio 0.1 plays no part: nothing")
    print("succeeds). Measured: `herdsim tune --control grpc` with 16 seeds per setting and four")
    print("refinement rounds; the count: 1 + (ceil(M/2) − 1) / (requests per channel), at most what")
    print("a channel makes, and exactly it when its tokens run out before its requests' attempts do.\n")
    print("| channels | requests per channel | bound | largest maxTokens measured within it (attempts/request) | first beyond it | the count's largest (safe whatever the retries) | tune's pick (most success within the bound) |")
    print("| ---: | ---: | ---: | --- | --- | ---: | --- |")
    measured = {}
    for channels in CHANNELS:
        for bound in BOUNDS:
            data = rows(f"{root}/grpc-throttling-{channels}ch-{bound}.csv")
            by_tokens = {}
            for r in data:
                by_tokens[float(r["grpc"])] = r
                measured[(channels, float(r["grpc"]))] = r
            within = [m for m, r in by_tokens.items() if r["within_bound"] == "yes" and r["survives_stall"] == "yes"]
            top = max(within) if within else None
            first_out = min((m for m in by_tokens if top is None or m > top), default=None)

            def amp(m):
                r = by_tokens[m]
                return f"{float(r['amplification_mean']):.4f} ± {float(r['amplification_ci95']):.4f}"

            pick = next((r["rule"] for r in data if r["best"] == "yes"), None) or next(
                (r["rule"] for r in data if r["knee"] == "yes"), "none")
            print(
                f"| {channels} | {RATE * OUTAGE_S / channels:g} | {bound} | "
                f"{'none' if top is None else f'{top:g} ({amp(top)})'} | "
                f"{'none' if first_out is None else f'{first_out:g} ({amp(first_out)})'} | "
                f"{largest_allowed(float(bound), channels)} | `{pick}` |"
            )
    print("\n## Every setting beside the count\n")
    print("z is the difference over its standard error (the 95% half-width / 1.96). The")
    print("count (at most ceil(M/2) − 1 retries a channel) is exact while a channel's tokens run out before its first requests'")
    print("retries do: ceil(M/2) − 1 failures take about (ceil(M/2) − 1)/λ seconds at λ")
    print("requests/s per channel, and a request's five attempts within its 2 s deadline")
    print("span about a second (backoffs of 50, 100, 200 and 400 ms, ±20%, and five")
    print("services). Where the tokens last longer, some of those failures end requests")
    print("that have no attempt left, so the retries are fewer: the count is then a bound.\n")
    print("| channels | maxTokens | tokens last (s) | measured | the count (at most) | z | verdict |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    exact_rows, worst, fewer, above = 0, 0.0, 0, 0
    for (channels, tokens), r in sorted(measured.items()):
        mean, ci = float(r["amplification_mean"]), float(r["amplification_ci95"])
        want = exact_outage(tokens, channels)
        z = z_of(mean, ci, want)
        lasts = (math.ceil(tokens / 2) - 1) / (RATE / channels)
        if abs(z) < 3:
            verdict = "exact" if abs(z) < 1.96 else "exact (borderline)"
            exact_rows += 1
            worst = max(worst, abs(z))
        elif z < 0:
            verdict = "fewer: the tokens outlast the retries"
            fewer += 1
        else:
            verdict = "ABOVE the count"
            above += 1
        print(f"| {channels} | {tokens:g} | {lasts:.2f} | {mean:.4f} ± {ci:.4f} | {want:.4f} | {z:+.2f} | {verdict} |")
    print(f"\n{exact_rows} settings agree with the count (largest |z| {worst:.2f}); "
          f"{fewer} make fewer retries, each with tokens that last beyond a second; {above} above it.")


def ratio_table(root):
    data = rows(f"{root}/grpc-throttling-ratio.csv")
    per_channel = RATE * RATIO_S / RATIO_CHANNELS
    print("\n## tokenRatio: a minute of partial failure\n")
    print(f"{RATIO_S:g} s of requests at {RATE:g} requests/s over {RATIO_CHANNELS} channels ({per_channel:g} requests per")
    print(f"channel), maxTokens {RATIO_TOKENS:g}, a share f of attempts failing throughout; 8 seeds a cell.")
    print("The bound is 1 + r·(success share) + M/(2N); f* = r/(1 + r) is the share above which")
    print("the tokens drift down. Above f*, the tokens cut retries and success falls toward")
    print("1 − f (first tries only). Below f* with r ≥ 0.5 at f = 0.3, retries flow but push the")
    print("server past capacity (ρ = 0.78 times 1.30 attempts per request passes 1), which is")
    print("what costs those cells their success.\n")
    ratios = sorted({float(r["budget"].split("ratio:")[1]) for r in data})
    fails = sorted({float(r["fail_rate"]) for r in data})
    cells = {(float(r["budget"].split("ratio:")[1]), float(r["fail_rate"])): r for r in data}
    print("| f | " + " | ".join(f"r = {r:g} (f* = {r / (1 + r):.3f})" for r in ratios) + " |")
    print("| ---: | " + " | ".join("---" for _ in ratios) + " |")
    over = 0
    for f in fails:
        out = []
        for ratio in ratios:
            r = cells[(ratio, f)]
            mean, ci = float(r["amplification_mean"]), float(r["amplification_ci95"])
            success = float(r["success_rate_mean"])
            bound = 1 + ratio * success + RATIO_TOKENS / (2 * per_channel)
            if mean - ci > bound:
                over += 1
            out.append(f"{mean:.3f} ± {ci:.3f} ≤ {bound:.3f}, success {success:.3f}")
        print(f"| {f:g} | " + " | ".join(out) + " |")
    print(f"\nCells above their bound (the interval wholly above it): {over} of {len(data)}.")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results"
    outage_tables(root)
    ratio_table(root)


if __name__ == "__main__":
    main()
