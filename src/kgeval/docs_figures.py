"""Small copies of the study's headline figures for the README (``docs/``), regenerated from ``results/``.

The README shows the real run's Figures 4, 5, 7 and 8; committing the full-size PNGs of every run would bloat the
repository, so each is scaled to at most ``max_width`` pixels and stored as a 256-colour PNG (about a third of the
bytes; the figures are line plots on white, so quantising loses nothing visible). PIL writes no timestamp, so the
same results give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .errors import InputError
from .io import atomic_path

# figure -> file under results/ (the analysis stage's outputs) and the README's one-line description
DOCS_FIGURES = {
    "figure4": "analysis/figure4.png",
    "figure5": "analysis/figure5.png",
    "figure7": "analysis/figure7.png",
    "figure8": "analysis/figure8.png",
}


def export_docs_figures(results: str | Path, out: str | Path, max_width: int = 900,
                        target: Callable[[Path], Path] | None = None) -> list[Path]:
    """Write ``out/<figure>.png`` for every figure of :data:`DOCS_FIGURES`; returns the written paths.
    ``target`` maps each output to the path to write it to (an output stage's temporary file, moved into place by
    the caller); without it each file is written atomically on its own."""
    from PIL import Image

    if max_width < 1:
        raise InputError(None, None, f"--max-width {max_width}: expected a width of at least 1 pixel")
    results, out = Path(results), Path(out)
    missing = [str(results / rel) for rel in DOCS_FIGURES.values() if not (results / rel).is_file()]
    if missing:
        raise InputError(missing[0], None, "missing: run the workflow first (`snakemake --cores all`)"
                         + (f"; {len(missing) - 1} more figure(s) missing" if len(missing) > 1 else ""))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rel in DOCS_FIGURES.items():
        with Image.open(results / rel) as im:
            im = im.convert("RGB")
            if im.width > max_width:
                im = im.resize((max_width, round(im.height * max_width / im.width)), Image.Resampling.LANCZOS)
            small = im.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        path = out / f"{name}.png"
        if target is not None:
            small.save(target(path), format="PNG", optimize=True)
        else:
            with atomic_path(path) as tmp:
                small.save(tmp, format="PNG", optimize=True)
        written.append(path)
    return written
