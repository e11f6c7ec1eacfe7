"""torch.compile for the negative-sampling distances of the translational models on CPU.

Why: a negative-sampling step of RotatE or HAKE scores every triple against 128 negatives on both sides, so its
distance works on (batch × 129 × 2d) tensors of about 100 MB each. Even fused by hand (``_ModulusSum``,
``_HakeDistances``) the eager step streams several such temporaries through memory; Inductor's generated C++ loop
reads the operands once and keeps the rest in registers, which makes the distance's forward and backward several
times faster on one core for a few seconds of compilation once per process (less with Inductor's on-disk cache;
``benchmarks/training_budget.py --compare-compile`` measures it, docs/performance.md has the numbers).

The same holds for the all-entity scoring of these models at evaluation (validation during training, score
dumps, Knowledge Persistence's timing and early-stopping rankings): an L1 or phase distance of every question
against every entity is an elementwise reduction, which the generated loop computes without the (rows × entities ×
d) temporaries that the eager code has to block for the cache.

When it is used: only on CPU tensors, only for a model with at least ``MIN_ENTITY_VALUES`` entity-embedding values
(compiling costs each process a few seconds), and only for a model whose ``compile_distances`` flag is set: by the trainer
from ``train.compile`` (training steps and validation), and by the score-dump and Knowledge Persistence steps from
``evaluation.compile``. A model built by hand (the Python API, the tests) keeps the eager code unless its flag is
set. The first call compiles a small probe (forward and backward, symbolic shapes); if that fails
(no C++ compiler, an unsupported platform) the process warns once and keeps the eager function, so a missing
compiler costs time, never a run. The compiled and the eager function compute the same formula; they differ in
the order of float additions (≈ 1e-6 relative), so a rerun on the same machine gives the same bytes, and a run
with ``train.compile: false`` gives the eager bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch

log = logging.getLogger(__name__)

_compiled: dict[str, Callable | None] = {}  # name -> compiled function, or None once compiling failed

# Compiling costs a process 3-10 s (Dynamo's tracing runs again even when Inductor's disk cache holds the code);
# it pays only for a model whose entity table is large: FB15k-237 and WN18RR at d = 200 hold 2.9 and 8.2 million
# values, the synthetic CI graphs at most tens of thousands, where a whole training takes seconds.
MIN_ENTITY_VALUES = 2**20


def _probe_shapes(example: Callable[[], tuple[torch.Tensor, ...]], fn: Callable) -> None:
    args = example()
    if not any(a.requires_grad for a in args):  # an inference formula
        with torch.no_grad():
            fn(*args)
        return
    out = fn(*args)
    loss = sum(o.sum() for o in (out if isinstance(out, tuple) else (out,)))
    loss.backward()


def compiled(name: str, formula: Callable, example: Callable[[], tuple[torch.Tensor, ...]]) -> Callable | None:
    """The compiled ``formula`` (shared by every model in the process), or None where compiling failed.
    ``example`` builds small CPU inputs on which the formula is compiled and run once (forward and backward when
    they require grad), so that a failure shows here and not inside a training step's backward pass."""
    if name not in _compiled:
        try:
            import torch._inductor.config as inductor_config

            inductor_config.compile_threads = 1  # no pool of compile workers beside a Snakemake job
            fn = torch.compile(formula, dynamic=True)
            _probe_shapes(example, fn)
            _compiled[name] = fn
            log.info("%s: compiled with torch.compile (Inductor, CPU)", name)
        except Exception as exc:  # noqa: BLE001 - any compiler failure means: keep the eager code
            _compiled[name] = None
            log.warning("%s: torch.compile failed (%s: %s); training continues with the eager code, which is "
                        "slower; set train.compile: false to skip the attempt", name, type(exc).__name__,
                        str(exc).splitlines()[0][:200] if str(exc) else "")
    return _compiled[name]


def worth_compiling(enabled: bool, entity_values: int) -> bool:
    """Whether a model's flag is set and its entity table is large enough for compiling to pay."""
    return enabled and entity_values >= MIN_ENTITY_VALUES


def run_compiled(enabled: bool, entity_values: int, name: str, formula: Callable,
                 example: Callable[[], tuple[torch.Tensor, ...]], *args: torch.Tensor, grad: bool) -> Any | None:
    """``formula(*args)`` through its compiled form, or None where the caller's eager code should run: the
    model's flag unset or its entity table too small (:func:`worth_compiling`), a tensor off the CPU, compiling
    failed, or autograd not as the formula is meant for (``grad=True``: a training step, autograd recording;
    ``grad=False``: an evaluation, no gradient wanted)."""
    recording = torch.is_grad_enabled() and (grad or any(t.requires_grad for t in args))
    if recording != grad or not worth_compiling(enabled, entity_values) or any(t.device.type != "cpu" for t in args):
        return None
    fn = compiled(name, formula, example)
    return None if fn is None else fn(*args)
