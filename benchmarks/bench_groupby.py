"""Private group-by: dp.stats.groupby against the non-private pandas group-by it replaces, in memory and on dask.

Run: python benchmarks/bench_groupby.py [--quick]

Prints a Markdown table for benchmarks/README.md. Data: n rows of (person id, one of 200 city labels, a N(50, 20)
value), people owning 1-6 rows; the query is count and mean per city with bounds (0, 100), ε = 1, δ = 10⁻⁶ and
private partition selection; default (secure) randomness. All times are CPU-time medians of functions interleaved
round by round in this one process (the machine is shared), so the ratios are what to read.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import diffpriv_py as dp
import diffpriv_py.pandas  # registers DataFrame.private


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


def table(n: int, rng: np.random.Generator) -> pd.DataFrame:
    rows = rng.integers(1, 7, n // 3)
    pid = np.repeat(np.arange(rows.size), rows)[:n]
    city = rng.choice(np.array([f"c{i:03d}" for i in range(200)]), pid.size)
    return pd.DataFrame({"pid": pid, "city": city, "x": rng.normal(50, 20, pid.size)})


def pandas_agg(df: pd.DataFrame) -> Any:
    return df.groupby("city").x.agg(["count", "mean"])


def pandas_pairs(df: pd.DataFrame) -> Any:
    return df.groupby(["pid", "city"]).x.count()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="n = 2·10⁵ and 3 rounds instead of 10⁶ and 5")
    args = parser.parse_args()
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
