"""Every report caption renders the way ``snakemake --report`` renders it: Jinja first, then docutils to HTML."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import docutils.core
import pytest
import yaml
from jinja2 import Environment, StrictUndefined

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS = sorted((ROOT / "workflow" / "report").glob("*.rst"))


class _Anything(dict):
    """Stands in for ``snakemake.wildcards``/``params``: every attribute is a plain word."""

    def __getattr__(self, key):
        return "value"


def render(text: str) -> str:
    """Jinja with the environment snakemake's report uses, then docutils; returns docutils' messages."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    snakemake = SimpleNamespace(wildcards=_Anything(), params=_Anything(), input=_Anything(), output=_Anything(),
                                config=config)
    rst = Environment(trim_blocks=True, lstrip_blocks=True, undefined=StrictUndefined).from_string(text).render(
        snakemake=snakemake, categories={}, files={})
    messages = io.StringIO()
    docutils.core.publish_parts(rst, writer="html",
                                settings_overrides={"report_level": 1, "halt_level": 5, "warning_stream": messages})
    return messages.getvalue()


def test_the_checker_sees_an_undefined_substitution():
    assert "Undefined substitution" in render("KP scores about c·|V| triples.")
    assert render("KP scores about ``c·|V|`` triples.") == ""


@pytest.mark.parametrize("caption", CAPTIONS, ids=[c.name for c in CAPTIONS])
def test_caption_renders_without_messages(caption):
    assert render(caption.read_text()) == ""
