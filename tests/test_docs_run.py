"""tests/docs_run.py's reading of a page (issue 52 §2): which blocks run, which are marked not run and why, which
output belongs to which block, how a shown output is compared with what the block printed, and which
distributions a page's environment holds. Running the blocks is tests/check.sh's "docs" part."""

from __future__ import annotations

import re

from conftest import ROOT
from docs_run import (
    PAGES,
    closure,
    console_split,
    kgeval_requirements,
    missing_numbers,
    page_extras,
    parse,
    session_problems,
    session_split,
    shown_output,
)

PAGE = """# A page

<!--docs-test:skip the whole workflow: hours-->
```bash
snakemake --cores all
```

```python
print(0.178280, 338.0)
```

```
0.1783 338
```

Prose explains the next block.

```bash
echo 7 of 13
```

The output, after prose:

<!--docs-test:output-->
```text
7 of 13
```

<!--docs-test:alone-->
```console
$ kgeval evaluate runs \\
    --out o
kgeval: error: o/summary.md: Operation not permitted
```

Some prose.

<!--docs-test:output-->
| System | MRR |
|---|---|
| Popularity | <!--fact:default:walkthrough.micro_mrr-->0.1783<!--/fact--> |

```text
not an output: prose came first and no mark says it is one
```
"""


def test_parse_reads_marks_outputs_and_order():
    blocks = parse("page.md", PAGE)
    assert [(b.line, b.lang) for b in blocks] == [(4, "bash"), (8, "python"), (18, "bash"), (30, "console")]
    assert blocks[0].skip == "the whole workflow: hours" and all(b.skip is None for b in blocks[1:])
    assert blocks[1].output == "0.1783 338\n"
    assert blocks[2].output == "7 of 13\n"  # the marked output after prose
    assert blocks[3].alone and not blocks[1].alone
    # the marked table after the console block is its output; the text block after the table is nobody's
    assert blocks[3].output.splitlines()[2] == "| Popularity | <!--fact:default:walkthrough.micro_mrr-->0.1783<!--/fact--> |"
    assert missing_numbers(blocks[3].output, "MRR 0.178280") == []


def test_console_blocks_split_into_commands_and_output():
    commands, shown = console_split(parse("page.md", PAGE)[3].body)
    assert commands == "kgeval evaluate runs \\\n    --out o\n"
    assert shown == "kgeval: error: o/summary.md: Operation not permitted"


def test_numbers_are_compared_at_the_precision_shown():
    printed = "   MRR 0.178280  0.232360\nComplEx -0.0379 334.0\n1,801 items (147 s)"
    assert missing_numbers("MRR 0.1783 0.2324", printed) == []
    assert missing_numbers("ComplEx −0.0379 334", printed) == []  # the page's minus sign, 334.0 printed
    assert missing_numbers("1,801 items", printed) == []
    assert missing_numbers("ComplEx 338.0", printed) == ["338.0"]  # the stale budget of python-api.md
    assert missing_numbers("MRR 0.1782", printed) == ["0.1782"]
    assert missing_numbers("3340", printed) == ["3340"]
    assert missing_numbers("done (12 s)", "done") == []  # a timing beside an output line is the machine's


def test_a_pages_extras_are_those_its_install_lines_name():
    assert page_extras('pip install torch==2.13.0 && pip install "./[pykeen,ir]"\npip install -e ".[dev]"') == {
        "pykeen", "ir", "dev"}
    assert page_extras("kgeval evaluate runs --out eval") == frozenset()


def test_the_environments_hold_only_what_the_install_resolves_to():
    base = closure(kgeval_requirements(frozenset()))
    with_ir = closure(kgeval_requirements(frozenset({"ir"})))
    assert {"torch", "numpy", "pandas", "snakemake"} <= base
    assert not {"pykeen", "ranx", "ir-datasets", "starlette", "pytest"} & base
    assert {"ranx", "ir-datasets", "ir-measures"} <= with_ir and base < with_ir and "pykeen" not in with_ir
    assert {"pykeen", "starlette", "ranx"} <= closure(kgeval_requirements(frozenset({"all"})))


def test_every_block_the_pages_do_not_run_says_why():
    runs = skipped = 0
    for page in PAGES:
        for block in parse(page, (ROOT / page).read_text(encoding="utf-8")):
            if block.skip is None:
                runs += 1
            else:
                skipped += 1
                assert re.search(r"\w{3,}", block.skip), f"{page}:{block.line}: a skip mark without a reason"
    assert runs >= 10 and skipped  # the guides' runnable blocks are found, and the marks are read


def test_a_session_runs_line_by_line_and_its_errors_are_compared_word_for_word():
    body = (">>> from kgeval import place\n>>> result = evaluate(run,\n...                   bootstrap=1)\n"
            "BadValueError: bootstrap: 1 is out of range: expected an integer from 20 to 100,000\n>>> 1 + 1\n2\n")
    (block,) = parse("p.md", "```text\n" + body + "```\n")
    assert block.lang == "session" and block.output is None
    assert session_split(body) == [
        ("from kgeval import place\n", ""), ("result = evaluate(run,\n                  bootstrap=1)\n",
                                            "BadValueError: bootstrap: 1 is out of range: expected an integer from 20 to 100,000"),
        ("1 + 1\n", "2")]
    shown = shown_output(block)
    printed = "BadValueError: bootstrap: 1 is out of range: expected an integer from 20 to 100,000\n2\n"
    assert missing_numbers(shown, printed) == [] and session_problems(shown, printed) == []
    other = printed.replace("out of range", "not allowed")  # same numbers, other words: still a difference
    assert missing_numbers(shown, other) == [] and session_problems(shown, other) == [
        "BadValueError: bootstrap: 1 is out of range: expected an integer from 20 to 100,000"]
