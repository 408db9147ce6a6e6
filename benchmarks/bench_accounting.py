"""Accounting and DP-SGD benchmarks: tightness and speed of composition against Google's dp-accounting.

Run ``python benchmarks/bench_accounting.py [--peer-python /work/bench-venv/bin/python] [--repeats 7]``.

diffpriv_py is timed in this interpreter. dp-accounting (and diffprivlib's ``BudgetAccountant``) are timed in the
peer environment built by ``setup_peers.sh``, in a subprocess, because they are never dependencies of diffpriv_py.
Every time is the median CPU time (``time.process_time``; the machine is shared, so wall time mostly measures the
wait for a core) of ``--repeats`` runs with BLAS pinned to one thread; training times are wall times. Prints
markdown tables for ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

LAPLACE = [(0.1, 10), (0.1, 100), (0.1, 1000), (0.01, 1000), (1.0, 10), (1.0, 100), (1.0, 1000)]
GAUSSIAN = [(1.0, 1), (5.0, 10), (2.0, 100), (20.0, 1000), (10.0, 1000)]
DELTAS = [1e-5, 1e-6]

PEER = r"""
import json, math, statistics, sys, time, warnings
warnings.filterwarnings("ignore")
import dp_accounting as dpa
from dp_accounting.pld import pld_privacy_accountant as pa
from dp_accounting.rdp import rdp_privacy_accountant as ra
from diffprivlib.accountant import BudgetAccountant
cfg = json.loads(sys.argv[1]); reps = cfg["repeats"]; out = {}
NR = dpa.NeighboringRelation
def timed(f):
    ts = []
    for _ in range(reps):
        t = time.process_time(); v = f(); ts.append(time.process_time() - t)
    return v, statistics.median(ts) * 1000
def pld(event, k, delta, rel=NR.ADD_OR_REMOVE_ONE):
    acc = pa.PLDAccountant(rel); acc.compose(event, k); return acc.get_epsilon(delta)
def rdp(event, k, delta):
    acc = ra.RdpAccountant(); acc.compose(event, k); return acc.get_epsilon(delta)
def dpl(eps, k, delta):
    acc = BudgetAccountant(slack=delta)
    for _ in range(k): acc.spend(eps, 0)
    return acc.total()[0]
for e0, k in cfg["laplace"]:
    for d in cfg["deltas"]:
        ev = dpa.LaplaceDpEvent(1 / e0)
        v, t = timed(lambda: pld(ev, k, d)); w, u = timed(lambda: rdp(ev, k, d)); z, s = timed(lambda: dpl(e0, k, d))
        out[f"lap {e0} {k} {d}"] = dict(pld=v, pld_ms=t, rdp=w, rdp_ms=u, dpl=z, dpl_ms=s)
for s, k in cfg["gaussian"]:
    for d in cfg["deltas"]:
        ev = dpa.GaussianDpEvent(s)
        v, t = timed(lambda: pld(ev, k, d)); w, u = timed(lambda: rdp(ev, k, d))
        out[f"gauss {s} {k} {d}"] = dict(pld=v, pld_ms=t, rdp=w, rdp_ms=u)
for q, steps, s, rel in cfg["sgd"]:
    ev = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s))
    r = NR.REPLACE_ONE if rel == "replace_one" else NR.ADD_OR_REMOVE_ONE
    v, t = timed(lambda: pld(ev, steps, 1e-5, r))
    out[f"sgd {q} {steps} {s} {rel}"] = dict(pld=v, pld_ms=t)
print(json.dumps(out))
"""

SGD = [
    (64 / 1438, 224, 1.0, "replace_one"),
    (64 / 1438, 224, 1.0, "add_remove"),
    (256 / 60000, 14062, 1.1, "add_remove"),
]


def median_ms(f, repeats: int) -> tuple[float, float]:
    """(value, median CPU milliseconds): CPU time, because the shared machine's wall clock measures the queue."""
    f()  # warm caches and imports
    times = []
    value = math.nan
    for _ in range(repeats):
        start = time.process_time()
        value = f()
        times.append(time.process_time() - start)
    return value, statistics.median(times) * 1000


def peer_numbers(python: str, repeats: int) -> dict:
    if not python or not Path(python).exists():
        return {}
    cfg = json.dumps({"laplace": LAPLACE, "gaussian": GAUSSIAN, "deltas": DELTAS, "sgd": SGD, "repeats": repeats})
    run = subprocess.run([python, "-c", PEER, cfg], capture_output=True, text=True, check=False)
    if run.returncode:
        print("peer run failed:", run.stderr[-2000:])
        return {}
    return json.loads(run.stdout.strip().splitlines()[-1])


def composition_tables(repeats: int, peer: dict) -> None:
    from diffpriv_py.accounting import GaussianEvent, LaplaceEvent, compose, kov_composition
    from diffpriv_py.accounting.rdp import epsilon_from_rdp, rdp_laplace

    orders = np.concatenate([np.linspace(1.1, 1.9, 9), np.arange(2, 257), [320, 512, 1024, 4096]]).astype(float)
    print("\n### k-fold Laplace (ε₀ per release): total ε\n")
    print(
        "| ε₀, k | δ | diffpriv_py ε | ms | dp-accounting PLD ε | ms | ratio | RDP ε (ratio) "
        "| KOV/diffprivlib ε (ratio) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for e0, k in LAPLACE:
        for d in DELTAS:
            eps, ms = median_ms(
                lambda e0=e0, k=k, d=d: compose([LaplaceEvent(epsilon=e0, count=k)]).epsilon(d), repeats
            )
            rdp = epsilon_from_rdp(orders, k * rdp_laplace(e0, orders), d)[0]
            kov = kov_composition([e0] * k, None, d)[0]
            p = peer.get(f"lap {e0} {k} {d}", {})
            ref = p.get("pld", math.nan)
            print(
                f"| {e0:g}, {k} | {d:g} | {eps:.4f} | {ms:.1f} | {ref:.4f} | {p.get('pld_ms', math.nan):.0f} | "
                f"{eps / ref:.4f} | {rdp:.4f} ({rdp / ref:.3f}) | {kov:.4f} ({kov / ref:.3f}) |"
            )
    print("\n### k-fold Gaussian (noise multiplier σ): total ε\n")
    print("| σ, k | δ | diffpriv_py ε (exact μ-GDP) | ms | via PLD ε | ms | dp-accounting PLD ε | ms | RDP ε |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s, k in GAUSSIAN:
        for d in DELTAS:
            eps, ms = median_ms(lambda s=s, k=k, d=d: compose([GaussianEvent(mu=1 / s, count=k)]).epsilon(d), repeats)
            comp = compose([GaussianEvent(mu=1 / s, count=k)])
            pld, pms = median_ms(lambda comp=comp, d=d: _fresh_pld(comp, d), repeats)
            p = peer.get(f"gauss {s} {k} {d}", {})
            print(
                f"| {s:g}, {k} | {d:g} | {eps:.4f} | {ms:.2f} | {pld:.4f} | {pms:.1f} | {p.get('pld', math.nan):.4f} | "
                f"{p.get('pld_ms', math.nan):.0f} | {p.get('rdp', math.nan):.4f} |"
            )


def _fresh_pld(comp, delta):
    from diffpriv_py.accounting._pld import ComposedPLD

    return ComposedPLD(comp.events).epsilon(delta)


def sgd_tables(repeats: int, peer: dict) -> None:
    from diffpriv_py.accounting import SubsampledGaussianEvent, dpsgd_epsilon
    from diffpriv_py.accounting._pld import ComposedPLD

    print("\n### DP-SGD accounting (Poisson-sampled Gaussian, δ = 1e-5)\n")
    print("| q, steps, σ, relation | diffpriv_py PLD ε | ms | dp-accounting PLD ε | ms |")
    print("|---|---|---|---|---|")
    for q, steps, s, rel in SGD:
        ev = SubsampledGaussianEvent(noise_multiplier=s, sampling_rate=q, relation=rel, count=steps)
        eps, ms = median_ms(lambda ev=ev: ComposedPLD([ev]).epsilon(1e-5), repeats)
        p = peer.get(f"sgd {q} {steps} {s} {rel}", {})
        print(
            f"| {q:.4g}, {steps}, {s:g}, {rel} | {eps:.4f} | {ms:.0f} | {p.get('pld', math.nan):.4f} | "
            f"{p.get('pld_ms', math.nan):.0f} |"
        )
    q, steps = 64 / 1438, 225
    sigma, ms = median_ms(lambda: _calibrate_fresh(q, steps), 3)
    check = dpsgd_epsilon(sigma, q, steps, 1e-5)
    print(
        f"\nCalibrating σ for (ε=8, δ=1e-5), q={q:.4f}, {steps} steps, replace-one PLD: σ={sigma:.4f} (ε={check:.4f}) "
        f"in {ms:.0f} ms (median of 3)."
    )


def _calibrate_fresh(q, steps):
    from diffpriv_py.accounting import _calibration

    _calibration._calibrate.cache_clear()
    _calibration._epsilon.cache_clear()
    return _calibration.noise_multiplier_for(8.0, 1e-5, q, steps)


def dpsgd_training(repeats: int) -> None:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    import diffpriv_py as dp
    from diffpriv_py.estimators import DPSGDClassifier

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.2, random_state=0, stratify=y)
    print("\n### DP-SGD training: 64-32-10 MLP on digits (1437 training rows), (ε=8, δ=1e-5) replace-one\n")
    print("| epochs | steps | σ | train s (median) | test accuracy |")
    print("|---|---|---|---|---|")
    for epochs in (10, 20):
        mech = DPSGDClassifier(
            hidden_layer_sizes=(64, 32), sampling_rate=64 / len(X_train), epochs=epochs, classes=list(range(10))
        )
        mech.noise_multiplier_for(dp.Del(8.0, 1e-5))  # calibration timed separately above
        times, accs = [], []
        for seed in range(repeats):
            start = time.perf_counter()
            model = mech.release_response(dp.Del(8.0, 1e-5), (X_train, y_train), rng=seed).response
            times.append(time.perf_counter() - start)
            accs.append(model.score(X_test, y_test))
        print(
            f"| {epochs} | {mech.steps} | {model.noise_multiplier:.3f} | {statistics.median(times):.3f} | "
            f"{np.mean(accs):.3f} ± {np.std(accs):.3f} |"
        )


def _mixed_charges(n: int) -> float:
    """Seconds (CPU) for n charges cycling Laplace and Gaussian releases, pure-ε and (ε, δ) claims (no data)."""
    import diffpriv_py as dp

    acc = dp.Accountant(budget=dp.Del(1e6, 1e-5))
    lap = dp.Laplace(target=np.mean, sensitivity=1.0)
    gauss = dp.Gaussian(target=np.mean, sensitivity=1.0)
    kinds = [
        dict(guarantee=dp.Eps(0.1), mechanism=lap, privacy_params=dp.Eps(0.1)),
        dict(guarantee=dp.Del(0.5, 1e-9), mechanism=gauss, privacy_params=dp.Del(0.5, 1e-9)),
        dict(guarantee=dp.Eps(0.05)),
        dict(guarantee=dp.Del(0.2, 1e-10)),
    ]
    start = time.process_time()
    for i in range(n):
        acc.spend(**kinds[i % 4])
    return time.process_time() - start


def _diffprivlib_charges(n: int) -> float:
    from diffprivlib.accountant import BudgetAccountant

    acc = BudgetAccountant(epsilon=1e6, delta=1e-3)
    start = time.process_time()
    for i in range(n):
        acc.spend(0.1, 0.0) if i % 2 else acc.spend(0.2, 1e-10)
    return time.process_time() - start


def spend_throughput(repeats: int) -> None:
    """Charges per second of one Accountant: amortised O(1) per spend, against diffprivlib's BudgetAccountant."""
    print("\n### Accountant.spend: 10^4 mixed charges (Laplace, Gaussian, Eps and Del claims)\n")
    print("| charges | diffpriv_py CPU s (median) | per charge µs | diffprivlib CPU s (median) | ratio |")
    print("|---|---|---|---|---|")
    for n in (1000, 10000):
        ours, theirs = [], []
        for _ in range(repeats):  # interleaved, so both see the same load on the shared machine
            ours.append(_mixed_charges(n))
            try:
                theirs.append(_diffprivlib_charges(n) if n <= 1000 else math.nan)
            except ImportError:
                theirs.append(math.nan)
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"| {n} | {a:.3f} | {a / n * 1e6:.1f} | {b:.3f} | {b / a:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peer-python", default="/work/bench-venv/bin/python")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--spend-only", action="store_true", help="only the Accountant.spend throughput table")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        spend_throughput(args.repeats)
        if args.spend_only:
            return
        peer = peer_numbers(args.peer_python, args.repeats)
        composition_tables(args.repeats, peer)
        sgd_tables(args.repeats, peer)
        dpsgd_training(min(args.repeats, 5))


if __name__ == "__main__":
    main()
