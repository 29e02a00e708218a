"""herdsim from Python: retry storms simulated, their results as DataFrames.

Every function runs herdsim's own command in this process (the Rust
library, with the GIL released and rayon on every core), so what it returns
is what the command line prints or writes for the same inputs and seed,
byte for byte. Parameters are the scenario keys (``herdsim params`` lists
them; :func:`params` returns them), given as keyword arguments.

>>> import herdsim
>>> r = herdsim.run(clients=1000, policy="decorrelated", seeds=10)
>>> r.summary.loc["calls", "mean"]
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import warnings
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Union

import pandas as pd

from . import _herdsim
from ._stubs import keyword_doc, registry

__version__ = _herdsim.__version__

__all__ = [
    "AssessResult",
    "HerdsimError",
    "HerdsimWarning",
    "RunResult",
    "assess",
    "compare",
    "import_config",
    "map",
    "params",
    "run",
    "sweep",
]


class HerdsimError(RuntimeError):
    """A run or a write that failed (the command line's exit code 1): a run
    that reached its event limit, a file that could not be written, a sweep
    or map interrupted (every row before it kept)."""


class HerdsimWarning(UserWarning):
    """What the command line warns of on standard error: a parameter that
    has no effect on the model run, a configuration field read loosely, an
    output file named with another extension; and its notes of what a
    figure depends on (``note: ...``: runs cut at the default horizon)."""


#: The registry by key (the command line's parameters).
_PARAMS: Dict[str, Dict[str, Any]] = {p["key"]: p for p in registry()}


def params() -> pd.DataFrame:
    """Every parameter, a row each, indexed by key: what it is, what it
    accepts, its default and its group (the registry the command line's
    flags, scenario keys and errors come from)."""
    frame = pd.DataFrame(list(_PARAMS.values())).set_index("key")
    frame["choices"] = [list(c) for c in frame["choices"]]
    return frame


def _text(value: Any) -> str:
    """A single value as the command line reads it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _flags(values: Mapping[str, Any], lists: bool) -> list:
    """The command-line flags of ``values`` (scenario keys), each checked
    by the registry: a ``ValueError`` naming the key otherwise. A list or
    tuple is a sweep's axis (``lists``), joined by the key's separator."""
    flags = []
    for key, value in values.items():
        if value is None:
            continue
        if key not in _PARAMS:
            _herdsim.check(key, "")  # raises, listing the keys
        if isinstance(value, (list, tuple)):
            if not lists:
                raise ValueError(
                    f"{key}: one value expected here (a list is a sweep's axis: "
                    f"use herdsim.sweep)"
                )
            if not value:
                raise ValueError(f"{key}: an empty list; give at least one value")
            texts = [_text(v) for v in value]
            for text in texts:
                _herdsim.check(key, text)
            text = _PARAMS[key]["list_separator"].join(texts)
        else:
            text = _text(value)
            _herdsim.check(key, text)
        flags += ["--" + key.replace("_", "-"), text]
    return flags


Progress = Union[bool, Callable[[int, int], None]]


def _progress_hook(progress: Progress):
    """What to tell of progress, and what to do at the end (given whether
    the call succeeded): ``progress`` itself if callable (it hears runs done
    and their total), a tqdm bar (``tqdm.auto``: a widget in a notebook) if
    True and tqdm is installed, else nothing. A bar that succeeded is shown
    full before it goes: the last runs may end between two looks."""
    if callable(progress):
        return progress, lambda ok: None
    if not progress:
        return None, lambda ok: None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, lambda ok: None
    bar = tqdm(total=0, unit="run", leave=False)

    def tell(done: int, total: int) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.n = done
        bar.refresh()

    def finish(ok: bool) -> None:
        if ok and bar.total:
            bar.n = bar.total
            bar.refresh()
        bar.close()

    return tell, finish


def _call(args: Iterable[str], progress: Progress = False) -> str:
    """Runs ``herdsim ARGS``: its standard output, or the error it gave as
    ``ValueError`` (bad input) or :class:`HerdsimError`; its warnings as
    :class:`HerdsimWarning`, attributed to the caller's caller."""
    tell, finish = _progress_hook(progress)
    code = None
    try:
        code, stdout, error, warned = _herdsim.call([str(a) for a in args], tell)
    finally:
        finish(code == 0)
    for line in warned:
        warnings.warn(line.removeprefix("warning: "), HerdsimWarning, stacklevel=3)
    if code == 2:
        raise ValueError(error)
    if code != 0:
        raise HerdsimError(error)
    return stdout


def _options(**options: Any) -> list:
    """The flags of a command's own options (not scenario keys): `None`
    left out, `True` a bare flag, a list repeated, names with dashes."""
    flags = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                flags += [flag, os.fspath(item) if isinstance(item, os.PathLike) else _text(item)]
        else:
            flags += [flag, os.fspath(value) if isinstance(value, os.PathLike) else _text(value)]
    return flags


def _imports(
    files: Iterable[Union[str, os.PathLike]], select: Optional[Mapping[str, str]]
) -> list:
    """``--import FILE`` for each file, ``--select KIND=NAME`` for each
    choice."""
    picks = [f"{kind}={name}" for kind, name in (select or {}).items()]
    return _options(select=picks, **{"import": list(files)})


def _seeding(seeds: Optional[int], seed: Optional[int]) -> list:
    flags = []
    if seeds is not None:
        flags += ["--seeds", str(int(seeds))]
    if seed is not None:
        flags += ["--seed", str(int(seed))]
    return flags


def _command(name: str, scenario: Optional[Union[str, os.PathLike]]) -> list:
    """A command's first words: its name and its scenario file, if any."""
    return [name] + ([os.fspath(scenario)] if scenario is not None else [])


def _written(
    args: list,
    flag: str,
    out: Optional[Union[str, os.PathLike]],
    progress: Progress,
    resume: bool = False,
    **read: Any,
):
    """Runs ``args`` writing its CSV with ``flag`` to ``out`` (continuing
    it with ``resume``), or to a scratch file removed after: the rows as a
    DataFrame (``read`` passed to ``pandas.read_csv``) and what the command
    printed."""
    if resume and out is None:
        raise ValueError(f"resume: give out=, the file of the interrupted {args[0]} to continue")
    with tempfile.TemporaryDirectory(prefix="herdsim-") as scratch:
        path = os.fspath(out) if out is not None else os.path.join(scratch, "written.csv")
        stdout = _call(args + [flag, path] + _options(resume=resume), progress)
        return pd.read_csv(path, **read), stdout


class RunResult:
    """One workload over its replicate seeds, as ``herdsim run --json``
    gives it.

    Attributes:
        summary: a DataFrame indexed by metric: n, mean, sd, ci95 (the 95%
            half-width), min and max over the replicates.
        replicates: a DataFrame, a row per replicate, a column per metric
            (and, on the server model, each run's verdict).
        series: the server model's time series of replicate 0 (a row per
            window, as ``--series`` writes it), or None for the herd models.
        storm_probability: the server model's storm probability with its
            Wilson interval, or None.
        workload: what was run, as the command line states it.
        master_seed: the master seed the replicates' seeds come from.
        raw: the whole JSON document, as a dict.

    ``summary`` and ``replicates`` are made when first read, so a loop of
    calls that reads one figure from ``raw`` pays for no DataFrame.
    """

    #: The attributes' types, for the stubs.
    TYPES = {
        "raw": "Dict[str, Any]",
        "workload": "Dict[str, Any]",
        "master_seed": "Optional[int]",
        "storm_probability": "Optional[Dict[str, Any]]",
        "summary": "pd.DataFrame",
        "replicates": "pd.DataFrame",
        "series": "Optional[pd.DataFrame]",
    }
    METHODS = {"to_dict": "Dict[str, Dict[str, Any]]"}

    def __init__(self, document: dict, series: Optional[pd.DataFrame]):
        self.raw = document
        self.workload = document.get("workload", {})
        self.master_seed = document.get("master_seed")
        self.storm_probability = document.get("storm_probability")
        self.series = series

    @functools.cached_property
    def summary(self) -> pd.DataFrame:
        metrics = self.raw["metrics"]
        return pd.DataFrame(
            [list(figures.values()) for figures in metrics.values()],
            index=pd.Index(list(metrics), name="metric"),
            columns=list(next(iter(metrics.values()))),
        )

    @functools.cached_property
    def replicates(self) -> pd.DataFrame:
        runs = self.raw.get("runs", [])
        if not runs:
            return pd.DataFrame()
        frame = pd.DataFrame(
            [list(r["metrics"].values()) for r in runs],
            index=pd.Index([r["replicate"] for r in runs], name="replicate"),
            columns=list(runs[0]["metrics"]),
        )
        if "verdict" in runs[0]:
            frame["verdict"] = [r["verdict"] for r in runs]
        return frame

    def to_dict(self) -> dict:
        """The summary as plain dicts: ``{metric: {"mean": ..., ...}}``."""
        return {k: dict(v) for k, v in self.raw["metrics"].items()}

    def __repr__(self) -> str:
        return f"RunResult({len(self.replicates)} replicates, {len(self.summary)} metrics)"


def run(
    *,
    seeds: Optional[int] = None,
    seed: Optional[int] = None,
    series: bool = True,
    imports: Iterable[Union[str, os.PathLike]] = (),
    select: Optional[Mapping[str, str]] = None,
    progress: Progress = False,
    **parameters: Any,
) -> RunResult:
    """Runs one workload over ``seeds`` replicates from master seed ``seed``,
    as ``herdsim run`` does: ``herdsim.run(clients=1000, policy="full")``.

    Parameters are scenario keys with one value each. On the server model
    (``resource="server"``) ``series`` also reads replicate 0's time
    series. ``imports`` are configuration files (gRPC, Envoy, AWS,
    resilience4j, Polly, Linkerd) read as by ``--import``, below the
    keywords, ``select`` choosing among what they hold (``{"route":
    "place-order"}``). ``progress=True`` draws a tqdm bar of the runs (if
    tqdm is installed); a callable hears (runs done, total). Bad input raises ``ValueError`` naming the key; a run that
    fails raises :class:`HerdsimError`.
    """
    args = ["run"] + _flags(parameters, lists=False) + _seeding(seeds, seed)
    args += _imports(imports, select)
    args += ["--json", "--per-run", "--quiet"]
    server = parameters.get("resource") == "server"
    if not (server and series):
        return RunResult(json.loads(_call(args, progress)), None)
    with tempfile.TemporaryDirectory(prefix="herdsim-") as scratch:
        path = os.path.join(scratch, "series.csv")
        document = json.loads(_call(args + ["--series", path], progress))
        return RunResult(document, pd.read_csv(path))


def sweep(
    scenario: Optional[Union[str, os.PathLike]] = None,
    *,
    seeds: Optional[int] = None,
    seed: Optional[int] = None,
    per_run: bool = False,
    out: Optional[Union[str, os.PathLike]] = None,
    force: bool = False,
    resume: bool = False,
    imports: Iterable[Union[str, os.PathLike]] = (),
    select: Optional[Mapping[str, str]] = None,
    progress: Progress = False,
    **grid: Any,
) -> pd.DataFrame:
    """Runs a grid of workloads over replicate seeds, as ``herdsim sweep``
    does, into a DataFrame with the sweep file's columns: a row per point
    (each metric's mean, sd, ci95, min and max over its seeds), or a row
    per run with ``per_run``.

    The grid is a scenario file's (``scenario``), keyword arguments (a list
    is an axis: ``policy=["full", "decorrelated"]``), or both, the keywords
    replacing the file's values. ``out`` also keeps the CSV file (replaced
    only with ``force``), written a row at a time: interrupted (Ctrl-C), it
    keeps every row before it, and ``resume`` continues it to the file an
    uninterrupted sweep writes.
    """
    args = _command("sweep", scenario)
    args += _flags(grid, lists=True) + _seeding(seeds, seed) + ["--quiet"]
    args += _options(per_run=per_run, force=force) + _imports(imports, select)
    return _written(args, "--out", out, progress, resume)[0]


def map(  # noqa: A001 - herdsim's command of that name
    scenario: Optional[Union[str, os.PathLike]] = None,
    *,
    x: str,
    y: str,
    seeds: Optional[int] = None,
    seed: Optional[int] = None,
    refine: Optional[int] = None,
    max_seeds: Optional[int] = None,
    max_runs: Optional[int] = None,
    splitting: Optional[int] = None,
    batches: Optional[int] = None,
    high: Optional[int] = None,
    low: Optional[int] = None,
    split_below: Optional[float] = None,
    out: Optional[Union[str, os.PathLike]] = None,
    svg: Optional[Union[str, os.PathLike]] = None,
    force: bool = False,
    resume: bool = False,
    imports: Iterable[Union[str, os.PathLike]] = (),
    select: Optional[Mapping[str, str]] = None,
    progress: Progress = False,
    **grid: Any,
) -> pd.DataFrame:
    """Maps where a server-model service tips over as the keys ``x`` and
    ``y`` vary, refined along the boundary, as ``herdsim map`` does: a row
    per cell, with the map file's columns (storm probability and its Wilson
    interval, side, recovery, and with ``splitting`` the rare-storm
    estimate of the cells below ``split_below``). ``x`` and ``y`` take
    lists (``rate=[300, 500]``); ``out`` and ``svg`` keep the CSV and the
    heatmap (replaced only with ``force``). Interrupted (Ctrl-C), a map
    with ``out`` keeps every run before it, and ``resume`` continues it.
    """
    args = _command("map", scenario)
    args += ["--x", x, "--y", y] + _flags(grid, lists=True) + _seeding(seeds, seed)
    args += _options(
        refine=refine,
        max_seeds=max_seeds,
        max_runs=max_runs,
        splitting=splitting,
        batches=batches,
        high=high,
        low=low,
        split_below=split_below,
        svg=svg,
        force=force,
        quiet=True,
    ) + _imports(imports, select)
    return _written(args, "--out", out, progress, resume)[0]


def compare(
    scenario: Optional[Union[str, os.PathLike]] = None,
    *,
    seeds: Optional[int] = None,
    seed: Optional[int] = None,
    reference: Optional[Union[str, os.PathLike]] = None,
    csv: Optional[Union[str, os.PathLike]] = None,
    plot: Optional[Union[str, os.PathLike]] = None,
    force: bool = False,
    imports: Iterable[Union[str, os.PathLike]] = (),
    select: Optional[Mapping[str, str]] = None,
    progress: Progress = False,
    **grid: Any,
) -> pd.DataFrame:
    """Sets a scenario's points side by side, as ``herdsim compare`` does,
    with the published figures and verdicts where there are any: a row per
    point and metric, with the compare file's columns (the point's
    parameters, ``metric``, its mean, sd, ci95, min and max over the seeds,
    ``published``, its range and source, and ``verdict``). The scenario is
    the four-strategy table unless given; keywords replace its values (a
    list is an axis). The printed table is in ``frame.attrs["table"]``.
    ``csv`` and ``plot`` keep the CSV and the SVG (replaced only with
    ``force``); ``reference`` judges a study against a rerun of its
    authors' code.
    """
    args = _command("compare", scenario)
    args += _flags(grid, lists=True) + _seeding(seeds, seed)
    args += _options(reference=reference, plot=plot, force=force, quiet=True)
    args += _imports(imports, select)
    frame, table = _written(args, "--csv", csv, progress, keep_default_na=False, na_values=[""])
    frame.attrs["table"] = table
    return frame


class AssessResult:
    """What ``herdsim assess`` answers for one service, as ``--json`` gives
    it.

    Attributes:
        margin: a DataFrame a row per stall kind (and the suggested budget):
            the table as printed, then its figures as numbers
            (``margin_s``, ``surely_survived_s``, ``surely_down_s``,
            ``runs``; NaN where the map found none, "beyond 16 s").
        headroom: the same, a row per blip (``headroom_rho``, ...).
        rare: with ``splitting``, a row per blip (``probability``,
            ``ci95``, ``plain_runs``, ``high``, ``low``), else None.
        figures: the failure and recovery figures as a dict of numbers
            (``outage_attempts_per_request``, ``partial_success`` and its
            ``_exact`` value, ``recovery_median_ms``, ...).
        findings: those figures as the text states them, a line each.
        curves: every map row's storm curve, a row per cell: ``figure``
            (margin or headroom), ``label``, ``x`` (stall length in s, or
            ρ), ``stuck``, ``decided``, ``probability`` and its Wilson 95%
            interval.
        verdict: the verdict, in words.
        commands: the command behind each ``[n]`` of the tables, in order.
        workload: the service, as ``herdsim run --json`` states it.
        raw: the whole JSON document, as a dict.
    """

    #: The attributes' types, for the stubs.
    TYPES = {
        "raw": "Dict[str, Any]",
        "workload": "Dict[str, Any]",
        "margin": "pd.DataFrame",
        "headroom": "pd.DataFrame",
        "rare": "Optional[pd.DataFrame]",
        "figures": "Dict[str, Optional[float]]",
        "findings": "List[str]",
        "curves": "pd.DataFrame",
        "verdict": "str",
        "commands": "List[str]",
    }
    METHODS: Dict[str, str] = {}

    def __init__(self, document: dict):
        self.raw = document
        self.workload = document["workload"]
        self.verdict = document["verdict"]
        self.commands = document["commands"]
        self.findings = document["findings"]
        self.figures = document["figures"]
        tables = document["tables"]
        self.margin = self._table(tables["margin"])
        self.headroom = self._table(tables["headroom"])
        self.rare = self._table(tables["rare"]) if "rare" in tables else None
        self.curves = pd.DataFrame(
            [
                dict(figure=c["figure"], label=c["label"], **point)
                for c in document["curves"]
                for point in c["points"]
            ]
        )

    @staticmethod
    def _table(table: dict) -> pd.DataFrame:
        frame = pd.DataFrame(table["rows"], columns=table["columns"])
        for name, values in table["numbers"].items():
            frame[name] = pd.array(values, dtype="Float64").astype(float)
        return frame

    def __repr__(self) -> str:
        return f"AssessResult(verdict={self.verdict!r})"


def assess(
    scenario: Optional[Union[str, os.PathLike]] = None,
    *,
    stall: Union[str, Iterable[str], None] = None,
    blip: Union[str, Iterable[str], None] = None,
    partial: Optional[float] = None,
    suggest: Optional[str] = None,
    refine: Optional[int] = None,
    seeds: Optional[int] = None,
    seed: Optional[int] = None,
    high: Optional[int] = None,
    low: Optional[int] = None,
    splitting: Optional[int] = None,
    batches: Optional[int] = None,
    report: Optional[Union[str, os.PathLike]] = None,
    force: bool = False,
    imports: Iterable[Union[str, os.PathLike]] = (),
    select: Optional[Mapping[str, str]] = None,
    progress: Progress = False,
    **service: Any,
) -> AssessResult:
    """Answers whether a server-model service recovers, as ``herdsim
    assess`` does: its margin (the longest stall of each ``stall`` kind it
    survives), its headroom (the highest offered load at which it survives
    each ``blip``), its behaviour under full and ``partial`` failure, its
    recovery times, with ``splitting`` how rare a storm is, and a verdict;
    every figure with the command that reproduces it. ``suggest`` is a
    retry budget to compare the margin with (``"none"`` for none).
    ``report`` also writes the HTML page (replaced only with ``force``).
    The service is a scenario file, configuration ``imports``, keywords,
    or all three, the keywords last.
    """
    if isinstance(stall, str):
        stall = [stall]
    if isinstance(blip, str):
        blip = [blip]
    args = _command("assess", scenario)
    args += _flags(service, lists=False) + _seeding(seeds, seed)
    args += _options(
        stall=list(stall or []),
        blip=list(blip or []),
        partial=partial,
        suggest=suggest,
        refine=refine,
        high=high,
        low=low,
        splitting=splitting,
        batches=batches,
        report=report,
        force=force,
        quiet=True,
        json=True,
    ) + _imports(imports, select)
    return AssessResult(json.loads(_call(args, progress)))


def import_config(
    *files: Union[str, os.PathLike], select: Optional[Mapping[str, str]] = None
) -> str:
    """Reads configuration files (a gRPC service config, an Envoy route and
    cluster, an AWS config file, resilience4j or Polly settings, a Linkerd
    or Gateway API retry budget) as ``herdsim import`` does: the scenario
    TOML they amount to, every key commented with its source field. Pass
    the files to ``run``, ``sweep`` or ``map`` as ``imports=`` to run them.
    ``select`` picks among what a file holds (``{"route": "api"}``).
    """
    if not files:
        raise ValueError("import_config: give at least one configuration file")
    return _call(["import", *[os.fspath(f) for f in files]] + _imports((), select))


def _document_keywords() -> None:
    """Appends every scenario key to the docstrings of the functions that
    take them, from the registry (as the stubs are)."""
    keys = keyword_doc()
    for function in (run, sweep, map, compare, assess):
        function.__doc__ = (function.__doc__ or "").rstrip() + "\n\n    " + keys + "\n"


_document_keywords()
