"""Ctrl-C and SIGTERM of Snakemake stop its running jobs within seconds (kgeval.workflow.forward_stop_signals).

Snakemake, signalled alone (``kill -INT``/``-TERM``, or a Ctrl-C of a wrapper that started it in its own
session), waits for its running jobs to end. The test plays Snakemake's part in a parent process: it keeps
waiting for its job after a KeyboardInterrupt ("Terminating processes on user request") and only notes a SIGTERM
("Will exit after finishing currently running jobs"), with kgeval's handlers installed on top as the workflow's
``onstart`` does. Its job is a real training of the synthetic graph, busy in its epochs when the signal comes;
the job must be gone within 10 s and its work checkpoint must resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kgeval.training.config import TrainConfig
from kgeval.training.trainer import Trainer

ROOT = Path(__file__).resolve().parents[1]
HP = {"dim": 16, "reciprocal": True}
TRAIN = dict(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=100000, eval_every=1000)

# Snakemake started from a shell has Python's SIGINT handler; the test's process may have inherited SIGINT ignored
# (a test worker that ran an in-process command before), and an ignored SIGINT stays ignored by design (nohup)
SNAKEMAKE_LIKE = textwrap.dedent("""
    import signal, subprocess, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from kgeval.workflow import forward_stop_signals
    signal.signal(signal.SIGTERM, lambda s, f: print("graceful", flush=True))
    forward_stop_signals()
    job = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
    while True:
        try:
            rc = job.wait()
            break
        except KeyboardInterrupt:
            print("terminating", flush=True)
    print("job exit", rc, flush=True)
""")

JOB = textwrap.dedent("""
    from kgeval.training.steps import train_seed
    train_seed({kg!r}, "DistMult", {hp!r}, {train!r}, seed=0, out={out!r}, work_dir={work!r}, device="cpu")
""")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signalled_workflow_stops_its_training_and_it_resumes(signum, synth_kg, tmp_path, caplog):
    kg = tmp_path / "kg.npz"
    synth_kg.save(kg)
    work = tmp_path / "work"
    job = JOB.format(kg=str(kg), hp=HP, train=TRAIN, out=str(tmp_path / "model.pt"), work=str(work))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("KGEVAL_PAUSE_AT", None)
    parent = subprocess.Popen([sys.executable, "-c", SNAKEMAKE_LIKE, job], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(work.glob("*.partial.pt")) and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.1)
        assert list(work.glob("*.partial.pt")), "the training wrote no work checkpoint"
        time.sleep(0.5)  # inside a later epoch
        parent.send_signal(signum)  # the parent alone, not its process group
        # 100,000 epochs never end on their own: a job that exits at all was stopped by the signal (the bound
        # only keeps a broken forwarding from hanging the suite; how fast it stops is no unit test's business)
        out, _ = parent.communicate(timeout=300)
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
    assert not (tmp_path / "model.pt").exists(), "the training ran to its end: the signal did not stop it"
    assert ("terminating" if signum == signal.SIGINT else "graceful") in out
    assert "KeyboardInterrupt" in out and "job exit 1" in out  # SIGINT reached the job, which unwound
    assert not list(work.glob(".*.part")), "an interrupted write left its temporary file"
    # --rerun-incomplete: the same settings resume from the work checkpoint
    [checkpoint] = work.glob("*.partial.pt")
    trainer = Trainer(synth_kg, "DistMult", HP, TrainConfig(**TRAIN), seed=0, device="cpu")
    done = int(__import__("torch").load(checkpoint, weights_only=False)["epoch"])
    trainer.cfg.max_epochs = done + 1  # after the hash: the same settings, one more epoch
    with caplog.at_level("INFO", logger="kgeval.training.trainer"):
        result = trainer.fit(checkpoint)
    assert f"at epoch {done}" in caplog.text and "resumed" in caplog.text
    assert result.epochs == done + 1


def test_stop_signals_wait_until_a_set_of_outputs_is_in_place(tmp_path):
    """A SIGTERM or SIGINT that comes while OutputStage moves its files into place acts only after the last one
    (with the handler in place before): a checkpoint and its sidecar are replaced together. Before, a Ctrl-C
    between the two left a new checkpoint beside the old checksum, and the resume trained from the start."""
    from kgeval.io import OutputStage, deferred_stop_signals

    seen = []
    previous = {sig: signal.signal(sig, lambda signum, frame: seen.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            seen.clear()
            with deferred_stop_signals():
                os.kill(os.getpid(), sig)
                time.sleep(0.05)
                seen.append("inside")
            assert seen == ["inside", sig]
        # the renames of a commit are inside such a block
        a, b = tmp_path / "model.pt", tmp_path / "model.pt.json"
        seen.clear()
        real_replace = os.replace

        def replace_then_signal(src, dst):
            real_replace(src, dst)
            if Path(dst) == a:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                seen.append(("after", Path(dst).name, b.exists()))

        os.replace = replace_then_signal
        try:
            with OutputStage("") as stage:
                stage.path(a).write_text("weights")
                stage.path(b).write_text("sha")
        finally:
            os.replace = real_replace
        assert seen == [("after", "model.pt", False), signal.SIGTERM] and b.read_text() == "sha"
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
