"""Count + mean per group with per-person bounds in OpenDP (polars) or PipelineDP (local backend); run in a peer env.

Run: PEER_PYTHON benchmarks/peer_groupby.py LIBRARY N N_GROUPS MAX_GROUPS MAX_ROWS EPSILON DELTA [--repeats R]

``LIBRARY`` is ``opendp`` or ``pipelinedp``; ``PEER_PYTHON`` is a Python with ``opendp[polars]`` 0.16 (polars 1.36.1,
pyarrow) and/or ``pipeline-dp`` 0.3.1 installed (``benchmarks/setup_peers.sh``); diffpriv_py is not imported. Prints
one line of JSON: the library's version, CPU times (``time.process_time``, all threads: polars uses both cores) and
wall times of ``R`` releases, the number of groups each release kept, and ``error`` (the exception's text) if the
library is missing or fails, so that the caller reports it instead of crashing.

The table is ``bench_groupby.py``'s layout drawn from the same seed (``numpy.random.default_rng(0)``: people owning
1-6 rows, each row in a uniformly random group, N(50, 20) values) with **integer** group labels 0..N_GROUPS-1
(``bench_groupby.table`` draws the same integers and maps them to strings). Building the peer's input (a polars
DataFrame; PipelineDP's list of Python tuples) is not timed; planning and the release are.

Queries, both under the **add/remove-one-person** relation (a person's rows all added or all removed), at (ε, δ)
for the whole query:

* ``opendp``: ``Context.compositor(privacy_unit=dp.unit_of(contributions=1, identifier="pid"),
  privacy_loss=dp.loss_of(epsilon=ε, delta=δ), margins=[Margin(by=["city"], max_length=N, max_groups=N_GROUPS)])``,
  query ``.truncate_per_group(MAX_ROWS, by=["city"]).truncate_num_groups(MAX_GROUPS, by=["city"], keep="first")
  .group_by("city").agg(dp.len(), pl.col("x").fill_null(50).dp.mean((0, 100)))``: Laplace noise on the count, the
  sum and the count inside the mean (one noise scale found by OpenDP's binary search), keys selected by OpenDP's
  threshold on the noisy ``dp.len()``. ``max_groups`` (a public bound on the number of distinct keys) is required
  by OpenDP for the float sum; ``max_length`` is OpenDP's public bound on a group's size (set to N). OpenDP's
  ``keep="sample"`` for ``truncate_num_groups`` fails at collect in 0.16.0 ("multiple fields with name 'city'
  found": its ranking struct holds the key struct and its hash under the same name), and ``keep="first"`` keeps
  each person's lowest labels, which piles people into the low labels. So, before OpenDP, each person's groups
  are cut to MAX_GROUPS chosen pseudo-randomly per person in polars (rank of ``hash(pid, city)`` within the
  person, a fixed seed): a per-person transformation (a person's kept rows depend on that person's rows only), so
  OpenDP's add/remove guarantee on the cut table holds for the original one; OpenDP's own ``truncate_num_groups``
  then verifies the bound (a no-op on the cut table). The cut is timed with the rest.
* ``pipelinedp``: ``DPEngine(NaiveBudgetAccountant(ε, δ), LocalBackend()).aggregate`` with ``AggregateParams(
  noise_kind=LAPLACE, metrics=[COUNT, MEAN], max_partitions_contributed=MAX_GROUPS,
  max_contributions_per_partition=MAX_ROWS, min_value=0, max_value=100)``, PipelineDP's default partition selection
  (truncated geometric).
"""

from __future__ import annotations

import argparse
import json
import time
import traceback
from typing import Any

import numpy as np


def table(n: int, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(person, group, value) columns of ``bench_groupby.table(n, default_rng(0), n_groups)``, integer groups."""
    gen = np.random.default_rng(0)
    rows = gen.integers(1, 7, n // 3)
    pid = np.repeat(np.arange(rows.size), rows)[:n]
    city = gen.integers(0, n_groups, pid.size)
    return pid, city, gen.normal(50, 20, pid.size)


def opendp_release(columns: tuple[np.ndarray, ...], n_groups: int, g: int, m: int, eps: float, delta: float) -> Any:
    """Version, a function making one OpenDP release (returns the number of released groups), a dict of details
    (the planning time of each release; after ``summarize()``, OpenDP's noise scales and threshold) and
    ``summarize``."""
    import warnings

    import opendp.prelude as dp  # type: ignore[import-not-found]
    import polars as pl  # type: ignore[import-not-found]

    warnings.simplefilter("ignore", FutureWarning)  # dp.len()'s "signed" default is announced to change
    dp.enable_features("contrib")
    pid, city, x = columns
    frame = pl.DataFrame({"pid": pid, "city": city, "x": x})

    details: dict[str, Any] = {"plan": []}
    queries: list[Any] = []

    def release() -> int:
        start = time.process_time()
        cut = frame.lazy().filter(pl.struct("pid", "city").hash(20261128).rank("dense").over("pid") <= g)
        context = dp.Context.compositor(
            data=cut,
            privacy_unit=dp.unit_of(contributions=1, identifier="pid"),
            privacy_loss=dp.loss_of(epsilon=eps, delta=delta),
            split_evenly_over=1,
            margins=[dp.polars.Margin(by=["city"], max_length=pid.size, max_groups=n_groups)],
        )
        query = (
            context.query()
            .truncate_per_group(m, by=["city"])
            .truncate_num_groups(g, by=["city"], keep="first")
            .group_by("city")
            .agg(dp.len(), pl.col("x").fill_null(50.0).dp.mean((0.0, 100.0)))
        )
        plan = query.release()  # OpenDP's plan: the noise scale and threshold by binary search; no data read
        details["plan"].append(time.process_time() - start)
        queries[:] = [query]
        return int(plan.collect().height)

    def summarize() -> None:  # OpenDP's noise scales and threshold (untimed, after the releases)
        rows = queries[0].summarize(alpha=0.05).to_dicts()
        details["summary"] = [{k: row[k] for k in ("column", "aggregate", "scale", "threshold")} for row in rows]

    from importlib.metadata import version

    return f"opendp {version('opendp')}, polars {pl.__version__}", release, details, summarize


def pipelinedp_release(columns: tuple[np.ndarray, ...], n_groups: int, g: int, m: int, eps: float, delta: float) -> Any:
    """Version, a function making one PipelineDP local-backend release (returns the number of released groups), no
    details and no summary."""
    from importlib.metadata import version

    import pipeline_dp  # type: ignore[import-not-found]

    data = list(zip(*(c.tolist() for c in columns), strict=True))

    def release() -> int:
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=eps, total_delta=delta)
        engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.LAPLACE,
            metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.MEAN],
            max_partitions_contributed=g,
            max_contributions_per_partition=m,
            min_value=0.0,
            max_value=100.0,
        )
        extractors = pipeline_dp.DataExtractors(
            partition_extractor=lambda r: r[1], privacy_id_extractor=lambda r: r[0], value_extractor=lambda r: r[2]
        )
        result = engine.aggregate(data, params, extractors)
        accountant.compute_budgets()
        return len(list(result))

    return f"pipeline-dp {version('pipeline-dp')}", release, {}, None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("library", choices=("opendp", "pipelinedp"))
    parser.add_argument("n", type=int)
    parser.add_argument("n_groups", type=int)
    parser.add_argument("max_groups", type=int)
    parser.add_argument("max_rows", type=int)
    parser.add_argument("epsilon", type=float)
    parser.add_argument("delta", type=float)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    out: dict[str, Any] = {"library": args.library, "times": [], "wall": [], "released": []}
    try:
        columns = table(args.n, args.n_groups)
        make = opendp_release if args.library == "opendp" else pipelinedp_release
        out["version"], release, details, summarize = make(
            columns, args.n_groups, args.max_groups, args.max_rows, args.epsilon, args.delta
        )
        for _ in range(args.repeats):
            start, wall = time.process_time(), time.perf_counter()
            out["released"].append(release())
            out["times"].append(time.process_time() - start)
            out["wall"].append(time.perf_counter() - wall)
        if summarize is not None:
            summarize()
        out.update(details)
    except Exception as exc:  # a peer that is missing or fails is reported, not fatal
        out["error"] = f"{type(exc).__name__}: {exc}".strip()[:500]
        out["traceback"] = traceback.format_exc()[-2000:]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
