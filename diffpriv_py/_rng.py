"""The single place where an ``rng=`` argument becomes a :class:`numpy.random.Generator` (SPEC 7)."""

from __future__ import annotations

import functools
import numbers
import os
import secrets
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

RNGLike = None | int | np.random.Generator | np.random.SeedSequence
"""What every random entry point accepts as ``rng``."""

_REKEY_AFTER = 4096
"""Uses of one secure generator before it is replaced by a freshly keyed one (bounds what a leaked key reveals)."""


class _SecureState(threading.local):
    """This thread's secure generator, the process it was keyed in, and how often it has been handed out."""

    generator: np.random.Generator | None = None
    pid: int = -1
    uses: int = 0


_secure = _SecureState()


def _forget_secure_generator() -> None:
    # In a forked child the parent's generator (key and counter) was copied: drop it so that parent and child never
    # draw the same stream. Only the forking thread survives a fork, so resetting this thread's slot is enough; the
    # pid check in secure_generator covers forks that bypass the hook.
    _secure.generator = None
    _secure.pid = -1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_secure_generator)


def _new_secure_generator() -> np.random.Generator:
    from randomgen import AESCounter  # imported on first use: it costs about 100 ms, and seeded runs never need it

    _RAW64.add(AESCounter)
    # randomgen's stubs derive its bit generators from its own BitGenerator stub, not numpy's; at run time
    # AESCounter is a numpy.random.BitGenerator.
    return np.random.Generator(AESCounter(secrets.randbits(256)))  # pyright: ignore[reportArgumentType]


_RAW64: set[type] = {np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64}
"""Bit generators whose raw output is one uniform 64-bit word, from which numpy builds both its doubles,
``random()`` = (w >> 11)·2⁻⁵³, and its full-range integers, ``integers(0, 2**64, dtype=uint64)`` = w (randomgen's
AESCounter joins once the secure generator is first built). Not MT19937: its raw output is a 32-bit word."""


def random_words(rng: np.random.Generator, size: int) -> npt.NDArray[np.uint64]:
    """``size`` independent uniform 64-bit words: ``rng.integers(0, 2**64, size, dtype=uint64)``.

    For the bit generators in ``_RAW64`` that is the raw output itself, read without the bounded-integer machinery;
    any other (e.g. MT19937, whose ``random_raw`` gives 32-bit words) goes through ``integers``. The words are the
    same either way, so a seed gives the same stream whichever path is taken.
    """
    bit_generator = rng.bit_generator
    if type(bit_generator) in _RAW64:
        words: npt.NDArray[np.uint64] = bit_generator.random_raw(size)
        return words
    return rng.integers(0, 2**64, size=size, dtype=np.uint64)


def word_source(rng: np.random.Generator) -> Callable[[], int]:
    """A function drawing one uniform 64-bit word at a time, as a Python int: :func:`random_words` one by one."""
    bit_generator = rng.bit_generator
    if type(bit_generator) in _RAW64:
        raw: Callable[[], int] = bit_generator.random_raw
        return raw
    integers = rng.integers
    return lambda: int(integers(0, 2**64, dtype=np.uint64))


def double_source(rng: np.random.Generator) -> Callable[[], int]:
    """A function drawing 64-bit words whose top 53 bits are the integers 2⁵³·U of successive ``rng.random()`` draws.

    A scalar sampler that reads its uniforms from these words gets, draw for draw, the very uniforms ``random()``
    would give (same stream, same values; it may interleave the two). For the bit generators in ``_RAW64`` this is
    the raw output, which costs about half as much as ``random()`` (no dtype handling); for others (whose doubles
    are built differently, e.g. MT19937 from two 32-bit words) it is made from ``random()`` itself.
    """
    bit_generator = rng.bit_generator
    if type(bit_generator) in _RAW64:
        raw: Callable[[], int] = bit_generator.random_raw
        return raw
    random = rng.random
    return lambda: int(random() * 2.0**53) << 11


def secure_generator() -> np.random.Generator:
    """Return this thread's Generator on AES-128 in counter mode, keyed from the operating system's entropy.

    Notes
    -----
    numpy's default PCG64 is not cryptographic: an adversary who recovers its state can subtract the noise.
    AES-CTR (``randomgen.AESCounter``, AES-NI accelerated) is a cryptographically strong stream that runs at
    numpy's own throughput, so real releases lose no speed.

    Keying a generator costs about 50 µs, more than a whole scalar release, so one keyed generator serves many
    releases. Successive blocks of one AES-CTR stream under a secret 256-bit key are computationally
    indistinguishable from independent uniform bits (AES is a pseudorandom permutation and the counter never
    repeats within a stream), so consecutive releases drawn from one stream are as independent as releases drawn
    from fresh keys. The generator is

    * per thread (a ``threading.local``): numpy Generators are not safe to share between threads;
    * per process: a forked child drops the inherited generator (``os.register_at_fork``, and a pid check for forks
      that bypass the hook), so parent and child never replay the same stream;
    * rekeyed after 4096 uses, so a key read from the process's memory reveals the noise of at most the last 4096
      releases of that thread.
    """
    state = _secure
    pid = os.getpid()
    if state.generator is None or state.pid != pid or state.uses >= _REKEY_AFTER:
        state.generator, state.pid, state.uses = _new_secure_generator(), pid, 0
    state.uses += 1
    return state.generator


class _SeededState(np.random.bit_generator.ISpawnableSeedSequence):
    """The seed sequence of an int seed, with its PCG64 initial state computed once per seed.

    ``numpy.random.default_rng(seed)`` hashes the seed through a SeedSequence on every call (about 7 µs, most of a
    scalar release). The hash depends only on the seed, so it is cached; the Generator built from it is the very one
    ``default_rng(seed)`` gives (same state, same stream). ``spawn`` uses a fresh SeedSequence per Generator, so
    children are also those of ``default_rng(seed)``.
    """

    __slots__ = ("_seed", "_sequence")

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._sequence: np.random.SeedSequence | None = None

    # dtype is Any: numpy's stub types it with a private alias (uint32 or uint64 dtype-likes).
    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> npt.NDArray[np.uint32 | np.uint64]:
        if n_words == 4 and (dtype is np.uint64 or np.dtype(dtype) == np.uint64):  # PCG64 passes np.uint64 itself
            return _pcg64_state(self._seed)
        return self.sequence.generate_state(n_words, dtype)

    @property
    def sequence(self) -> np.random.SeedSequence:
        if self._sequence is None:
            self._sequence = np.random.SeedSequence(self._seed)
        return self._sequence

    @property
    def entropy(self) -> int:
        return self._seed

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:
        return self.sequence.spawn(n_children)


@functools.lru_cache(maxsize=256)
def _pcg64_state(seed: int) -> np.ndarray:
    state = np.random.SeedSequence(seed).generate_state(4, np.uint64)
    state.flags.writeable = False
    return state


_Generator, _PCG64 = np.random.Generator, np.random.PCG64  # module attributes read once (µs count in releases)


def _seeded_generator(seed: int) -> np.random.Generator:
    return _Generator(_PCG64(_SeededState(seed)))  # type: ignore[arg-type]


def as_generator(rng: RNGLike) -> np.random.Generator:
    """Normalise an ``rng`` argument once.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` gives unpredictable, cryptographically strong randomness fit for real releases. An int or
        ``SeedSequence`` gives reproducible PCG64 randomness for tests and research; never use a seed for a
        real release, since whoever knows the seed can remove the noise. A Generator is used as is.

    Returns
    -------
    numpy.random.Generator
    """
    if rng is None:
        return secure_generator()
    if type(rng) is _Generator:
        return rng
    if type(rng) is int and rng >= 0:  # the common seeded case, checked without the slower ABC test below
        return _seeded_generator(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"The 'rng' seed must be a non-negative integer. Got {rng}.")
        return _seeded_generator(int(rng))
    raise TypeError(
        "The 'rng' argument must be None (secure randomness), a non-negative int seed, a numpy SeedSequence or a "
        f"numpy Generator. Got {rng!r} (type {type(rng).__name__})."
    )


def spawn_seeds(rng: RNGLike, n: int) -> list[np.random.SeedSequence]:
    """Derive ``n`` independent child seeds from ``rng`` so that parallel work is reproducible for any worker count."""
    if isinstance(rng, np.random.SeedSequence):
        root = rng
    elif rng is None:
        root = np.random.SeedSequence(secrets.randbits(128))
    else:
        root = np.random.SeedSequence(as_generator(rng).integers(0, 2**63, size=4).tolist())
    return root.spawn(n)
