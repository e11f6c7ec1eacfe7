"""``kgeval docs-figures``: small, deterministic copies of the headline figures."""

from __future__ import annotations

import hashlib

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

from kgeval.cli import main  # noqa: E402
from kgeval.docs_figures import DOCS_FIGURES, export_docs_figures  # noqa: E402


def _figures(results, width_in=16):
    for rel in DOCS_FIGURES.values():
        path = results / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fig, ax = plt.subplots(figsize=(width_in, 4), dpi=100)
        ax.plot([0, 1, 2], [0, 1, 0.5])
        fig.savefig(path)
        plt.close(fig)


def test_scaled_quantised_and_reproducible(tmp_path):
    _figures(tmp_path / "results")
    first = export_docs_figures(tmp_path / "results", tmp_path / "a", max_width=800)
    second = export_docs_figures(tmp_path / "results", tmp_path / "b", max_width=800)
    assert [p.name for p in first] == ["figure4.png", "figure5.png", "figure7.png", "figure8.png"]
    for a, b in zip(first, second):
        assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
        with Image.open(tmp_path / "results" / DOCS_FIGURES[a.stem]) as src:
            w, h = src.size
        with Image.open(a) as im:
            assert w > 1000 and im.size == (800, round(h * 800 / w))  # scaled to 800 wide, aspect kept
            assert im.mode == "P"
        assert a.stat().st_size < (tmp_path / "results" / DOCS_FIGURES[a.stem]).stat().st_size


def test_narrow_figure_keeps_its_size(tmp_path):
    _figures(tmp_path / "results", width_in=6)
    for path in export_docs_figures(tmp_path / "results", tmp_path / "docs", max_width=900):
        with Image.open(tmp_path / "results" / DOCS_FIGURES[path.stem]) as src, Image.open(path) as im:
            assert src.width < 900 and im.size == src.size


def test_missing_figure_is_one_line_error(tmp_path, capsys):
    _figures(tmp_path / "results")
    (tmp_path / "results" / "analysis" / "figure7.png").unlink()
    assert main(["docs-figures", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "docs")]) != 0
    err = capsys.readouterr().err
    assert "figure7.png: missing: run the workflow first" in err
    assert "Traceback" not in err
    assert not (tmp_path / "docs" / "figure4.png").exists()


def test_cli_writes_docs(tmp_path, capsys):
    _figures(tmp_path / "results")
    assert main(["docs-figures", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "docs")]) == 0
    out = capsys.readouterr().out
    assert out.count("bytes") == 4
    assert sorted(p.name for p in (tmp_path / "docs").iterdir()) == [f"{n}.png" for n in DOCS_FIGURES]


@pytest.mark.parametrize("width", [0, -5])
def test_bad_width(tmp_path, width, capsys):
    _figures(tmp_path / "results")
    assert main(["docs-figures", "--results", str(tmp_path / "results"), "--max-width", str(width)]) != 0
    assert "--max-width" in capsys.readouterr().err
