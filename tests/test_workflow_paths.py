"""Every rule keeps its log in `logs/<rule>/` (or `logs/<rule>.log`) and its benchmark in
`logs/benchmarks/<rule>/` (or `.tsv`): a reader finds a job's log from the rule's name alone (docs/guide/when-a-run-stops.md, "When a run
stops"), and `run_times` reads each job's rule from its benchmark path's first component. `run_times` itself has no
benchmark: it is the table of the others' benchmarks, written last."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[1] / "workflow" / "rules"


def rule_blocks() -> dict[str, str]:
    blocks = {}
    for smk in sorted(RULES.glob("*.smk")):
        parts = re.split(r"^(?:local)?rule (\w+):", smk.read_text(), flags=re.M)
        blocks.update(zip(parts[1::2], parts[2::2]))
    return blocks


def first_path(block: str, directive: str) -> str | None:
    match = re.search(rf"^\s+{directive}:\s*\n\s+(?:\w+\s*=\s*)?\"([^\"]+)\"", block, re.M)
    return match.group(1) if match else None


BLOCKS = rule_blocks()


def test_the_rule_files_were_read():
    assert {"train_model", "dump_scores", "kp_early_stopping_model", "run_times"} <= set(BLOCKS)


@pytest.mark.parametrize("rule", sorted(BLOCKS))
def test_log_and_benchmark_live_under_the_rule_name(rule):
    block = BLOCKS[rule]
    if not re.search(r"^\s+(script|shell|run|notebook|wrapper):", block, re.M):
        # a target rule (scale_all): inputs only, nothing runs, so nothing to log or time
        assert not re.search(r"^\s+output:", block, re.M), f"rule {rule} has outputs but no action"
        return
    log, bench = first_path(block, "log"), first_path(block, "benchmark")
    assert log is not None, f"rule {rule} lacks log:"
    assert re.match(rf"logs/{rule}(/|\.log$)", log), f"rule {rule} logs to {log}"
    if rule == "run_times":
        assert bench is None
        return
    assert bench is not None, f"rule {rule} lacks benchmark:"
    assert re.match(rf"logs/benchmarks/{rule}(/|\.tsv$)", bench), f"rule {rule} benchmarks to {bench}"
