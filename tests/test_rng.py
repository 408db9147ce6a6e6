"""The rng= normalisation: one secure generator per thread and process, seeds identical to numpy's default_rng."""

import os
import threading

import numpy as np
import pytest

from diffpriv_py import _rng
from diffpriv_py._rng import as_generator, secure_generator


def test_int_seeds_give_exactly_the_stream_and_children_of_default_rng():
    """as_generator(seed) draws what numpy.random.default_rng(seed) draws, and spawns the same children."""
    for seed in [0, 5, 2**70, np.uint32(9)]:
        ours, numpys = as_generator(seed), np.random.default_rng(int(seed))
        assert np.array_equal(ours.random(8), numpys.random(8))
        if not hasattr(numpys, "spawn"):  # Generator.spawn is numpy >= 1.25
            continue
        for _ in range(2):  # repeated spawns advance the children as numpy's do
            for a, b in zip(ours.spawn(2), numpys.spawn(2), strict=True):
                assert np.array_equal(a.random(3), b.random(3))
    bit_generator = as_generator(5).bit_generator  # seed_seq is public from numpy 1.25, _seed_seq before
    assert getattr(bit_generator, "seed_seq", getattr(bit_generator, "_seed_seq", None)).entropy == 5


def test_rng_none_reuses_one_aes_generator_within_a_thread_but_rekeys_after_its_quota(monkeypatch):
    """Consecutive rng=None calls share this thread's AES-CTR stream until the rekey quota, then get a new key."""
    monkeypatch.setattr(_rng, "_REKEY_AFTER", 3)
    _rng._forget_secure_generator()
    first = [secure_generator() for _ in range(3)]
    assert first[0] is first[1] is first[2]
    fresh = secure_generator()
    assert fresh is not first[0]
    assert type(fresh.bit_generator).__name__ == "AESCounter"


def test_each_thread_gets_its_own_secure_generator():
    """numpy Generators are not thread-safe, so another thread never receives this thread's generator."""
    mine = secure_generator()
    seen = []
    worker = threading.Thread(target=lambda: seen.append(secure_generator()))
    worker.start()
    worker.join()
    assert seen[0] is not mine
    assert not np.array_equal(seen[0].integers(0, 2**62, size=4), mine.integers(0, 2**62, size=4))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_never_replays_the_parents_secure_stream():
    """After fork the child draws from a newly keyed generator, not a copy of the parent's key and counter."""
    secure_generator()  # make sure the parent has a generator that the child would inherit
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.write(write, secure_generator().integers(0, 2**62, size=4).tobytes())
        finally:
            os._exit(0)
    os.close(write)
    child = np.frombuffer(os.read(read, 64), dtype=np.int64)
    os.close(read)
    os.waitpid(pid, 0)
    parent = secure_generator().integers(0, 2**62, size=4)
    assert child.size == 4
    assert not np.array_equal(child, parent)


def test_a_stale_pid_also_forces_a_new_key():
    """A fork that bypassed the at-fork hook is caught by the pid check."""
    generator = secure_generator()
    _rng._secure.pid = -2
    assert secure_generator() is not generator
