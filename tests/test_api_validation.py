"""One validation layer (kgeval.arguments) for the Python API, the command line and the config (issue 39, items 3
and 4): every bad argument of ``load_testset``, ``evaluate``, ``place`` and ``compare`` is refused at the call with a
kgeval exception that is also a ValueError or TypeError and names the argument; the command line's options say the
same words, with bounds from config/schema.yaml; a config refuses NaN, infinity, a float or a bool where an integer
goes, and a YAML alias bomb before anything walks it."""

from __future__ import annotations

import argparse
import inspect
import re
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT
from test_api import SC, api_work  # noqa: F401 - the fixture: a workflow folder with a study on Synth-Test-S-C

from kgeval.api import compare, evaluate, load_testset, place
from kgeval.arguments import Bounded, short_repr
from kgeval.cli import build_parser, main
from kgeval.config import MAX_YAML_NODES, expanded_size, load_config_file, load_yaml, validate_workflow_config
from kgeval.errors import ArgumentError, BadTypeError, BadValueError, ConfigError

SCHEMA = yaml.safe_load((ROOT / "config/schema.yaml").read_text())


def refused(exc_type, argument: str, call, *words: str) -> str:
    """``call()`` raises the kgeval exception ``exc_type`` (a ValueError or TypeError too) naming ``argument``."""
    with pytest.raises(exc_type) as info:
        call()
    err = info.value
    assert isinstance(err, ArgumentError)
    assert isinstance(err, ValueError if exc_type is BadValueError else TypeError)
    assert err.argument == argument and str(err).startswith(f"{argument}: ")
    for word in words:
        assert word in str(err), str(err)
    return str(err)


@pytest.fixture(scope="module")
def sc(api_work):  # noqa: F811
    workdir, _, _ = api_work
    return load_testset(SC, workdir=workdir, config="config/tiny.yaml")


@pytest.fixture(scope="module")
def result(api_work, sc):  # noqa: F811
    return evaluate(api_work[1], sc, measures=["MRR"], name="Mine", bootstrap=20)


# ---- item 3: the Python API --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [0, 1, 19, 100_001, -5])
def test_evaluate_refuses_a_bootstrap_without_an_interval(api_work, sc, value):  # noqa: F811
    """bootstrap=1 gave a "95 % CI" [0.0225, 0.0225] that missed its own estimate; 0 a numpy error."""
    refused(BadValueError, "bootstrap", lambda: evaluate(api_work[1], sc, measures=["MRR"], bootstrap=value),
            f"{value} is out of range: expected an integer from 20 to 100,000")


@pytest.mark.parametrize("value", [2.5, 100.0, True, "1000", None])
def test_evaluate_refuses_a_bootstrap_that_is_no_integer(api_work, sc, value):  # noqa: F811
    refused(BadTypeError, "bootstrap", lambda: evaluate(api_work[1], sc, measures=["MRR"], bootstrap=value),
            "expected an integer from 20 to 100,000")


def test_the_smallest_bootstrap_gives_an_interval_around_the_estimate(result):
    row = result.table.iloc[0]
    assert row["micro_mrr_lo"] <= row["micro_mrr"] <= row["micro_mrr_hi"]
    assert row["macro_mrr_lo"] <= row["macro_mrr"] <= row["macro_mrr_hi"]


@pytest.mark.parametrize("value", [-3, 0, 9, 100_001])
def test_place_refuses_trials_out_of_the_schemas_bounds(result, value):
    """trials=-3 marked 18 of 18 comparisons significant (hsd_p -0), trials=0 gave NaN."""
    refused(BadValueError, "trials", lambda: place(result, trials=value),
            f"{value} is out of range: expected an integer from 10 to 100,000")


@pytest.mark.parametrize("value", [200.0, True, "200"])
def test_place_refuses_trials_that_are_no_integer(result, value):
    refused(BadTypeError, "trials", lambda: place(result, trials=value), "expected an integer from 10 to 100,000")


def test_place_refuses_a_negative_seed_and_no_result(result):
    refused(BadValueError, "seed", lambda: place(result, seed=-1), "expected an integer ≥ 0")
    refused(BadValueError, "result", lambda: place([]), "an empty list")
    refused(BadTypeError, "result", lambda: place("Mine"), "expected a Result of kgeval.evaluate")


def _deepest(workdir: Path) -> int:
    return int(pd.read_csv(workdir / f"resources/testsets/{SC}.tsv", sep="\t")["depth"].max())


def test_load_testset_refuses_a_depth_beyond_its_pools(api_work):  # noqa: F811
    """depth=-1 gave 0 judgments and all-NaN results; a depth past the deepest pool silently the full set."""
    workdir = api_work[0]
    deepest = _deepest(workdir)

    def load(depth, name=SC):
        return lambda: load_testset(name, depth=depth, workdir=workdir, config="config/tiny.yaml")

    for depth in (-1, 0):
        refused(BadValueError, "depth", load(depth), f"{depth} is out of range: expected an integer ≥ 1")
    for depth in (deepest + 1, 99, 100):
        refused(BadValueError, "depth", load(depth), f"{depth} is out of range: {SC} was pooled to depth {deepest}",
                f"from 1 to {deepest}")
    refused(BadValueError, "depth", load(None, f"{SC}(0)"), "0 is out of range")
    refused(BadValueError, "depth", load(None, f"{SC}({deepest + 1})"), f"pooled to depth {deepest}")
    for depth in (2.5, True, "3", 3.0):
        refused(BadTypeError, "depth", load(depth), "expected an integer ≥ 1")
    refused(BadValueError, "depth", load(2, f"{SC}(3)"), "contradicts")
    assert load(deepest)().depth == deepest


def test_load_testset_refuses_bad_other_arguments(api_work):  # noqa: F811
    workdir = api_work[0]
    refused(BadTypeError, "name", lambda: load_testset(3, workdir=workdir))
    refused(BadTypeError, "build", lambda: load_testset(SC, workdir=workdir, config="config/tiny.yaml", build="no"))
    refused(BadTypeError, "workdir", lambda: load_testset(SC, workdir=b"/tmp"))


@pytest.mark.parametrize("run,words", [
    ({"head0": ["a", "b"]}, "question 'head0' maps to a list, expected a dict {docno: score}"),
    ([("head0", "a", 1.0)], "is a list, expected a DataFrame"),
    (b"some.run", "is a bytes, expected a DataFrame"),
    (42, "is an int, expected a DataFrame"),
])
def test_evaluate_refuses_a_run_of_another_shape(sc, run, words):
    """A dict of lists, a list or bytes raised an AttributeError from inside the reader."""
    refused(BadTypeError, "run", lambda: evaluate(run, sc, measures=["MRR"]), words)


def test_evaluate_refuses_a_run_without_finite_scores(sc):
    qid = sc.questions["qid"].iloc[0]
    doc = sc.answers["docno"].iloc[0]
    refused(BadValueError, "run", lambda: evaluate({qid: {doc: float("nan")}}, sc, allow_missing=True),
            f"question {qid!r}, document {doc!r}: score nan is not a finite number")
    refused(BadValueError, "run", lambda: evaluate({qid: {doc: "high"}}, sc, allow_missing=True), "'high'")
    refused(BadValueError, "run", lambda: evaluate({}, sc, allow_missing=True), "an empty run")
    refused(BadTypeError, "run", lambda: evaluate({qid: {doc: True, "x": 1.0}}, sc, allow_missing=True),
            "a score is a bool")
    refused(BadValueError, "run", lambda: evaluate(pd.DataFrame({"qid": [qid], "docno": [doc]}), sc),
            "missing: score")


@pytest.mark.parametrize("name", ["..", ".", "a/b", "", " Alpha", "Alpha ", "tab\there", "a\\b"])
def test_evaluate_refuses_a_name_that_is_a_path(api_work, sc, name):  # noqa: F811
    refused(BadValueError, "name", lambda: evaluate(api_work[1], sc, measures=["MRR"], name=name))


def test_evaluate_refuses_bad_measures_and_flags(api_work, sc):  # noqa: F811
    run = api_work[1]
    refused(BadValueError, "measures", lambda: evaluate(run, sc, measures=[]), "an empty list")
    refused(BadTypeError, "measures", lambda: evaluate(run, sc, measures="MRR"), "write ['MRR']")
    refused(BadTypeError, "measures", lambda: evaluate(run, sc, measures=["MRR", 10]), "10 is an int")
    refused(BadTypeError, "allow_missing", lambda: evaluate(run, sc, allow_missing=1), "expected True or False")
    refused(BadTypeError, "testset", lambda: evaluate(run, 3), "expected a TestCollection")
    refused(BadTypeError, "name", lambda: evaluate(run, sc, name=None), "expected a name")


def test_compare_refuses_no_result_and_no_measure(result):
    """compare([]) raised an IndexError, compare(measures=[]) a KeyError."""
    refused(BadValueError, "result", lambda: compare([]), "an empty list")
    refused(BadValueError, "measures", lambda: compare(result, measures=[]), "an empty list")
    refused(BadTypeError, "result", lambda: compare([result, "x"]), "'x' is a str")


def test_compare_refuses_a_system_or_a_measure_named_twice(result):
    """Issue 49, item 10: a system twice or a measure twice raised pandas' errors from the table's index."""
    refused(BadValueError, "measures", lambda: compare(result, measures=["MRR", "MRR"]), "'MRR' is named twice")
    refused(BadValueError, "result", lambda: compare([result, result]), "two results are named 'Mine'")


# ---- one layer: the command line says what the API says, bounds and defaults from the schema -----------------
def _option(command: str, dest: str) -> argparse.Action:
    sub = build_parser()[0]._subparsers._group_actions[0].choices[command]
    return next(a for a in sub._actions if a.dest == dest)


@pytest.mark.parametrize("command,dest,keys", [
    ("evaluate", "bootstrap", ("arguments", "bootstrap")),
    ("evaluate", "unjudged_k", ("arguments", "unjudged_k")),
    ("evaluate", "tukey_trials", ("analysis", "tukey_trials")),
    ("docs-figures", "max_width", ("arguments", "max_width")),
    ("baseline", "depth", ("arguments", "baseline_depth")),
])
def test_options_take_their_bounds_and_defaults_from_the_schema(command, dest, keys):
    spec = SCHEMA["$defs"][keys[0]] if keys[0] in SCHEMA["$defs"] else SCHEMA["properties"][keys[0]]
    spec = spec["properties"][keys[1]]
    action = _option(command, dest)
    assert action.type.bounds() == (spec["minimum"], spec["maximum"])
    assert action.default in (spec["default"], None)


def test_api_defaults_are_the_schemas():
    assert inspect.signature(evaluate).parameters["bootstrap"].default == \
        SCHEMA["$defs"]["arguments"]["properties"]["bootstrap"]["default"]
    assert inspect.signature(place).parameters["trials"].default is None  # the config's analysis.tukey_trials
    from kgeval import baseline

    assert inspect.signature(baseline).parameters["depth"].default == \
        SCHEMA["$defs"]["arguments"]["properties"]["baseline_depth"]["default"]


@pytest.mark.parametrize("option,keys,text", [
    ("--tukey-trials", ("analysis", "tukey_trials"), "-3"),
    ("--bootstrap", ("arguments", "bootstrap"), "1"),
    ("--bootstrap", ("arguments", "bootstrap"), "x"),
    ("--unjudged-k", ("arguments", "unjudged_k"), "0"),
])
def test_an_option_and_its_argument_are_refused_in_the_same_words(option, keys, text):
    spec = SCHEMA["$defs"][keys[0]] if keys[0] in SCHEMA["$defs"] else SCHEMA["properties"][keys[0]]
    bound = Bounded.from_schema(spec["properties"][keys[1]])
    with pytest.raises(BadValueError) as api:
        bound.check(int(text) if text.lstrip("-").isdigit() else text, "arg") if text != "x" else \
            bound.parse(text, "arg")
    action = _option("evaluate", option.lstrip("-").replace("-", "_"))
    with pytest.raises(argparse.ArgumentTypeError) as cli:
        action.type(text)
    assert str(cli.value) == api.value.problem


def test_a_name_with_a_space_at_either_end_is_refused_by_the_command_too(capsys):
    assert main(["evaluate", "x.run", "--dataset", "Synth", "--out", "o", "--name", "Alpha "]) == 2
    assert "argument --name: 'Alpha ': a name may not begin or end with whitespace" in capsys.readouterr().err


# ---- item 4: config values ---------------------------------------------------------------------------------------
def _config(tmp_path: Path, patch: str) -> Path:
    """config/tiny.yaml with the YAML ``patch`` appended inside its blocks (a key given twice is refused, so the
    block is merged by hand)."""
    config = yaml.safe_load((ROOT / "config/tiny.yaml").read_text())
    for path, value in yaml.safe_load(patch).items():
        node = config
        keys = path.split("/")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    p = tmp_path / "config.yaml"
    p.write_text(yaml.safe_dump(config, sort_keys=False))
    return p


def _validate(capsys, path: Path) -> tuple[int, str]:
    rc = main(["validate-config", str(path), "--schema", str(ROOT / "config/schema.yaml")])
    return rc, capsys.readouterr().err.strip()


@pytest.mark.parametrize("key,value,expected", [
    ("analysis/alpha", ".nan", "nan is not a finite number, expected a number > 0 and < 1"),
    ("evaluation/memory_budget_mb", ".nan", "nan is not a finite number, expected a number from 16 to 1,000,000"),
    ("models/TransE/train/lr", ".nan", "nan is not a finite number, expected a number > 0 and ≤ 10"),
    ("download_timeout", ".nan", "nan is not a finite number, expected a number from 1 to 3,600"),
    ("bounds/milp_time_limit", ".nan", "nan is not a finite number, expected a number > 0 and ≤ 3,600"),
    ("models/TransE/train/weight_decay", ".inf", "inf is not a finite number, expected a number ≥ 0"),
    ("models/TransE/train/grad_clip", ".inf", "inf is not a finite number, expected a number > 0 (or null)"),
    ("analysis/stability_sizes", "[0.5, .nan]", "stability_sizes/1: nan is not a finite number, expected a number > 0"),
    ("analysis/tukey_trials", "200.0", "200.0 is a float, expected an integer from 10 to 100,000"),
    ("analysis/tukey_trials", "true", "True is a bool, expected an integer from 10 to 100,000"),
    ("evaluation/run_depth", "1000.0", "1000.0 is a float, expected an integer from 10 to 100,000"),
])
def test_config_refuses_nan_infinity_and_non_integers(capsys, tmp_path, key, value, expected):
    """.nan passed every numeric bound and tukey_trials: 200.0 validated, then evaluate stopped with a TypeError."""
    rc, err = _validate(capsys, _config(tmp_path, f"{key}: {value}"))
    assert rc == 2
    assert err.startswith(f"kgeval: error: config key {key}") and expected in err, err


def _bomb(levels: int, width: int = 10) -> str:
    """A "billion laughs" YAML: ``width ** levels`` leaves from ``levels`` lines of aliases."""
    lines = ["laughs:", f"  - &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"  - &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_expanded_size_counts_aliases_without_expanding():
    assert expanded_size(yaml.compose("[a, [b, c], {d: e}]"), 100) == 1 + 1 + 3 + 3
    node = yaml.compose(_bomb(3, 4))  # laughs: [l0, l1, l2] with 4, 16 and 64 leaves
    assert expanded_size(node, 10 ** 6) == 3 + (1 + 4) + (1 + 4 * 5) + (1 + 4 * 21)
    assert load_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}  # a plain alias still reads


def test_a_recursive_alias_is_refused():
    with pytest.raises(yaml.YAMLError, match="an alias inside its own anchor"):
        load_yaml("a: &x [1, *x]\n")


def _bombed_config(tmp_path: Path, levels: int) -> Path:
    """config/tiny.yaml with a bomb of ``10 ** levels`` leaves as the value of analysis.per_relation_system (a
    valid key, whose value is a string: the schema check fails and builds its message)."""
    bomb = textwrap.indent(_bomb(levels).replace("laughs:\n", ""), "  ")
    config = (ROOT / "config/tiny.yaml").read_text()
    path = tmp_path / "bomb.yaml"
    path.write_text(config.replace("analysis:\n", f"analysis:\n  per_relation_system:\n{bomb}", 1))
    assert len(path.read_bytes()) < len(config) + 1000 and "  per_relation_system:\n    - &l0" in path.read_text()
    return path


BOMB_LINE = (rf"refused YAML: the value starting here expands to more than {MAX_YAML_NODES:,} values \(aliases of "
             r"aliases: a 'billion laughs' file\?\); write the values out or use fewer aliases$")


def test_an_alias_bomb_is_refused_in_one_line(capsys, tmp_path):
    """10^9 leaves in 1 KB: the error message was built from the whole expanded value (10^8: 15 s, 1.2 GB; 10^9
    would not finish, so a regression shows as a hang, not as a timing this test would have to judge)."""
    path = _bombed_config(tmp_path, 9)
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:\d+:\d+: {BOMB_LINE}"):
        load_config_file(path)
    # the workflow's check (the Snakefile's) refuses it in one line before any job
    with pytest.raises(SystemExit) as exit_:
        validate_workflow_config({}, ROOT / "config/schema.yaml", models=False, configfiles=[path])
    assert exit_.value.code == 1
    assert re.fullmatch(rf"kgeval: error: {re.escape(str(path))}:\d+:\d+: {BOMB_LINE}",
                        capsys.readouterr().err.strip())


def test_an_alias_bomb_under_a_valid_key_is_refused_within_a_memory_limit(tmp_path):
    """The command itself, in a process of at most 2 GiB of address space: one line and exit 2 (the timeout only
    keeps a regression from hanging the suite: speed is measured by benchmarks, never asserted here)."""
    path = _bombed_config(tmp_path, 8)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run([sys.executable, "-m", "kgeval.cli", "validate-config", str(path), "--schema",
                           str(ROOT / "config/schema.yaml")], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit, cwd=ROOT)
    assert done.returncode == 2, done.stderr[-2000:]
    assert re.fullmatch(rf"kgeval: error: {re.escape(str(path))}:\d+:\d+: {BOMB_LINE}", done.stderr.strip())


def test_messages_quote_a_huge_value_in_a_few_characters(capsys, tmp_path):
    big = list(range(20_000))  # within the node bound, written out: no alias
    assert len(short_repr([big, big])) < 100
    rc, err = _validate(capsys, _config(tmp_path, f"analysis/per_relation_system: {big}"))
    assert rc == 2 and len(err) < 300 and "config key analysis/per_relation_system" in err


def test_argument_bounds_of_an_older_workflow_folder_come_from_kgevals_own_schema(tmp_path):
    """A workflow folder whose schema predates an argument's bounds (no ``$defs/arguments``) still gets them."""
    from kgeval.config import schema_bound

    old = tmp_path / "config" / "schema.yaml"
    old.parent.mkdir()
    old.write_text("properties:\n  analysis:\n    properties:\n      tukey_trials: {type: integer, minimum: 10}\n")
    assert schema_bound(("arguments", "bootstrap"), old).bounds() == (20, 100_000)
    assert schema_bound(("analysis", "tukey_trials"), old).bounds() == (10, None)


def test_evaluate_out_follows_the_output_rule(api_work, sc, tmp_path):  # noqa: F811
    """Issue 49, item 2: evaluate(out=) wrote its dump over whatever was in out/dumps/<name>/<test set>."""
    from kgeval.errors import InputError

    out = tmp_path / "o"
    first = evaluate(api_work[1], sc, measures=["MRR"], name="Mine", bootstrap=20, out=out)
    dump = out / "dumps" / "Mine" / sc.base
    assert first.dump.path == dump and (dump / "meta.json").is_file()  # the dump where it was moved, readable
    again = evaluate(api_work[1], sc, measures=["MRR"], name="Mine", bootstrap=20, out=out)  # its own: replaced
    assert again.aggregate.equals(first.aggregate)
    theirs = tmp_path / "theirs" / "dumps" / "Mine" / sc.base
    theirs.mkdir(parents=True)
    (theirs / "meta.json").write_text("the user's\n")
    with pytest.raises(InputError, match="exists and kgeval evaluate Mine .* did not write it here"):
        evaluate(api_work[1], sc, measures=["MRR"], name="Mine", bootstrap=20, out=tmp_path / "theirs")
    assert (theirs / "meta.json").read_text() == "the user's\n"
