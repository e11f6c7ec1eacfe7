"""The JSON schema (``config/schema.yaml``): reading it, validating against it with kgeval's strict types, its defaults,
its bounds, and one-line messages for its errors."""

from __future__ import annotations

import difflib
import functools
import numbers
import re
from pathlib import Path
from typing import Any

import yaml

from ..arguments import Bounded, is_integer, is_number, kind_of, short_repr
from ..errors import ConfigError
from .files import load_yaml


def check_schema(config: dict[str, Any], schema: str | Path) -> dict[str, Any]:
    """Validate against the JSON schema, filling defaults; the first error is raised as a one-line
    :class:`ConfigError` naming the key, what was expected and, for an unknown key, the closest valid one."""
    schema_obj = _read_schema(schema)
    if not isinstance(config, dict):
        raise ConfigError(f"the config is a {type(config).__name__}, expected a mapping of keys to values")
    _fill_and_check(config, schema_obj, schema_obj)
    return config


def _read_schema(schema: str | Path) -> dict[str, Any]:
    import copy

    try:
        stat = Path(schema).stat()
        # a copy: validation puts the schema's default values into the config, which its user may change
        return copy.deepcopy(_parse_schema(str(schema), stat.st_mtime_ns, stat.st_size))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{schema}: cannot read the config schema: {' '.join(str(exc).split())}") from None


@functools.lru_cache(maxsize=8)
def _parse_schema(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    """The schema file parsed once per version (every bounded option and API argument reads it)."""
    with open(path, encoding="utf-8") as fh:
        return load_yaml(fh)


def schema_key(schema: str | Path, keys: tuple[str, ...]) -> dict[str, Any]:
    """The schema of one config key, e.g. ``("synth", "num_entities")`` (a top-level key or a ``$defs`` entry,
    then properties), for options that take the same values as a config key."""
    root = _read_schema(schema)
    node = root["$defs"][keys[0]] if keys[0] in root.get("$defs", {}) else root["properties"][keys[0]]
    for key in keys[1:]:
        node = node["properties"][key]
    return node


def own_schema_file() -> Path:
    """The schema this code was written against: the wheel's copy, else the checkout's (:mod:`kgeval.home`)."""
    from ..home import resource_root

    root = resource_root()
    return (root if root is not None else Path(".")) / "config" / "schema.yaml"


def schema_file(folder: str | Path | None = None) -> Path:
    """config/schema.yaml of ``folder`` (default: the working folder), else of the source tree kgeval runs from."""
    here = Path(folder or ".") / "config" / "schema.yaml"
    return here if here.is_file() else own_schema_file()


def schema_bound(keys: tuple[str, ...], schema: str | Path | None = None) -> Bounded:
    """The bounds of one numeric key of the schema (``("analysis", "tukey_trials")``, ``("arguments",
    "bootstrap")``): what an option or an API argument standing for it accepts. A key the given schema lacks (a
    workflow folder of an older kgeval) is read from kgeval's own schema."""
    try:
        return Bounded.from_schema(schema_key(schema or schema_file(), keys))
    except KeyError:
        return Bounded.from_schema(schema_key(own_schema_file(), keys))


def schema_bounds(keys: list[tuple[str, ...]], folder: str | Path | None = None) -> list[Bounded]:
    """:func:`schema_bound` of several keys, the schema of ``folder`` found once (an API call's arguments)."""
    schema = schema_file(folder)
    return [schema_bound(k, schema) for k in keys]


def _fill_and_check(instance: dict[str, Any], sub_schema: dict[str, Any], root: dict[str, Any]) -> None:
    """Validate ``instance`` against ``sub_schema`` (of the schema ``root``), filling defaults in place; the first
    error as a one-line :class:`ConfigError`."""
    import jsonschema

    validator = _with_defaults(strict_validator(jsonschema.validators.validator_for(root)))(sub_schema)
    # an unknown key first: a misspelt key also shows up as a missing required one
    errors = sorted(validator.iter_errors(instance),
                    key=lambda e: (e.validator != "additionalProperties", [str(p) for p in e.absolute_path]))
    if errors:
        raise ConfigError(schema_error_message(errors[0]))


def _short(value: Any) -> str:
    return short_repr(value)


def schema_error_message(error: Any) -> str:
    """One line for a jsonschema error: never the schema or a whole config block (snakemake's ``validate``
    printed both, some 2,000 lines for a typo)."""
    key = "/".join(str(p) for p in error.absolute_path)
    where = f"config key {key}" if key else "config"
    instance, expected = error.instance, error.validator_value
    if error.validator == "additionalProperties" and isinstance(instance, dict) and expected is False:
        allowed = list(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        unknown = [k for k in instance if k not in allowed and not any(re.search(p, str(k)) for p in patterns)]
        name = str(unknown[0]) if unknown else "?"
        close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return (f"config key {key + '/' if key else ''}{name}: unknown key (expected one of: "
                f"{', '.join(allowed)}){hint}")
    if error.validator == "uniqueItems":
        dup = next((v for i, v in enumerate(instance) if v in instance[:i]), None)
        return f"{where}: {_short(dup)} is listed twice (the values must be distinct)"
    if len(error.message) > 200:  # jsonschema's message quotes the whole instance: name the problem only
        if error.validator == "type":
            types = expected if isinstance(expected, list) else [expected]
            return f"{where}: {_short(instance)} is not of type {' or '.join(map(repr, types))}"
        if error.validator == "enum":
            return f"{where}: {_short(instance)} is not one of {', '.join(map(repr, expected))}"
        return f"{where}: {_short(instance)} fails {error.validator} {_short(expected)}"
    return f"{where}: {error.message}"


def section_defaults(schema: str | Path, key: str, value: dict[str, Any] | None = None) -> dict[str, Any]:
    """The top-level block ``key`` (``value``, or empty) with the schema's defaults filled in, as validating a
    whole config does: for code and tests that read one block without a whole config."""
    import copy

    root = _read_schema(schema)
    block = copy.deepcopy(value) if value is not None else {}
    _fill_and_check(block, {"$defs": root.get("$defs", {}), **root["properties"][key]}, root)
    return block


def strict_validator(validator_cls):
    """``validator_cls`` with kgeval's types (:mod:`kgeval.arguments`: an integer is no float and no bool, a number is
    finite) and messages that quote a value only through :func:`~kgeval.arguments.short_repr` (jsonschema's own
    build the whole ``repr`` of the value, which for a huge value costs more than the check)."""
    import jsonschema
    from jsonschema.exceptions import ValidationError

    checker = validator_cls.TYPE_CHECKER.redefine_many(
        {"integer": lambda _, v: is_integer(v), "number": lambda _, v: is_number(v)})

    def type_(validator, types, instance, schema):
        types = [types] if isinstance(types, str) else list(types)
        if not any(validator.is_type(instance, t) for t in types):
            if {"integer", "number"} & set(types) and isinstance(instance, numbers.Real):  # bool, NaN, 200.0
                yield ValidationError(f"{short_repr(instance)} is {kind_of(instance)}, expected "
                                      f"{Bounded.from_schema(schema).describe()}")
            else:
                yield ValidationError(f"{short_repr(instance)} is not of type {', '.join(map(repr, types))}")

    def enum(validator, enums, instance, schema):
        if not any(jsonschema._utils.equal(e, instance) for e in enums):
            yield ValidationError(f"{short_repr(instance)} is not one of {', '.join(map(repr, enums))}")

    def sized(word, kind, compare):
        def check(validator, bound, instance, schema):
            if validator.is_type(instance, kind) and compare(len(instance), bound):
                yield ValidationError(f"{short_repr(instance)} has {len(instance):,} {word} (expected "
                                      f"{'at least' if compare is _fewer else 'at most'} {bound:,})")
        return check

    def unique(validator, on, instance, schema):
        if on and validator.is_type(instance, "array") and not jsonschema._utils.uniq(instance):
            yield ValidationError(f"{short_repr(instance)} has repeated items")

    def pattern(validator, regex, instance, schema):
        if validator.is_type(instance, "string") and not re.search(regex, instance):
            yield ValidationError(f"{short_repr(instance)} does not match {regex!r}")

    def one_of(validator, subschemas, instance, schema, exactly=True):
        valid = [i for i, sub in enumerate(subschemas) if validator.evolve(schema=sub).is_valid(instance)]
        if not valid:
            yield ValidationError(f"{short_repr(instance)} matches none of the {len(subschemas)} allowed forms")
        elif exactly and len(valid) > 1:
            yield ValidationError(f"{short_repr(instance)} matches {len(valid)} of the allowed forms, expected one")

    return jsonschema.validators.extend(validator_cls, {
        "type": type_, "enum": enum, "uniqueItems": unique, "pattern": pattern,
        "minItems": sized("items", "array", _fewer), "maxItems": sized("items", "array", _more),
        "minLength": sized("characters", "string", _fewer), "maxLength": sized("characters", "string", _more),
        "minProperties": sized("entries", "object", _fewer), "maxProperties": sized("entries", "object", _more),
        "oneOf": one_of, "anyOf": lambda v, subs, i, s: one_of(v, subs, i, s, exactly=False),
    }, type_checker=checker)


def _fewer(n: int, bound: int) -> bool:
    return n < bound


def _more(n: int, bound: int) -> bool:
    return n > bound


def _with_defaults(validator_cls):
    validate_properties = validator_cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(prop, sub["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema_extend(validator_cls, {"properties": set_defaults})


def jsonschema_extend(validator_cls, validators):
    import jsonschema

    return jsonschema.validators.extend(validator_cls, validators)

