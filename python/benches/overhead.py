"""What the Python package costs over the work it calls, as
``scripts/python-bench`` runs it (the release extension and binary).

1. ``herdsim.run(clients=1000, policy="decorrelated")``, the README's main
   job, against the same command made by the library alone on the calling
   thread (``_herdsim.time_call``: parse, simulate, write the JSON). The
   difference is the package's cost: the keywords checked, a thread to run
   on, the JSON read, and (timed apart) its summary and replicates made
   into DataFrames.
2. A 10,000-run sweep (10 herd sizes × 1,000 seeds) into a DataFrame,
   against the command line's wall time for the same sweep (a process that
   writes its CSV file).

Each pair is measured alternately, in the same process and minute, and
summarised by its median; the machine's drift moves both alike.
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import herdsim
from herdsim import _herdsim

BIN = os.environ.get("HERDSIM_BIN", "target/release/herdsim")


def ms(seconds):
    return f"{statistics.median(seconds) * 1e3:.3f} ms"


def run_overhead(repeats):
    keywords = dict(clients=1000, policy="decorrelated")
    args = ["run", "--clients", "1000", "--policy", "decorrelated", "--json", "--per-run",
            "--quiet"]
    herdsim.run(**keywords)
    _herdsim.time_call(args, 10)
    library, package, frames, process = [], [], [], []
    for _ in range(repeats):
        library += _herdsim.time_call(args, 1)
        started = time.perf_counter()
        herdsim.run(**keywords)
        package.append(time.perf_counter() - started)
        library += _herdsim.time_call(args, 1)
        started = time.perf_counter()
        r = herdsim.run(**keywords)
        r.summary, r.replicates
        frames.append(time.perf_counter() - started)
    for _ in range(max(repeats // 10, 5)):
        started = time.perf_counter()
        subprocess.run([BIN, *args], check=True, stdout=subprocess.DEVNULL)
        process.append(time.perf_counter() - started)
    extra = [p - l for p, l in zip(package, library[0::2])]
    extra_frames = [p - l for p, l in zip(frames, library[1::2])]
    print(f"herdsim.run(clients=1000, policy='decorrelated'), {repeats} calls each, medians:")
    print(f"  the library alone (parse, run, JSON)          {ms(library)}")
    print(f"  herdsim.run                                   {ms(package)}")
    print(f"  herdsim.run, then .summary and .replicates    {ms(frames)}")
    print(f"  the package's cost, call by call              {ms(extra)}")
    print(f"  the same with both DataFrames made            {ms(extra_frames)}")
    print(f"  the command line, a process each              {ms(process)}")
    return statistics.median(extra_frames)


def sweep_ratio(rounds):
    clients = list(range(100, 1100, 100))
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "sweep.csv")
        command = [BIN, "sweep", "--clients", ",".join(map(str, clients)), "--policy", "full",
                   "--seeds", "1000", "--out", out, "--force", "--quiet"]
        line, package = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            subprocess.run(command, check=True)
            line.append(time.perf_counter() - started)
            started = time.perf_counter()
            frame = herdsim.sweep(clients=clients, policy="full", seeds=1000)
            package.append(time.perf_counter() - started)
        assert len(frame) == 10
    ratio = statistics.median(package) / statistics.median(line)
    print(f"a 10,000-run sweep (10 herd sizes x 1,000 seeds), {rounds} rounds, medians:")
    print(f"  herdsim sweep --out FILE (a process)          {ms(line)}")
    print(f"  herdsim.sweep(...) into a DataFrame           {ms(package)}")
    print(f"  ratio                                         {ratio:.3f}")
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="herdsim.run calls (200)")
    parser.add_argument("--rounds", type=int, default=5, help="sweeps of each kind (5)")
    options = parser.parse_args()
    print(f"herdsim {herdsim.__version__}, {os.cpu_count()} cores, "
          f"RAYON_NUM_THREADS={os.environ.get('RAYON_NUM_THREADS', 'unset')}")
    extra = run_overhead(options.calls)
    ratio = sweep_ratio(options.rounds)
    print(f"budget: under 1 ms a run with its DataFrames ({extra * 1e3:.3f} ms); a sweep "
          f"within 10% of the command line ({(ratio - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
