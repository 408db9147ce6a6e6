"""Released groups of PipelineDP's local backend on the table of ``bench_groupby.py --selection`` (run in a peer env).

Run: PEER_PYTHON benchmarks/peer_groupby_selection.py N N_GROUPS MAX_GROUPS EPSILON DELTA
(a Python with ``pipeline-dp`` installed; this library is not imported). Prints JSON: released groups and CPU time.

The table is the benchmark's layout (people with 1-6 rows, each row in a uniformly random group, N(50, 20) values)
drawn from the same seed, with integer group labels; the query is COUNT and MEAN with Laplace noise,
``max_partitions_contributed=MAX_GROUPS``, ``max_contributions_per_partition=2``, bounds (0, 100) and PipelineDP's
default partition selection. PipelineDP's (ε, δ) is under add/remove-one-privacy-unit; add/remove (ε/2, δ/(1 + e^{ε/2}))
implies replace-one (ε, δ), the parameters at which to compare with this library's replace-one releases.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pipeline_dp  # type: ignore[import-not-found]


def main() -> None:
    n, n_groups, g = (int(a) for a in sys.argv[1:4])
    eps, delta = float(sys.argv[4]), float(sys.argv[5])
    gen = np.random.default_rng(0)
    rows = gen.integers(1, 7, n // 3)
    pid = np.repeat(np.arange(rows.size), rows)[:n]
    city = gen.integers(0, n_groups, pid.size)
    x = gen.normal(50, 20, pid.size)
    data = list(zip(pid.tolist(), city.tolist(), x.tolist(), strict=True))
    start = time.process_time()
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=eps, total_delta=delta)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.MEAN],
        max_partitions_contributed=g,
        max_contributions_per_partition=2,
        min_value=0.0,
        max_value=100.0,
    )
    extractors = pipeline_dp.DataExtractors(
        partition_extractor=lambda r: r[1], privacy_id_extractor=lambda r: r[0], value_extractor=lambda r: r[2]
    )
    result = engine.aggregate(data, params, extractors)
    accountant.compute_budgets()
    released = len(list(result))
    print(json.dumps({"released": released, "time": time.process_time() - start}))


if __name__ == "__main__":
    main()
