"""Private group-by: dp.stats.groupby against the non-private pandas group-by it replaces, in memory and on dask.

Run: python benchmarks/bench_groupby.py [--quick]
     python benchmarks/bench_groupby.py --scale   (pandas vs ours at 10⁶ and 10⁷ rows, 10² and 10⁴ groups)
     python benchmarks/bench_groupby.py --quantiles [--before DIR] [--peer-python PYTHON]
     python benchmarks/bench_groupby.py --selection  (released groups: threshold vs set-union selection)
     python benchmarks/bench_groupby.py --workers [ROWS ...]  (dask LocalCluster, 1 vs 2 workers; 10⁶ and 10⁷)
     python benchmarks/bench_groupby.py --peers PEER_PYTHON  (against OpenDP's polars group-by and PipelineDP)

Prints a Markdown table for benchmarks/README.md. Data: n rows of (person id, one of 200 city labels, a N(50, 20)
value), people owning 1-6 rows; the query is count and mean per city with bounds (0, 100), ε = 1, δ = 10⁻⁶ and
private partition selection; default (secure) randomness. All times are CPU-time medians of functions interleaved
round by round in this one process (the machine is shared), so the ratios are what to read.

``--quantiles`` times instead a median per group for 10⁴ public groups of 10 rows (bounds (0, 100), ε = 1, secure
randomness): ``dp.stats.groupby`` (count and median per group), the same call of an older checkout of the library
(``--before DIR``, a directory holding its ``diffpriv_py`` package, imported under another name), and per-group
Python loops of one-column releases (the groups split beforehand, outside the timing): ``dp.stats.median`` here, and
``dp.stats.median`` against diffprivlib's ``tools.median`` in the peer environment (``--peer-python``, a child
process; its ratio is chained through the ``dp.stats.median`` loop timed in both processes).

``--peers PEER_PYTHON`` runs count + mean per group with per-person bounds (``max_groups``, ``max_rows``) and private
keys in this library (in this process, with pandas' ``groupby('city').x.agg(['count', 'mean'])`` as the non-private
floor, interleaved) and in OpenDP's polars group-by and PipelineDP's local backend (``benchmarks/peer_groupby.py``
in ``PEER_PYTHON``, one child process per library and table, with a timeout; a peer that is missing, fails or times
out is reported as such). All run on the same tables: this benchmark's layout from the same seed, with integer
group labels. It prints one Markdown table of CPU times (× pandas) and groups released at 10⁶ and 10⁷ rows and 10²
and 10⁴ groups (``max_groups = max_rows = 2``), then the released groups at 10⁶ rows, 10⁴ groups and ``max_groups``
1, 2, 5, 10. The peers' guarantees are under add/remove one person. If ``dp.stats.groupby`` takes the add/remove
relation (``neighbouring=`` or ``relation=``), every library runs at the same (ε, δ) = (1, 10⁻⁶) under add/remove;
otherwise this library runs replace-one (1, 10⁻⁶) and the peers add/remove (ε/2, δ/(1 + e^{ε/2})), which implies
replace-one (ε, δ): equal guarantee, and the table says which comparison was made.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import inspect
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import diffpriv_py as dp

N_GROUPS, GROUP_ROWS = 10_000, 10


def median_times(fns: list[Callable[[], Any]], repeats: int) -> list[float]:
    """Median CPU time of each function, interleaved in every round after one warm-up round."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.process_time()
            fn()
            times[i].append(time.process_time() - start)
    return [statistics.median(t) for t in times]


def table(n: int, rng: np.random.Generator, n_cities: int = 200) -> Any:
    import pandas as pd

    rows = rng.integers(1, 7, n // 3)
    pid = np.repeat(np.arange(rows.size), rows)[:n]
    width = max(3, len(str(n_cities - 1)))
    city = rng.choice(np.array([f"c{i:0{width}d}" for i in range(n_cities)]), pid.size)
    return pd.DataFrame({"pid": pid, "city": city, "x": rng.normal(50, 20, pid.size)})


SCALE_CASES = ((1_000_000, 100), (1_000_000, 10_000), (10_000_000, 100), (10_000_000, 10_000))


def scale_child(n: int, n_cities: int, repeats: int) -> None:
    """One size in a fresh process: pandas' group-by and ours (count + mean, privacy_unit, max_groups = max_rows = 2,
    Del(1, 10⁻⁶)) interleaved; then each one's peak extra memory (tracemalloc, untimed). Prints JSON."""
    import os
    import tracemalloc

    import diffpriv_py.pandas  # noqa: F401  (registers DataFrame.private)

    df = table(n, np.random.default_rng(0), n_cities)
    query = {"column": "x", "statistics": ["count", "mean"], "bounds": (0, 100), "privacy_unit": "pid"}

    def ours() -> Any:
        return df.private.groupby("city", dp.Del(1.0, 1e-6), max_groups=2, max_rows=2, **query)

    load = [os.getloadavg()[0]]
    t_pandas, t_ours = median_times([lambda: pandas_agg(df), ours], repeats)
    load.append(os.getloadavg()[0])
    peaks = []
    for fn in (lambda: pandas_agg(df), ours):
        tracemalloc.start()
        fn()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    size = int(df.memory_usage(deep=True).sum())
    print(json.dumps({"pandas": t_pandas, "ours": t_ours, "peak_pandas": peaks[0], "peak_ours": peaks[1],
                      "input": size, "load": max(load)}))  # fmt: skip


def scale_table() -> None:
    """Pandas' group-by against ours at 10⁶ and 10⁷ rows and 10² and 10⁴ groups, one child process per size."""
    import math
    import platform

    results = {}
    for n, n_cities in SCALE_CASES:
        repeats = 5 if n <= 1_000_000 else 3
        child = subprocess.run(
            [sys.executable, __file__, "--scale-child", str(n), str(n_cities), "--repeats", str(repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
        results[n, n_cities] = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"{platform.processor() or platform.machine()}, {__import__('os').cpu_count()} cores; count + mean per city, "
          "privacy_unit, max_groups = max_rows = 2, Del(1, 1e-6); CPU-time medians, pandas and ours interleaved in "
          "one process per size\n")  # fmt: skip
    print("| rows | groups | pandas (s) | ours (s) | ours / pandas | peak extra memory / input (ours; pandas) "
          "| load avg |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for (n, g), r in results.items():
        print(f"| {n:.0e} | {g:,} | {r['pandas']:.3f} | {r['ours']:.3f} | {r['ours'] / r['pandas']:.1f} "
              f"| {r['peak_ours'] / r['input']:.2f}; {r['peak_pandas'] / r['input']:.2f} "
              f"(input {r['input'] / 2**20:.0f} MiB) | {r['load']:.1f} |")  # fmt: skip
    for g in sorted({g for _, g in results}):
        small, large = results[1_000_000, g], results[10_000_000, g]
        slope = math.log10(large["ours"] / small["ours"])
        slope_pd = math.log10(large["pandas"] / small["pandas"])
        print(f"\n{g:,} groups: log-log slope 10⁶ → 10⁷ rows, ours {slope:.2f}, pandas {slope_pd:.2f}")


SELECTION_GROUPS = (100, 10_000)
SELECTION_MAX_GROUPS = (1, 2, 5, 10)


def selection_table(seeds: int) -> None:
    """Released groups at equal (ε, δ) = (1, 10⁻⁶), replace-one person: the threshold vs the weighted Gaussian, for
    10⁶ rows over 10² or 10⁴ groups and max_groups 1, 2, 5, 10 (count + mean, max_rows = 2, so ε_s = ⅓). Two people
    layouts: the benchmark table's 1-6 rows per person, and 20 rows per person (people in many groups). Each cell
    is the mean over ``seeds`` releases; "auto" is the policy the default picks (from public numbers only)."""
    gen = np.random.default_rng(0)
    n = 1_000_000
    query = {"statistics": ["count", "mean"], "bounds": (0, 100), "max_rows": 2}
    params = dp.Del(1.0, 1e-6)
    print(f"{n:.0e} rows, Del(1, 1e-6), count + mean, max_rows = 2; released groups (mean of {seeds} seeds), "
          "time per release (s)\n")  # fmt: skip
    print("| people | groups | max_groups | threshold | weighted Gaussian | auto picks | time thr / wg (s) |")
    print("|---|---|---|---|---|---|---|")
    for layout in ("1-6 rows", "20 rows"):
        for n_groups in SELECTION_GROUPS:
            if layout == "1-6 rows":
                df = table(n, gen, n_groups)
                by, unit, x = df["city"].to_numpy(), df["pid"].to_numpy(), df["x"].to_numpy()
            else:
                unit = np.repeat(np.arange(n // 20), 20)
                by = gen.integers(0, n_groups, n)
                x = gen.normal(50, 20, n)
            for g in SELECTION_MAX_GROUPS:
                counts, times = {}, {}
                for policy in ("threshold", "weighted_gaussian"):
                    released, start = [], time.process_time()
                    for seed in range(seeds):
                        out = dp.stats.groupby(by, params, values=x, privacy_unit=unit, max_groups=g,
                                               selection=policy, rng=seed, **query)  # fmt: skip
                        released.append(len(out))
                    counts[policy] = statistics.mean(released)
                    times[policy] = (time.process_time() - start) / seeds
                mech = dp.stats.GroupBy(statistics=("count", "mean"), bounds=(0, 100), max_groups=g, max_rows=2)
                auto = mech.selection_policy(mech.split(params)[0])
                print(f"| {layout} | {n_groups:,} | {g} | {counts['threshold']:g} | {counts['weighted_gaussian']:g} "
                      f"| {auto} | {times['threshold']:.2f} / {times['weighted_gaussian']:.2f} |")  # fmt: skip


PEER_CASES = ((1_000_000, 100), (1_000_000, 10_000), (10_000_000, 100), (10_000_000, 10_000))
PEER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer_groupby.py")


def add_remove_keyword() -> dict[str, str]:
    """The keyword that makes ``dp.stats.groupby`` use the add/remove-one-person relation, if it has one."""
    parameters = inspect.signature(dp.stats.groupby).parameters
    for name in ("neighbouring", "relation"):
        if name in parameters:
            return {name: "add_remove"}
    return {}


def run_peer(peer_python: str, library: str, case: tuple[Any, ...], repeats: int, timeout: float) -> dict[str, Any]:
    """One child process of ``peer_groupby.py``: its JSON, or ``{"error": ...}`` if it failed or timed out."""
    command = [peer_python, PEER_SCRIPT, library, *(str(c) for c in case), "--repeats", str(repeats)]
    try:
        child = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        lines = child.stdout.strip().splitlines()
        if not lines:
            return {"error": f"exit {child.returncode}: {child.stderr.strip()[-300:]}"}
        out: dict[str, Any] = json.loads(lines[-1])
        return out
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    except (OSError, ValueError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def peer_cell(result: dict[str, Any], floor: float) -> tuple[str, str]:
    """Markdown cells for a peer's result: 'time (× pandas)' and its released groups (or why there are none)."""
    if result.get("error"):
        return f"failed: {result['error'][:120]}", "–"
    if result.get("skipped"):
        return f"not run: {result['skipped']}", "–"
    t = statistics.median(result["times"])
    plan = f"; plan {statistics.median(result['plan']):.2f}" if result.get("plan") else ""
    runs = f", {len(result['times'])} runs" if len(result["times"]) > 1 else ""
    return f"{t:.2f} ({t / floor:.0f}×{runs}{plan})", "/".join(str(r) for r in result["released"])


def peers_table(peer_python: str, repeats: int, timeout: float, pipelinedp_max_n: int, max_n: int, quick: bool) -> None:
    """This library, pandas, OpenDP and PipelineDP on the same tables: times, × pandas and groups released.

    Ours and pandas: ``repeats`` interleaved rounds at 10⁶ rows, half as many at 10⁷; OpenDP: min(3, ``repeats``)
    releases at 10⁶ rows, one at 10⁷ (about 45 s CPU); PipelineDP: one release, only up to ``pipelinedp_max_n``
    rows (about 15 s CPU and 0.8 GB per 10⁶ rows, as Python tuples). Tables above ``max_n`` rows are left out;
    ``quick``: 10⁵ rows only, to check the plumbing."""
    import platform

    import pandas as pd

    eps, delta = 1.0, 1e-6
    keyword = add_remove_keyword()
    if keyword:
        peer_eps, peer_delta = eps, delta
        comparison = (f"every library under add/remove one person at (ε, δ) = ({eps:g}, {delta:g}) "
                      f"(ours with `{next(iter(keyword))}=\"add_remove\"`)")  # fmt: skip
    else:
        peer_eps, peer_delta = eps / 2, delta / (1 + math.exp(eps / 2))
        comparison = (f"equal guarantee: ours replace-one ({eps:g}, {delta:g}); the peers add/remove "
                      f"({peer_eps:g}, {peer_delta:.3g}), which implies replace-one ({eps:g}, {delta:g}) "
                      "(this checkout's `dp.stats.groupby` has no add/remove relation)")  # fmt: skip
    params = dp.Del(eps, delta)
    query = {"statistics": ["count", "mean"], "bounds": (0, 100), "max_rows": 2}
    rows: list[str] = []
    loads = [os.getloadavg()[0]]

    def ours_and_pandas(n: int, n_groups: int, g: int, rounds: int) -> tuple[float, float, list[int]]:
        rng = np.random.default_rng(0)  # bench_groupby.table's draws, integer labels (as peer_groupby.table)
        counts = rng.integers(1, 7, n // 3)
        pid = np.repeat(np.arange(counts.size), counts)[:n]
        city = rng.integers(0, n_groups, pid.size)
        df = pd.DataFrame({"pid": pid, "city": city, "x": rng.normal(50, 20, pid.size)})
        released: list[int] = []

        def ours() -> None:
            out = dp.stats.groupby(df["city"].to_numpy(), params, values=df["x"].to_numpy(),
                                   privacy_unit=df["pid"].to_numpy(), max_groups=g, **query, **keyword)  # fmt: skip
            released.append(len(out))

        if rounds == 0:
            ours()
            return math.nan, math.nan, released
        t_pandas, t_ours = median_times([lambda: pandas_agg(df), ours], rounds)
        return t_pandas, t_ours, released[1:]

    versions: dict[str, str] = {}
    summaries: list[str] = []
    cases = ((100_000, 100), (100_000, 10_000)) if quick else [c for c in PEER_CASES if c[0] <= max_n]
    for n, n_groups in cases:
        rounds = repeats if n <= 1_000_000 else max(1, repeats // 2)
        t_pandas, t_ours, ours_released = ours_and_pandas(n, n_groups, 2, rounds)
        loads.append(os.getloadavg()[0])
        case = (n, n_groups, 2, 2, peer_eps, peer_delta)
        odp = run_peer(peer_python, "opendp", case, min(3, repeats) if n <= 1_000_000 else 1, timeout)
        if odp.get("summary"):
            parts = [f"{s['column']} {s['aggregate']} scale {s['scale']:.4g}"
                     + (f" threshold {s['threshold']}" if s["threshold"] is not None else "")
                     for s in odp["summary"]]  # fmt: skip
            summaries.append(f"{n:.0e} rows, {n_groups:,} groups: " + ", ".join(parts))
        if n <= pipelinedp_max_n:
            pdp = run_peer(peer_python, "pipelinedp", case, 1, timeout)
        else:
            pdp = {"skipped": f"> {pipelinedp_max_n:.0e} rows (about 16 s CPU and 1 GB per 10⁶ rows)"}
        loads.append(os.getloadavg()[0])
        cells = [peer_cell(r, t_pandas) for r in (odp, pdp)]
        rows.append(f"| {n:.0e} | {n_groups:,} | {t_pandas:.3f} | {t_ours:.2f} ({t_ours / t_pandas:.0f}×) "
                    f"| {cells[0][0]} | {cells[1][0]} | {'/'.join(map(str, ours_released))} "
                    f"| {cells[0][1]} | {cells[1][1]} |")  # fmt: skip
        versions.update({r["library"]: r["version"] for r in (odp, pdp) if r.get("version")})
    print(f"{platform.machine()}, {os.cpu_count()} cores (shared); count + mean per group, max_groups = max_rows = 2, "
          f"bounds (0, 100), private keys; {comparison}. CPU-time medians (process time, all threads); groups "
          "released by each timed run\n")  # fmt: skip
    print("| rows | groups | pandas (s) | ours (s) | OpenDP (s) | PipelineDP (s) | released: ours | OpenDP "
          "| PipelineDP |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nOpenDP's plan (`summarize`): " + "; ".join(summaries))
    selection = []
    n, n_groups = (100_000 if quick else 1_000_000), 10_000
    for g in SELECTION_MAX_GROUPS:
        ours_released = ours_and_pandas(n, n_groups, g, 0)[2]
        case = (n, n_groups, g, 2, peer_eps, peer_delta)
        odp, pdp = (run_peer(peer_python, lib, case, 1, timeout) for lib in ("opendp", "pipelinedp"))
        cells = [peer_cell(r, 1.0)[1] if not r.get("error") else f"failed: {r['error'][:80]}" for r in (odp, pdp)]
        selection.append(f"| {g} | {ours_released[0]} | {cells[0]} | {cells[1]} |")
        loads.append(os.getloadavg()[0])
    print(f"\n{n:.0e} rows, {n_groups:,} groups, max_rows = 2, one release each; groups released\n")
    print("| max_groups | ours (selection='auto') | OpenDP | PipelineDP |")
    print("|---|---|---|---|")
    print("\n".join(selection))
    checkout = os.path.dirname(os.path.dirname(dp.__file__))
    print(f"\nVersions: diffpriv_py from {checkout}, pandas {pd.__version__}, numpy {np.__version__}; "
          f"{'; '.join(versions.values()) or 'peers: none ran'}. Load average (1 min) while measuring: "
          f"{min(loads):.1f}–{max(loads):.1f}")  # fmt: skip


def pandas_agg(df: Any) -> Any:
    return df.groupby("city").x.agg(["count", "mean"])


def pandas_pairs(df: Any) -> Any:
    return df.groupby(["pid", "city"]).x.count()


def groups_data(n_groups: int = N_GROUPS) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Groups of 10 N(50, 20) values (10⁴ by default), rows shuffled; and the groups split for the per-group loops."""
    gen = np.random.default_rng(0)
    by = gen.permutation(np.repeat(np.arange(n_groups), GROUP_ROWS))
    x = gen.normal(50, 20, by.size)
    order = np.argsort(by, kind="stable")
    return by, x, np.split(x[order], np.arange(GROUP_ROWS, by.size, GROUP_ROWS))


def median_loop(module: Any, groups: list[np.ndarray]) -> list[float]:
    """One ε = 1 private median per group, in a Python loop (diffpriv_py or diffprivlib)."""
    if module.__name__ == "diffprivlib":
        return [module.tools.median(g, epsilon=1.0, bounds=(0, 100)) for g in groups]
    eps = module.Eps(1.0)
    return [module.stats.median(g, eps, bounds=(0, 100)) for g in groups]


def peer_child(repeats: int) -> None:
    """In the peer environment: our median loop and diffprivlib's, interleaved; prints JSON seconds per loop."""
    import warnings

    import diffprivlib

    warnings.simplefilter("ignore")  # diffprivlib's PrivacyLeakWarning is not what is timed
    groups = groups_data()[2]
    ours, theirs = median_times([lambda: median_loop(dp, groups), lambda: median_loop(diffprivlib, groups)], repeats)
    print(json.dumps({"ours": ours, "diffprivlib": theirs}))


def load_before(path: str) -> Any:
    """The ``diffpriv_py`` package of an older checkout at ``path``, imported as ``diffpriv_py_before``."""
    spec = importlib.util.spec_from_file_location(
        "diffpriv_py_before", f"{path}/diffpriv_py/__init__.py", submodule_search_locations=[f"{path}/diffpriv_py"]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["diffpriv_py_before"] = module
    spec.loader.exec_module(module)
    return module


def quantile_table(before: str | None, peer_python: str | None, repeats: int) -> None:
    by, x, groups = groups_data()
    keys = range(N_GROUPS)
    query = {"values": x, "quantiles": 0.5, "bounds": (0, 100), "keys": keys}
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("`dp.stats.groupby(..., quantiles=0.5)` (count and median per group)",
         lambda: dp.stats.groupby(by, dp.Eps(1.0), **query)),
    ]  # fmt: skip
    if before:
        old = load_before(before)
        cases.append(("same call, before (one draw per group in a Python loop)",
                      lambda: old.stats.groupby(by, old.Eps(1.0), **query)))  # fmt: skip
    loop_index = len(cases)
    cases.append(("Python loop of `dp.stats.median` per group (median only)", lambda: median_loop(dp, groups)))
    try:
        import dask.dataframe as dd
        import pandas as pd

        ddf = dd.from_pandas(pd.DataFrame({"g": by, "x": x}), npartitions=8)
        dask_query = {**query, "values": ddf["x"]}
        cases.append(("`dp.stats.groupby` on a dask DataFrame (8 partitions)",
                      lambda: dp.stats.groupby(ddf["g"], dp.Eps(1.0), **dask_query)))  # fmt: skip
        if before:
            cases.append(("same dask call, before (value column read into memory)",
                          lambda: old.stats.groupby(ddf["g"], old.Eps(1.0), **dask_query)))  # fmt: skip
    except ImportError:
        pass
    medians = median_times([fn for _, fn in cases], repeats)
    base = medians[0]
    print(
        f"{N_GROUPS:,} groups × {GROUP_ROWS} rows, ε = 1, rng=None; CPU-time medians of {repeats} interleaved rounds\n"
    )
    print("| computation | time (ms) | µs per group | × ours |")
    print("|---|---|---|---|")
    for (label, _), t in zip(cases, medians, strict=True):
        print(f"| {label} | {t * 1e3:.1f} | {t * 1e6 / N_GROUPS:.1f} | {t / base:.2f} |")
    per_group = []
    for n_groups in (1_000, 10_000, 100_000):  # no loop over groups: the time per group should not grow
        by_n, x_n, _ = groups_data(n_groups)
        kw = {**query, "values": x_n, "keys": range(n_groups)}
        t = median_times([lambda: dp.stats.groupby(by_n, dp.Eps(1.0), **kw)], repeats)[0]  # noqa: B023
        per_group.append(f"{n_groups:,} groups: {t * 1e6 / n_groups:.2f} µs")
    print("\nOur group-by, µs per group (10 rows each): " + ", ".join(per_group))
    if peer_python:
        child = subprocess.run(
            [peer_python, __file__, "--peer-child", "--repeats", str(repeats)],
            capture_output=True,
            text=True,
            check=True,
        )
        peer = json.loads(child.stdout.strip().splitlines()[-1])
        ours_loop = medians[loop_index]
        ratio = peer["diffprivlib"] / peer["ours"]  # diffprivlib's loop / our loop, same process
        print(
            f"\nPeer process: Python loop of `diffprivlib.tools.median` per group {peer['diffprivlib'] * 1e3:.1f} ms, "
            f"of `dp.stats.median` {peer['ours'] * 1e3:.1f} ms (diffprivlib's loop = {ratio:.2f}× our loop). Chained: "
            f"diffprivlib's loop "
            f"≈ {ratio * ours_loop / base:.1f}× our group-by."
        )


def workers_table(sizes: list[int], repeats: int) -> None:
    """dp.stats.groupby on a dask DataFrame held by a ``dask.distributed`` LocalCluster of 1 and then 2 worker
    processes (one thread each): wall-clock medians, the table persisted on the workers before timing (not timed),
    and the release checked bit for bit against the in-memory one for the same seed."""
    import os
    import statistics as st

    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    print(f"{os.cpu_count()} cores; count + mean per city (200 cities), privacy_unit, max_groups = max_rows = 2, "
          f"Del(1, 1e-6); wall-clock medians of {repeats}\n")  # fmt: skip
    print("| rows | partitions | 1 worker (s) | 2 workers (s) | speed-up | identical to in memory | load avg |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        df = table(n, np.random.default_rng(0))
        kw = {"values": None, "statistics": ["count", "mean"], "bounds": (0, 100), "max_groups": 2, "max_rows": 2}
        expected = dp.stats.groupby(df.city, dp.Del(1.0, 1e-6), **{**kw, "values": df.x}, privacy_unit=df.pid, rng=1)
        partitions = max(4, n // 250_000)
        times, same, load = {}, True, []
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as c:
                with Client(c):
                    ddf = dd.from_pandas(df, npartitions=partitions).persist()
                    run = functools.partial(
                        dp.stats.groupby, ddf.city, dp.Del(1.0, 1e-6), **{**kw, "values": ddf.x}, privacy_unit=ddf.pid
                    )
                    out = run(rng=1)
                    same &= out.equals(expected)
                    samples = []
                    for _ in range(repeats):
                        start = time.perf_counter()
                        run(rng=1)
                        samples.append(time.perf_counter() - start)
                        load.append(os.getloadavg()[0])
                    times[workers] = st.median(samples)
        print(f"| {n:.0e} | {partitions} | {times[1]:.2f} | {times[2]:.2f} | {times[1] / times[2]:.2f}× | "
              f"{'yes' if same else 'NO'} | {max(load):.1f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="n = 2·10⁵ and 3 rounds instead of 10⁶ and 5")
    parser.add_argument("--quantiles", action="store_true", help="the median per group table (10⁴ groups × 10)")
    parser.add_argument("--before", help="directory holding an older diffpriv_py package to compare with")
    parser.add_argument("--peer-python", help="python with diffprivlib (and this package on PYTHONPATH)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scale", action="store_true", help="pandas vs ours at 10⁶/10⁷ rows, 10²/10⁴ groups")
    parser.add_argument("--scale-child", nargs=2, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--selection", action="store_true", help="released groups: threshold vs set union")
    parser.add_argument("--seeds", type=int, default=1, help="releases per cell of --selection")
    parser.add_argument("--peers", metavar="PEER_PYTHON", help="against OpenDP and PipelineDP in PEER_PYTHON")
    parser.add_argument("--peer-timeout", type=float, default=300, help="seconds per peer child process")
    parser.add_argument("--pipelinedp-max-n", type=int, default=1_000_000, help="largest table given to PipelineDP")
    parser.add_argument("--peer-max-n", type=int, default=10_000_000, help="largest table of --peers")
    parser.add_argument("--workers", type=int, nargs="*", metavar="ROWS", help="dask LocalCluster 1 vs 2 workers")
    args = parser.parse_args()
    if args.workers is not None:
        workers_table(args.workers or [1_000_000, 10_000_000], min(args.repeats, 3))
        return
    if args.peers:
        peers_table(args.peers, args.repeats, args.peer_timeout, args.pipelinedp_max_n, args.peer_max_n, args.quick)
        return
    if args.selection:
        selection_table(args.seeds)
        return
    if args.scale_child:
        scale_child(*args.scale_child, args.repeats)
        return
    if args.scale:
        scale_table()
        return
    if args.peer_child:
        peer_child(args.repeats)
        return
    if args.quantiles:
        quantile_table(args.before, args.peer_python, args.repeats)
        return
    import pandas as pd  # noqa: F401  (needed by the accessor below)

    import diffpriv_py.pandas  # noqa: F401  (registers DataFrame.private)

    n, repeats = (200_000, 3) if args.quick else (1_000_000, 5)
    df = table(n, np.random.default_rng(0))
    params = dp.Del(1.0, 1e-6)
    query = {"column": "x", "statistics": ["count", "mean"], "bounds": (0, 100)}
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("pandas `groupby('city').x.agg(['count', 'mean'])` (not private)", lambda: pandas_agg(df)),
        ("pandas `groupby(['pid', 'city'])` (the grouping bounding needs; not private)", lambda: pandas_pairs(df)),
        ("`df.private.groupby` (each row a person)", lambda: df.private.groupby("city", params, **query)),
        (
            "`df.private.groupby` with `privacy_unit='pid'`, `max_groups=2`, `max_rows=2`",
            lambda: df.private.groupby("city", params, privacy_unit="pid", max_groups=2, max_rows=2, **query),
        ),
    ]
    try:
        import dask.dataframe as dd

        ddf = dd.from_pandas(df, npartitions=8)
        cases.append(
            (
                "`dp.stats.groupby` on a dask DataFrame (8 partitions), same query with `privacy_unit`",
                lambda: dp.stats.groupby(
                    ddf["city"], params, values=ddf["x"], statistics=["count", "mean"], bounds=(0, 100),
                    privacy_unit=ddf["pid"], max_groups=2, max_rows=2,
                ),
            )
        )  # fmt: skip
    except ImportError:
        pass
    medians = median_times([fn for _, fn in cases], repeats)
    base = medians[0]
    print(f"n = {df.shape[0]:,} rows, 200 groups; CPU-time medians of {repeats} interleaved rounds\n")
    print("| computation | time (s) | × pandas group-by |")
    print("|---|---|---|")
    for (label, _), t in zip(cases, medians, strict=True):
        print(f"| {label} | {t:.3f} | {t / base:.1f} |")


if __name__ == "__main__":
    main()
