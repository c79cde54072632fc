"""The plots draw the numbers they are given (checked on the figure before it is saved), with
titles and labelled axes, and the saved files decode as images of a sensible size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from bytepair.analysis import plots  # noqa: E402


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    real = plots._save

    def keep(fig: Any, path: Any) -> str:
        seen.append(fig)
        return real(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    return seen


def _labelled(ax: Any) -> None:
    assert ax.get_xlabel() and ax.get_ylabel()


def test_zipf_plot_draws_ranks_frequencies_and_the_fit(figures: list[Any], tmp_path: Path) -> None:
    out = tmp_path / "z.png"
    plots.plot_zipf([1, 2, 4], [1200, 600, 300], -1.0, 3.0791812460476247, out)
    ax = figures[0].axes[0]
    points, fit = ax.lines
    assert list(points.get_xdata()) == [1, 2, 4] and list(points.get_ydata()) == [1200, 600, 300]
    assert fit.get_ydata()[0] == pytest.approx(1200) and fit.get_ydata()[1] == pytest.approx(300)  # 1200 / rank
    assert "slope -1.00" in fit.get_label() and ax.get_title()
    _labelled(ax)
    import matplotlib.image

    h, w = matplotlib.image.imread(str(out)).shape[:2]
    assert 300 < w < 2000 and 200 < h < 1500


def test_sweep_plot_draws_each_row(figures: list[Any], tmp_path: Path) -> None:
    rows = [
        {"vocab_size": 300, "bytes_per_token": 1.5, "tokens_per_word": 3.0, "coverage": 0.1, "attention_cost": 1.0},
        {"vocab_size": 600, "bytes_per_token": 2.0, "tokens_per_word": 2.0, "coverage": 0.25, "attention_cost": 0.5},
    ]
    plots.plot_sweep(rows, tmp_path / "s.svg")
    axes = figures[0].axes
    assert [list(ax.lines[0].get_ydata()) for ax in axes] == [[1.5, 2.0], [3.0, 2.0], [10.0, 25.0], [1.0, 0.5]]
    assert all(list(ax.lines[0].get_xdata()) == [300, 600] for ax in axes)
    for ax in axes:
        _labelled(ax)
    assert (tmp_path / "s.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")


def test_compare_plot_bars_are_the_values(figures: list[Any], tmp_path: Path) -> None:
    table = {"gpt2": {"en": 1.0, "sw": 2.5}, "o200k_base": {"en": 1.0, "sw": 1.4}}
    plots.plot_compare(table, "parity", tmp_path / "c.png", title="parity by corpus")
    ax = figures[0].axes[0]
    assert [round(p.get_height(), 6) for p in ax.patches] == [1.0, 2.5, 1.0, 1.4]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["en", "sw"]
    assert ax.get_ylabel() == "parity" and ax.get_title() == "parity by corpus"
