"""MkDocs hook: the configuration reference, generated from ``config/schema.yaml`` at every build.

A page holding the marker ``<!-- config-reference -->`` gets, in its place, one table per configuration section
(key path, type, default, bounds, description), followed by the shared definitions (``$defs``) the sections refer
to. The schema is the one place config defaults and bounds live, so the reference is never a hand copy.
Run as a script (``python docs/hooks/config_reference.py``) it prints the generated Markdown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

MARKER = "<!-- config-reference -->"
SCHEMA = Path(__file__).resolve().parents[2] / "config" / "schema.yaml"
_BOUNDS = [("minimum", "≥ {}"), ("exclusiveMinimum", "> {}"), ("maximum", "≤ {}"), ("exclusiveMaximum", "< {}"),
           ("minItems", "at least {} items"), ("maxItems", "at most {} items"), ("minProperties", "at least {} entries"),
           ("pattern", "matches `{}`"), ("uniqueItems", "unique items")]


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#def-{name})"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    if "oneOf" in node and "type" not in node:
        return " or ".join(_type(n) for n in node["oneOf"])
    t = node.get("type", "any")
    t = " or ".join(t) if isinstance(t, list) else t
    if t == "array" and isinstance(node.get("items"), dict):
        t += f" of {_type(node['items'])}"
    return t


def _bounds(node: dict[str, Any]) -> str:
    out = [fmt.format(node[key]) for key, fmt in _BOUNDS if key in node and node[key] is not False]
    if "required" in node:
        out.append("requires " + ", ".join(f"`{r}`" for r in node["required"]))
    return "; ".join(out)


def _default(node: dict[str, Any]) -> str:
    return f"`{json.dumps(node['default'], ensure_ascii=False)}`" if "default" in node else ""


def _rows(node: dict[str, Any], path: str) -> list[str]:
    """One table row per key under ``node`` (depth first); a map of named entries is written ``<name>``."""
    rows = []
    for key, child in node.get("properties", {}).items():
        here = f"{path}.{key}" if path else key
        rows.append(f"| `{here}` | {_type(child)} | {_default(child)} | {_cell(_bounds(child))} | "
                    f"{_cell(child.get('description', ''))} |")
        rows += _rows(child, here)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and (extra.get("properties") or "$ref" in extra):
        here = f"{path}.<name>"
        if "$ref" in extra:
            rows.append(f"| `{here}` | {_type(extra)} | | | {_cell(extra.get('description', ''))} |")
        rows += _rows(extra, here)
    return rows


HEADER = ["| key | type | default | bounds | description |", "|---|---|---|---|---|"]


def schema_markdown(schema: dict[str, Any]) -> str:
    """The reference of ``schema`` (a JSON Schema as config/schema.yaml writes it) as Markdown."""
    lines = [_cell(schema.get("description", "")), ""]
    for key, node in schema.get("properties", {}).items():
        lines += [f"## `{key}`", "", _cell(node.get("description", "")), "",
                  f"Type: {_type(node)}" + (f"; default {_default(node)}" if "default" in node else "")
                  + (f"; {_bounds(node)}" if _bounds(node) else "") + ".", ""]
        rows = _rows(node, key)
        if rows:
            lines += HEADER + rows + [""]
    lines += ["## Shared definitions", ""]
    for name, node in schema.get("$defs", {}).items():
        lines += [f'### `{name}` {{ #def-{name} }}', "", _cell(node.get("description", "")), ""]
        rows = _rows(node, "")
        lines += (HEADER + rows + [""]) if rows else [f"Type: {_type(node)}; {_bounds(node)}.", ""]
    return "\n".join(lines) + "\n"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    return markdown.replace(MARKER, schema_markdown(schema))


if __name__ == "__main__":
    print(schema_markdown(yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))), end="")
