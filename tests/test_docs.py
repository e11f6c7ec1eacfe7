"""The README is one page whose links resolve, keeps CI's test-command block, and points at nothing outside the
repository; the configuration reference of the documentation is generated from the whole schema."""

from __future__ import annotations

import importlib.util
import re
from urllib.parse import unquote

import yaml
from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = "<!-- test-command -->\n```bash\nbash tests/check.sh\n```\n<!-- /test-command -->\n"


def test_readme_is_one_page():
    assert len(README.splitlines()) <= 250


def test_readme_keeps_the_test_command_block():
    assert README.count("<!-- test-command -->") == 1 and TEST_COMMAND in README


def test_readme_relative_links_resolve():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [unquote(link.split("#")[0]) for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 10
    assert [link for link in local if link and not (ROOT / link).exists()] == []


def test_readme_names_nothing_outside_the_repository():
    assert re.findall(r"\.\./shared|shared/specs|\bissue \d+", README) == []


def _hook():
    spec = importlib.util.spec_from_file_location("config_reference", ROOT / "docs/hooks/config_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _keys(node: dict, path: str = "") -> list[str]:
    out = []
    for key, child in node.get("properties", {}).items():
        here = f"{path}.{key}" if path else key
        out += [here] + _keys(child, here)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out += _keys(extra, f"{path}.<name>")
    return out


def test_config_reference_lists_every_key_with_its_default():
    schema = yaml.safe_load((ROOT / "config/schema.yaml").read_text(encoding="utf-8"))
    text = _hook().schema_markdown(schema)
    top = list(schema["properties"])
    assert [k for k in top if f"## `{k}`" not in text] == []
    nested = [k for k in _keys(schema) if "." in k]
    assert len(nested) > 30 and [k for k in nested if f"`{k}`" not in text] == []
    for name in schema["$defs"]:
        assert f"{{ #def-{name} }}" in text
        assert [k for k in _keys(schema["$defs"][name]) if f"`{k}`" not in text.split(f"#def-{name}", 1)[1]] == []
    # a default as the schema declares it: download_timeout 30, bounds 1..3600
    assert "Type: number; default `30`; ≥ 1; ≤ 3600." in text


def test_marker_page_is_replaced():
    page = (ROOT / "docs/guide/config-reference.md").read_text(encoding="utf-8")
    hook = _hook()
    assert hook.MARKER in page
    assert "## `evaluation`" in hook.on_page_markdown(page, None, None, None)


def _run_on_lists(path) -> list[str]:
    """Paragraphs of a rendered page that hold a list written without the blank line Python-Markdown needs before it:
    they render as run-on text with literal dashes, and ``mkdocs build --strict`` does not warn about them."""
    import markdown

    html = markdown.markdown(path.read_text(encoding="utf-8"),
                             extensions=["admonition", "attr_list", "tables", "pymdownx.details",
                                         "pymdownx.superfences"])
    paragraphs = re.findall(r"<p>(.*?)</p>", html, flags=re.S)
    # (a mkdocstrings directive's options are YAML, not Markdown)
    return [p[:80] for p in paragraphs if re.search(r"\n\s*(?:[-*+]|\d+\.) \S", p) and not p.startswith(":::")]


def test_every_page_renders_its_lists_as_lists():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert len(pages) > 10
    broken = {str(p.relative_to(ROOT)): hits for p in pages if (hits := _run_on_lists(p))}
    assert broken == {}


def test_the_list_check_catches_a_list_glued_to_its_paragraph(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Two things:\n- one\n- two\n\nFine:\n\n- one\n- two\n")
    assert len(_run_on_lists(page)) == 1
