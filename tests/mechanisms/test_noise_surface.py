"""The samplers' package ``diffpriv_py.noise``: one public surface, no private name crossing it, no mechanism inside.

Also the surface's new entries give the draws of the paths they stand for, bit for bit from the same stream.
"""

import ast
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from diffpriv_py import noise as dpnoise
from diffpriv_py.noise import exact as noise_exact

PACKAGE = Path(__file__).resolve().parents[2] / "diffpriv_py"


def _resolve(module: str | None, level: int, path: Path) -> str:
    """The absolute dotted name an import in ``path`` (a file of the package) refers to."""
    if level == 0:
        return module or ""
    parts = ["diffpriv_py", *path.relative_to(PACKAGE).with_suffix("").parts]
    base = parts[: len(parts) - level]
    return ".".join(base + ([module] if module else []))


def boundary_violations(source: str, path: Path) -> list[str]:
    """What a file outside ``noise/`` takes from it that it may not: a submodule, a name not in ``__all__`` (imported,
    or read as an attribute of the imported package), or the old homes ``_noise`` and ``mechanisms._selection``."""
    tree = ast.parse(source)
    out, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(node.module, node.level, path)
            if target == "diffpriv_py":  # from .. import noise [as x] / _noise
                for alias in node.names:
                    if alias.name == "_noise":
                        out.append("diffpriv_py._noise")
                    if alias.name in {"noise", "_noise"}:
                        aliases.add(alias.asname or alias.name)
            elif target == "diffpriv_py.noise":
                out += [f"{target}.{a.name}" for a in node.names if a.name not in dpnoise.__all__]
            elif target.startswith("diffpriv_py.noise.") or target in {
                "diffpriv_py._noise",
                "diffpriv_py.mechanisms._selection",
            }:
                out.append(target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(("diffpriv_py.noise.", "diffpriv_py._noise")):
                    out.append(alias.name)
                elif alias.name == "diffpriv_py.noise" and alias.asname:
                    aliases.add(alias.asname)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            if node.attr not in dpnoise.__all__:
                out.append(f"{node.value.id}.{node.attr}")
    return out


def _library_files_outside_noise() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "noise" not in p.relative_to(PACKAGE).parts[:1]]


def test_no_library_module_reaches_past_the_noise_surface():
    """Every import of the samplers outside ``noise/`` names ``diffpriv_py.noise`` and a name in its ``__all__``."""
    found = {
        str(p.relative_to(PACKAGE)): v
        for p in _library_files_outside_noise()
        if (v := boundary_violations(p.read_text(encoding="utf-8"), p))
    }
    assert found == {}


@pytest.mark.parametrize(
    "line",
    [
        "from ..noise.geometric import _laplace_grid",
        "from ..noise import _round_to_grid",
        "from .. import _noise",
        "from ..mechanisms._selection import gumbel",
        "import diffpriv_py.noise.gaussian",
        "from .. import noise\nx = noise._block_exponent(1.0)",
        "from .. import noise as samplers\nx = samplers.grid_laplace_scalar_plan",
    ],
)
def test_the_boundary_check_catches_a_reach_past_the_surface(line):
    """The same check flags each kind of reach, written into a module of the package."""
    assert boundary_violations(line, PACKAGE / "stats" / "_example.py")


def test_the_noise_package_imports_no_mechanism_nor_anything_above_it():
    """``noise/`` imports only itself and ``_rng`` from the library (it sits one floor below the mechanisms)."""
    imported = set()
    for path in sorted((PACKAGE / "noise").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                imported.add(_resolve(node.module, node.level, path))
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                imported |= {n for n in names if n.startswith("diffpriv_py")}
    assert {m for m in imported if not m.startswith("diffpriv_py.noise")} <= {"diffpriv_py._rng"}


def test_every_public_name_of_the_surface_is_importable_and_public():
    assert all(not name.startswith("_") and hasattr(dpnoise, name) for name in dpnoise.__all__)


@pytest.mark.parametrize(("sensitivity", "epsilon"), [(1.0, 1.0), (0.01, 0.3), (60.0, 0.01), (3.0, 7.0)])
def test_grid_laplace_scalar_is_grid_laplace_of_one_value_bit_for_bit(sensitivity, epsilon):
    """The scalar entry gives the float ``grid_laplace`` gives for an array of one, and leaves the stream where it
    does (the next draws agree too), for values on and off the grid, either side of 0 and huge."""
    for seed, value in enumerate([0.0, 0.3, -2.5e-7, 1234.5678, 3e15]):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        scalar = dpnoise.grid_laplace_scalar(value, sensitivity, epsilon, a)
        array = dpnoise.grid_laplace(np.array([value]), sensitivity, epsilon, 1, b)
        assert scalar is not None and np.float64(scalar).tobytes() == array[0].tobytes()
        assert a.random() == b.random()


def test_exact_discrete_laplace_many_draws_from_one_buffer_of_bits():
    """The same integers as one ``_Bits`` buffer shared by the draws (the DiscreteLaplace exact release's stream);
    a fresh buffer per draw (the Generator passed each time) gives other integers, so the test would see a change."""
    scale = Fraction(3, 2)
    bits = noise_exact._Bits(np.random.default_rng(5))
    shared = [dpnoise.exact_discrete_laplace(scale, bits) for _ in range(40)]
    assert dpnoise.exact_discrete_laplace_many(scale, 40, np.random.default_rng(5)) == shared
    rng = np.random.default_rng(5)
    assert [dpnoise.exact_discrete_laplace(scale, rng) for _ in range(40)] != shared


def test_laplace_grid_refuses_what_grid_laplace_would_refuse():
    """The public check the Laplace mechanism runs before the charge raises exactly when the release would."""
    with pytest.raises(ValueError, match="too small for safe noise"):
        dpnoise.laplace_grid(1.0, 1e-12, 1)
    with pytest.raises(ValueError, match="too small for safe noise"):
        dpnoise.grid_laplace(np.zeros(1), 1.0, 1e-12, 1, np.random.default_rng(0))
    r, eps_c, rounded = dpnoise.laplace_grid(1.0, 1.0, 4)
    assert r == dpnoise.grid_step(1.0) and eps_c == dpnoise.laplace_epsilon_reserve(1.0, 4) and rounded == 1.0 + 4 * r
