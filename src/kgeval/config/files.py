"""Reading kgeval's YAML files: duplicate keys refused, alias expansion bounded before anything walks a value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError
from ..limits import scan

MAX_YAML_NODES = 1_000_000
"""Most values (scalars, lists and mappings, each alias counted as often as it is used) a YAML file read by kgeval
may expand to. A real config has a few thousand; a "billion laughs" file of a few kilobytes expands to 10^8 and
more, which every later step (the schema check, an error message) would walk."""


class UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (plain YAML keeps the last silently, so a
    repeated block would replace the first). Every config and schema kgeval reads goes through it."""

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.setdefault(key, line)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if first != line:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {first}, again on line {line})",
                    key_node.start_mark)
        return super().construct_mapping(node, deep)

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            expanded_size(node, MAX_YAML_NODES)
        return node


class YamlSizeError(yaml.composer.ComposerError):
    """A YAML file whose aliases expand past :data:`MAX_YAML_NODES` values, or into themselves."""


def expanded_size(root: yaml.Node, limit: int) -> int:
    """The number of values the YAML node graph ``root`` stands for once every alias is expanded, counted on the
    graph (each node once, its size the sum of its children's) without expanding anything; a
    :class:`YamlSizeError` at the first node past ``limit``, or at an alias inside its own anchor."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # depth first without recursion: a deeply nested file must not exhaust Python's stack
        node, closing = stack.pop()
        key = id(node)
        children = ([v for pair in node.value for v in pair] if isinstance(node, yaml.MappingNode)
                    else node.value if isinstance(node, yaml.SequenceNode) else [])
        if closing:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > limit:
                raise YamlSizeError(
                    None, None, f"the value starting here expands to more than {limit:,} values (aliases of "
                    "aliases: a 'billion laughs' file?); write the values out or use fewer aliases",
                    node.start_mark)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise YamlSizeError(None, None, "an alias inside its own anchor (a recursive value)",
                                              node.start_mark)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def load_yaml(text_or_stream) -> Any:
    """Parse YAML with :class:`UniqueKeyLoader`: no key twice, at most :data:`MAX_YAML_NODES` values once aliases
    are expanded."""
    return yaml.load(text_or_stream, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def load_config_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML config file; a missing or unreadable file, malformed YAML (with line and column) or a
    file that is not a mapping is a one-line :class:`ConfigError`."""
    try:
        with open(path, encoding="utf-8") as fh:
            scan(path)  # the size, line length and NUL bytes, before YAML reads it
            text = fh.read()
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        config = load_yaml(text)
    except RecursionError:  # PyYAML composes nested values recursively
        raise ConfigError(f"{path}: malformed YAML: values nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        kind = "refused YAML" if isinstance(exc, YamlSizeError) else "malformed YAML"
        raise ConfigError(f"{where}: {kind}: {problem}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, found {type(config).__name__}")
    return config

