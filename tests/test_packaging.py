"""What the packaging promises: one version, extras hints that install what pyproject declares,
the license in the installed metadata, and (in CI's wheel run) the tests running the wheel.

CI's wheel step (``.ci/run``) sets ``BYTEPAIR_EXPECT_WHEEL=1``: the suite then fails unless
``bytepair`` was imported from an installed wheel rather than from this clone.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

import bytepair
from bytepair import errors
from bytepair.errors import EXTRAS, MissingExtraError, install_hint

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

ROOT = Path(__file__).resolve().parents[1]


def load_toml(path: Path) -> dict[str, Any]:
    return dict(tomllib.loads(path.read_text(encoding="utf-8")))


PYPROJECT = load_toml(ROOT / "pyproject.toml")
OPTIONAL = PYPROJECT["project"]["optional-dependencies"]


def requirement_name(req: str) -> str:
    """The distribution a requirement names, normalized: ``dask[distributed]>=2024.1`` -> ``dask``."""
    m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", req)
    assert m, req
    return re.sub(r"[-_.]+", "-", m.group(0)).lower()


def test_the_version_is_cargo_tomls() -> None:
    cargo = load_toml(ROOT / "rust" / "Cargo.toml")["package"]["version"]
    assert PYPROJECT["project"]["dynamic"] == ["version"] and "version" not in PYPROJECT["project"]
    assert bytepair.__version__ == cargo
    assert importlib.metadata.version("bytepair") == cargo


def test_saved_files_carry_the_version(tmp_path: Path) -> None:
    tok = bytepair.train_from_iterator(["hello world"] * 20, vocab_size=260)
    tok.save(tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["bytepair_version"] == bytepair.__version__


def test_the_license_is_in_the_metadata() -> None:
    meta = importlib.metadata.metadata("bytepair")
    assert meta["License-Expression"] == "MIT"
    files = importlib.metadata.files("bytepair") or []
    license_files = [f for f in files if f.name == "LICENSE"]
    assert license_files, "no LICENSE in the installed dist-info"
    assert Path(str(license_files[0].locate())).read_text(encoding="utf-8") == (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_each_extra_hint_installs_what_pyproject_declares() -> None:
    for extra, req in EXTRAS.items():
        # the requirement itself, or with a version floor or a marker after it
        declared = [r for r in OPTIONAL[extra] if r == req or re.match(re.escape(req) + r"\s*[<>=!~;]", r)]
        assert declared, f"errors.EXTRAS[{extra!r}] = {req!r}; pyproject's {extra} = {OPTIONAL[extra]}"
        assert shlex.split(install_hint(extra)) == ["pip", "install", req]


def _pip_commands(text: str) -> list[list[str]]:
    """The arguments of every ``pip install ...`` written in ``text``, options left out (up to a
    backtick, a parenthesis, a double quote, a comment or the end of the line)."""
    out = []
    for m in re.finditer(r"pip install ([^`\n()\"]+)", text):
        args = m.group(1).split(" #")[0].strip().rstrip(".,;:")
        try:
            words = shlex.split(args)
        except ValueError:  # a quote closed after the match's end
            words = [w.strip("'") for w in args.split()]
        out.append([w for w in words if not w.startswith("-")])
    return out


def _hint_sources() -> list[Path]:
    return sorted((ROOT / "python" / "bytepair").rglob("*.py")) + [ROOT / "README.md"]


def test_every_pip_install_hint_resolves() -> None:
    """Every ``pip install`` the package or the README tells a user names this clone (``.``, a
    wheel in ``dist/``) or a package that pyproject's extras declare; never ``bytepair[...]``,
    which is not on PyPI."""
    declared = {requirement_name(r) for reqs in OPTIONAL.values() for r in reqs}
    declared |= {requirement_name(r) for r in PYPROJECT["build-system"]["requires"]}
    seen = 0
    for path in _hint_sources():
        for words in _pip_commands(path.read_text(encoding="utf-8")):
            for w in words:
                seen += 1
                if w.startswith((".", "dist/", "{")) or ".whl" in w:
                    continue  # this clone or a wheel built from it (extras or not), or a hint's f-string
                assert not w.startswith("bytepair"), f"{path.name}: pip install {w} (bytepair is not on PyPI)"
                assert requirement_name(w) in declared, f"{path.name}: pip install {w}: not in pyproject's extras"
    assert seen > 5


@pytest.mark.parametrize(
    ("extra", "block", "call"),
    [
        ("zstd", "zstandard", lambda: __import__("bytepair.sources").sources.zstandard_module("a.zst")),
        ("parquet", "pyarrow", lambda: __import__("bytepair.sources").sources.pyarrow_parquet("a.parquet")),
        ("plot", "matplotlib", lambda: __import__("bytepair.analysis.plots").analysis.plots.pyplot()),
        ("dask", "distributed", lambda: __import__("bytepair.distributed").distributed._distributed()),
        ("chat", "jinja2", lambda: __import__("bytepair.pipeline.chat").pipeline.chat._jinja()),
    ],
)
def test_a_missing_extra_names_its_package(extra: str, block: str, call: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == block or name.startswith(block + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, block, None)
    with pytest.raises(MissingExtraError) as e:
        call()
    assert e.value.extra == extra and str(e.value).endswith(": " + install_hint(extra))
    assert isinstance(e.value, ImportError) and isinstance(e.value, errors.BytepairError)


@pytest.mark.skipif(os.environ.get("BYTEPAIR_EXPECT_WHEEL") != "1", reason="CI's wheel run only")
def test_running_the_installed_wheel() -> None:
    here = Path(bytepair.__file__).resolve()
    assert ROOT not in here.parents, f"bytepair imported from the clone ({here}), not the wheel"
    assert "site-packages" in here.parts
    assert bytepair._core.__file__.endswith(".abi3.so")
    direct = importlib.metadata.distribution("bytepair").read_text("direct_url.json")
    assert not (direct and json.loads(direct).get("dir_info", {}).get("editable")), "an editable install"
