"""The Python package as a notebook uses it: every function, its errors,
its identity with the command line, and thread-count independence.

The command line compared with is ``HERDSIM_BIN`` (the CI script sets it to
the build it tested), else ``target/debug/herdsim`` of this repository.
"""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import herdsim
from builtins import map
from herdsim import _herdsim

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("HERDSIM_BIN", str(ROOT / "target" / "debug" / "herdsim"))

HERD = dict(clients=100, policy="decorrelated")
SERVER = dict(resource="server", rate=300, workers=1, service="exp:1ms", duration="2s")


def cli(*args, env=None):
    """``herdsim ARGS``: its standard output (it must succeed)."""
    done = subprocess.run([BIN, *args], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def flags(values):
    return [w for k, v in values.items() for w in ("--" + k.replace("_", "-"), str(v))]


def test_run_is_the_command_lines_json():
    r = herdsim.run(seeds=4, seed=7, **HERD)
    shown = cli("run", *flags(HERD), "--seeds", "4", "--seed", "7", "--json", "--per-run", "-q")
    assert r.raw == json.loads(shown)
    # The in-process call prints the very bytes the binary prints.
    code, out, error, warned = _herdsim.call(
        ["run", *flags(HERD), "--seeds", "4", "--seed", "7", "--json", "--per-run", "-q"]
    )
    assert (code, error, warned) == (0, None, [])
    assert out == shown
    assert list(r.replicates.index) == [0, 1, 2, 3]
    assert r.summary.loc["calls", "n"] == 4
    assert r.summary.loc["calls", "mean"] == pytest.approx(r.replicates["calls"].mean())
    assert r.to_dict()["calls"]["mean"] == r.summary.loc["calls", "mean"]
    assert r.series is None and r.storm_probability is None
    public = {name for name in dir(r) if not name.startswith("_") and not name.isupper()}
    assert public == set(herdsim.RunResult.TYPES) | set(herdsim.RunResult.METHODS), (
        "the stubs list every attribute"
    )


def test_a_server_run_reads_its_series_and_storm_probability(tmp_path):
    r = herdsim.run(seeds=2, **SERVER)
    assert len(r.replicates) == 2
    assert r.storm_probability is not None
    assert "verdict" not in r.replicates, "no trigger, no verdict"
    triggered = herdsim.run(seeds=3, series=False, **dict(SERVER, duration=None,
                                                          trigger="outage@1s..1.2s"))
    verdicts = [run["verdict"] for run in triggered.raw["runs"]]
    assert list(triggered.replicates["verdict"]) == verdicts == ["recovered"] * 3
    series = tmp_path / "s.csv"
    cli("run", *flags(SERVER), "--seeds", "2", "--json", "-q", "--series", str(series))
    expected = pd.read_csv(series)
    pd.testing.assert_frame_equal(r.series, expected)
    assert len(r.series) > 10, "a window a row over 2 s"
    assert herdsim.run(seeds=2, series=False, **SERVER).series is None


def test_a_sweep_is_the_command_lines_file(tmp_path):
    mine = tmp_path / "mine.csv"
    frame = herdsim.sweep(policy=["full", "decorrelated"], clients=50, seeds=2, out=mine)
    theirs = tmp_path / "theirs.csv"
    cli("sweep", "--policy", "full,decorrelated", "--clients", "50", "--seeds", "2",
        "--out", str(theirs), "-q")
    assert mine.read_bytes() == theirs.read_bytes()
    assert list(frame.columns) == theirs.read_text().splitlines()[0].split(",")
    assert len(frame) == 2 and set(frame["policy"]) == {"full", "decorrelated"}
    runs = herdsim.sweep(policy=["full", "decorrelated"], clients=50, seeds=2, per_run=True)
    assert len(runs) == 4 and list(runs["replicate"]) == [0, 1, 0, 1]
    # Without out= the same rows, from a scratch file.
    pd.testing.assert_frame_equal(
        herdsim.sweep(policy=["full", "decorrelated"], clients=50, seeds=2), frame
    )
    # A scenario file, its values replaced by keywords.
    scenario = ROOT / "scenarios" / "metastable.toml"
    if scenario.exists():
        rows = herdsim.sweep(scenario, seeds=1, duration="3s", policy="no-backoff")
        assert set(rows["policy"]) == {"no-backoff"}


def test_bad_input_raises_value_error_naming_the_key(tmp_path):
    cases = [
        (dict(clients=-1), "clients"),
        (dict(bogus=1), "unknown parameter 'bogus'"),
        (dict(policy="sideways"), "policy"),
        (dict(policy=["full", "equal"]), "use herdsim.sweep"),
        (dict(base="fast"), "base"),
    ]
    for params, says in cases:
        with pytest.raises(ValueError, match=says.replace("(", r"\(")):
            herdsim.run(seeds=1, **params)
    with pytest.raises(ValueError, match="seeds"):
        herdsim.run(seeds=0, **HERD)
    out = tmp_path / "s.csv"
    out.write_text("keep me\n")
    with pytest.raises(ValueError, match="--force"):
        herdsim.sweep(clients=[10, 20], seeds=1, out=out)
    assert out.read_text() == "keep me\n", "nothing replaced without force"
    herdsim.sweep(clients=[10, 20], seeds=1, out=out, force=True)
    with pytest.raises(ValueError, match="resume: give out="):
        herdsim.sweep(clients=[10, 20], seeds=1, resume=True)
    assert out.read_text().startswith("point,")


def test_the_registry_is_the_command_lines():
    table = herdsim.params()
    assert "clients" in table.index and "policy" in table.index
    assert "decorrelated" in table.loc["policy", "choices"]
    keys = [
        line.split("scenario key: ")[1].split(";")[0]
        for line in cli("params").splitlines()
        if "scenario key: " in line
    ]
    assert keys == list(table.index), "the CLI's keys, in its order"


def test_results_are_the_same_at_any_thread_count():
    script = (
        "import herdsim, json; "
        "r = herdsim.run(seeds=8, clients=200, policy='full'); "
        "print(json.dumps(r.raw, sort_keys=True))"
    )
    outputs = []
    for threads in ("1", "2"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, check=True)
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


def test_a_run_releases_the_gil():
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    started = time.perf_counter()
    herdsim.run(seeds=200, clients=10000, policy="full")
    ended = time.perf_counter()
    done.set()
    counter.join()
    during = [t for t in ticks if started < t < ended]
    # A run that held the GIL would leave the counter a tick or two (the
    # interpreter switches only at the call's edges); released, it ticks
    # about once a millisecond throughout.
    assert ended - started > 0.05, "a run long enough to tell"
    assert len(during) >= 10, f"{len(during)} ticks in {ended - started:.3f} s"


def interrupted_child(script):
    """Runs ``script`` in a child interpreter on one thread (pytest handles
    SIGINT itself), which must succeed and first print "interrupted after
    SECONDS": what it gave, and its output's lines."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, RAYON_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0].startswith("interrupted after"), done.stdout
    return done, lines


def test_ctrl_c_interrupts_a_run_and_leaves_the_interpreter_working():
    # In a child interpreter of its own (pytest handles SIGINT itself): a
    # run of about 1 s on one thread (7 s unoptimised), SIGINT after 0.3 s,
    # then a second run (which waits for the abandoned one's thread: see
    # the docs).
    script = """
import os, signal, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import herdsim
from builtins import map
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
started = time.perf_counter()
try:
    herdsim.run(clients=10000, policy="full", seeds=200)
    print("finished")
except KeyboardInterrupt:
    print("interrupted after", round(time.perf_counter() - started, 2))
print("then", herdsim.run(clients=100, policy="full", seeds=2).summary.loc["calls", "n"])
"""
    done, lines = interrupted_child(script)
    # The signal is looked for every 50 ms: raised well before the run's end.
    assert float(lines[0].split()[-1]) < 1.5, done.stdout
    assert lines[1] == "then 2", done.stdout


def test_ctrl_c_stops_a_sweep_at_its_next_row_and_resume_finishes_it(tmp_path):
    # A 5,000-run sweep of 500 points on one thread (about 0.5 s with the
    # release extension, 10 s unoptimised), SIGINT as soon as progress shows
    # runs done: KeyboardInterrupt, the file holding the rows made so far
    # (some, not all), then resume= continues it to the bytes of an
    # uninterrupted sweep.
    out, whole = tmp_path / "cut.csv", tmp_path / "whole.csv"
    script = f"""
import os, signal, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import herdsim
grid = dict(clients=list(range(100, 600)), policy="full", seeds=10)
sent = []

def tell(done, total):
    if done > 0 and not sent:
        sent.append(done)
        os.kill(os.getpid(), signal.SIGINT)

started = time.perf_counter()
try:
    herdsim.sweep(out={str(out)!r}, progress=tell, **grid)
    print("finished")
except KeyboardInterrupt:
    print("interrupted after", round(time.perf_counter() - started, 2))
rows = len(open({str(out)!r}).read().splitlines()) - 1
print("rows", rows)
frame = herdsim.sweep(out={str(out)!r}, resume=True, **grid)
print("resumed", len(frame))
"""
    done, lines = interrupted_child(script)
    # Stopped at the next row (a row is ten runs of at most 600 clients).
    assert float(lines[0].split()[-1]) < 2.0, done.stdout
    rows = int(lines[1].split()[1])
    assert 0 < rows < 500, f"the interruption really cut the sweep: {done.stdout}"
    assert lines[2] == "resumed 500", done.stdout
    cli("sweep", "--clients", ",".join(str(c) for c in range(100, 600)), "--policy", "full",
        "--seeds", "10", "--out", str(whole), "-q")
    assert out.read_bytes() == whole.read_bytes()


def test_warnings_are_python_warnings():
    with pytest.warns(herdsim.HerdsimWarning, match="--rate has no effect"):
        herdsim.run(seeds=1, clients=100, rate=300)
    # Exactly what the command line prints on standard error.
    done = subprocess.run([BIN, "run", "--clients", "100", "--rate", "300", "--seeds", "1",
                           "-q"], capture_output=True, text=True)
    with pytest.warns(herdsim.HerdsimWarning) as heard:
        herdsim.run(seeds=1, clients=100, rate=300)
    assert [f"warning: {w.message}" for w in heard] == done.stderr.splitlines()


def test_compare_is_the_command_lines_file(tmp_path):
    frame = herdsim.compare(seeds=3)
    theirs = tmp_path / "theirs.csv"
    table = cli("compare", "--seeds", "3", "--csv", str(theirs), "-q")
    assert frame.attrs["table"] == table
    expected = pd.read_csv(theirs, keep_default_na=False, na_values=[""])
    pd.testing.assert_frame_equal(frame, expected)
    assert set(frame["policy"]) == {"none", "equal", "full", "decorrelated"}
    calls = frame[(frame["metric"] == "calls") & (frame["policy"] == "none")]
    # No backoff: every client retries every ms until served, 1 + 2 + ... + 1000.
    assert calls["mean"].item() == 500500 and calls["published"].item() == 28000
    mine = tmp_path / "mine.csv"
    herdsim.compare(seeds=3, csv=mine, policy=["full", "equal"])
    assert set(pd.read_csv(mine)["policy"]) == {"full", "equal"}


def test_assess_is_the_command_lines_json(tmp_path):
    scenario = ROOT / "scenarios" / "sre-service.toml"
    a = herdsim.assess(scenario, seeds=2, refine=0, stall=["outage", "capacity:0"],
                       blip="250ms", report=tmp_path / "a.html")
    shown = cli("assess", str(scenario), "--seeds", "2", "--refine", "0", "--stall", "outage",
                "--stall", "capacity:0", "--blip", "250ms", "--json", "-q")
    assert a.raw == json.loads(shown)
    assert (tmp_path / "a.html").read_text().startswith("<!DOCTYPE html>")
    # The margin table: a row per stall kind and the suggested budget, the
    # printed columns and their numbers.
    assert list(a.margin["stall"])[:2] == ["outage", "capacity:0"]
    assert {"margin", "margin_s", "surely_survived_s", "surely_down_s"} <= set(a.margin.columns)
    assert a.margin["margin_s"].dtype == float
    assert list(a.headroom["stall"]) == ["0.25 s of outage"]
    assert a.rare is None
    public = {name for name in dir(a) if not name.startswith("_") and not name.isupper()}
    assert public == set(herdsim.AssessResult.TYPES), "the stubs list every attribute"
    # In a full outage each request makes exactly max_attempts attempts.
    assert a.figures["outage_attempts_per_request"] == a.figures["outage_attempts_exact"] == 5
    # Each margin curve's points: stuck of decided, within the Wilson band.
    margin = a.curves[a.curves["figure"] == "margin"]
    assert set(margin["label"]) >= {"outage", "capacity:0"}
    assert ((margin["wilson_low"] <= margin["probability"])
            & (margin["probability"] <= margin["wilson_high"])).all()
    assert a.verdict.startswith("At ρ = 0.785 this service")
    assert len(a.commands) == len(a.margin) + len(a.headroom) + 4
    with pytest.raises(ValueError, match="--stall"):
        herdsim.assess(scenario, seeds=2, refine=0, stall="sideways")


MAP = dict(
    resource="server", workers=1, service="exp:1ms", timeout="100ms", duration="6s",
    patience="3s", policy="no-backoff", max_attempts=4, rate=[300, 500],
    trigger=["outage@2s..2.1s", "outage@2s..2.3s", "outage@2s..2.5s"],
)


def test_a_map_is_the_command_lines_file(tmp_path):
    mine, svg = tmp_path / "mine.csv", tmp_path / "mine.svg"
    cells = herdsim.map(x="trigger", y="rate", seeds=6, refine=1, out=mine, svg=svg, **MAP)
    theirs = tmp_path / "theirs.csv"
    cli("map", "--x", "trigger", "--y", "rate", "--resource", "server", "--workers", "1",
        "--service", "exp:1ms", "--timeout", "100ms", "--duration", "6s", "--patience", "3s",
        "--policy", "no-backoff", "--max-attempts", "4", "--rate", "300,500",
        "--trigger", "outage@2s..2.1s;outage@2s..2.3s;outage@2s..2.5s",
        "--seeds", "6", "--refine", "1", "--out", str(theirs), "-q")
    assert mine.read_bytes() == theirs.read_bytes()
    assert svg.read_text().startswith("<svg")
    assert {"storm_probability", "storm_low", "storm_high", "side"} <= set(cells.columns)
    assert set(cells["map_row"]) == {0, 1} and len(cells) >= 6
    with pytest.raises(ValueError, match="--x and --y both name 'rate'"):
        herdsim.map(x="rate", y="rate", seeds=2, **MAP)
    # With splitting, the rare cells carry its estimate.
    split = herdsim.map(x="trigger", y="rate", seeds=6, refine=0, splitting=50, batches=2,
                        high=40, low=5, **MAP)
    rare = split[split["storm_probability"] < 0.05]
    assert len(rare) > 0 and rare["split_probability"].notna().all()


def test_imported_settings_are_the_command_lines():
    files = [ROOT / "scenarios" / "configs" / "envoy-route.yaml",
             ROOT / "scenarios" / "configs" / "envoy-cluster.yaml"]
    pick = {"route": "place-order"}
    text = herdsim.import_config(*files, select=pick)
    assert text == cli("import", *map(str, files), "--select", "route=place-order")
    assert "envoy" in text.lower()
    with pytest.raises(ValueError, match="--select route"):
        herdsim.import_config(*files)
    server = dict(resource="server", rate=500, duration="3s", trigger="outage@1s..1.5s")
    with pytest.warns(herdsim.HerdsimWarning, match="circuit breakers are per Envoy"):
        r = herdsim.run(seeds=2, imports=files, select=pick, series=False, **server)
    shown = cli("run", "--import", str(files[0]), "--import", str(files[1]),
                "--select", "route=place-order",
                *flags(server), "--seeds", "2", "--json", "--per-run", "-q")
    assert r.raw == json.loads(shown)
    with pytest.raises(ValueError, match="at least one"):
        herdsim.import_config()
    with pytest.raises(ValueError):
        herdsim.import_config(ROOT / "no-such-file.yaml")


def test_stubs_and_docstrings_are_the_registrys():
    from herdsim._stubs import stubs

    committed = (ROOT / "python" / "herdsim" / "__init__.pyi").read_text()
    assert committed == stubs(), (
        "herdsim/__init__.pyi drifted from the registry: regenerate it with "
        "python -c \"from herdsim._stubs import stubs; print(stubs(), end='')\""
    )
    for key in herdsim.params().index:
        assert f"    {key}: Optional[" in committed, key
        for function in (herdsim.run, herdsim.sweep, herdsim.map, herdsim.compare,
                         herdsim.assess):
            assert f"        {key}: " in function.__doc__, (function.__name__, key)


def test_progress_is_told_as_runs_end(capsys, monkeypatch):
    heard = []
    herdsim.run(seeds=200, clients=10000, policy="full", progress=lambda d, t: heard.append((d, t)))
    assert heard, "told at least once in a run of about a second"
    assert all(total == 200 for _, total in heard), heard
    done = [d for d, _ in heard]
    assert done == sorted(done) and done[-1] <= 200, heard
    plain = herdsim.run(seeds=3, clients=100, policy="full").raw
    # With tqdm (the CI script installs it) progress=True draws its bar on
    # standard error (a widget in a notebook), the runs counted to the end.
    pytest.importorskip("tqdm")
    capsys.readouterr()
    assert herdsim.run(seeds=50, clients=10000, policy="full", progress=True).raw["replicates"] == 50
    drawn = capsys.readouterr().err
    assert "50/50" in drawn and "run" in drawn, drawn
    # Without it, progress=True draws nothing and changes nothing.
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    assert herdsim.run(seeds=3, clients=100, policy="full", progress=True).raw == plain
    assert capsys.readouterr().err == ""


def test_the_books_python_examples_run(tmp_path):
    # Every ```python block of the book's page, in order, in a scratch
    # directory holding the repository's scenarios (as the book's console
    # examples run).
    page = (ROOT / "docs" / "src" / "guide" / "python.md").read_text()
    blocks = [b.split("```", 1)[0] for b in page.split("```python\n")[1:]]
    assert len(blocks) >= 2, "the page shows its examples"
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace = {}
        for block in blocks:
            exec(compile(block, "python.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert (tmp_path / "m.csv").is_file() and (tmp_path / "map.svg").is_file()
    assert namespace["r"].summary.loc["requests", "n"] == 8
    assert set(namespace["c"]["policy"]) == {"full"} and len(set(namespace["c"]["point"])) == 2
    assert namespace["a"].verdict.startswith("At ρ = ")
