"""docs/guide/integrations.md's Python examples, executed as written, in order, in an empty folder outside the
checkout's view (data built into KGEVAL_HOME from the mirror); the printed lines are the page's outputs."""

from __future__ import annotations

import re

import pytest
from conftest import MIRROR, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.peer,
              pytest.mark.skipif(MIRROR is None, reason="no data mirror (set KGEVAL_MIRROR)")]


def test_the_integrations_page_runs_as_written(as_installed, capsys):
    for tool in ("pykeen", "ir_datasets", "ranx"):
        pytest.importorskip(tool)
    text = (ROOT / "docs/guide/integrations.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    outputs = re.findall(r"^```text\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 4 and len(outputs) == 3
    namespace: dict = {}
    for block in blocks[1:]:  # the first is the summary of one-liners
        exec(compile(block, "integrations.md", "exec"), namespace)
    printed = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    for expected in outputs:
        for line in (x for x in expected.splitlines() if x.strip()):
            assert line in printed, line
    assert namespace["metrics"]["FB-Test-S-C.judged_10"] == pytest.approx(
        1 - namespace["metrics"]["FB-Test-S-C.unjudged_10"], abs=1e-15)
    assert set(namespace["filtered"]) == set(namespace["sc"].questions["qid"])
