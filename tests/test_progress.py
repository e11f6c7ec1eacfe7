"""The progress helper: lines on a fake clock, ETA arithmetic, terminal bars vs plain log lines."""

from __future__ import annotations

import io
import logging

import pytest

from kgeval import progress as progress_mod
from kgeval.progress import Progress, format_seconds


class FakeClock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_format_seconds():
    assert format_seconds(0) == "0:00"
    assert format_seconds(59.4) == "0:59"
    assert format_seconds(61) == "1:01"
    assert format_seconds(3600 + 5 * 60 + 7) == "1:05:07"
    assert format_seconds(-3) == "0:00"


def test_lines_on_the_clock_not_on_the_count():
    clock = FakeClock()
    p = Progress(100, "job", unit="batches", interval=30, clock=clock, stream=io.StringIO())
    # 10 quick steps within 29 s: no line
    for _ in range(10):
        clock.advance(2.9)
        p.update()
    assert p.lines == []
    clock.advance(1.0)  # 30 s since the start
    p.update()
    assert len(p.lines) == 1
    assert p.lines[0].startswith("job: 11/100 batches (11.0 %), elapsed 0:30, left ")
    # one slow step of 45 s: the next update reports at once; then nothing until another 30 s passed
    clock.advance(45)
    p.update()
    assert len(p.lines) == 2
    clock.advance(29)
    p.update()
    assert len(p.lines) == 2
    clock.advance(1)
    p.update()
    assert len(p.lines) == 3
    p.close()
    p.close()  # once only
    assert len(p.lines) == 4
    # 14 in 105 s: 86 left at 7.5 s each
    assert p.lines[-1] == "job: 14/100 batches (14.0 %), elapsed 1:45, left 10:45"


def test_eta_arithmetic():
    clock = FakeClock()
    p = Progress(1000, "job", interval=1e9, clock=clock, stream=io.StringIO())
    assert p.eta() is None  # nothing done yet: no rate
    clock.advance(50)
    p.update(250)
    # 250 in 50 s = 5/s; 750 left -> 150 s
    assert p.eta() == pytest.approx(150.0)
    assert "elapsed 0:50, left 2:30" in p.line()
    clock.advance(100)
    p.update(750)
    assert p.eta() == 0.0
    clock.advance(10)
    p.update(10)  # past the total (an underestimated total): never a negative time left
    assert p.eta() == 0.0


def test_eta_of_a_resumed_loop_counts_only_work_done_here():
    clock = FakeClock()
    p = Progress(400, "train", unit="batches", initial=300, interval=1e9, clock=clock, stream=io.StringIO())
    assert p.eta() is None
    clock.advance(20)
    p.update(40)  # 2/s here; 60 left -> 30 s (not 60 s as the 340 done overall over 20 s would claim)
    assert p.eta() == pytest.approx(30.0)
    assert p.line().startswith("train: 340/400 batches (85.0 %), elapsed 0:20, left 0:30")


def test_fields_units_and_no_total():
    clock = FakeClock()
    p = Progress(None, "scan", unit="rows", interval=10, clock=clock, stream=io.StringIO())
    clock.advance(10)
    p.update(12345, loss=0.123456789, epoch="2/5")
    assert p.lines == ["scan: 12,345 rows, elapsed 0:10, left ?, loss 0.1235, epoch 2/5"]
    b = Progress(3 * 2**20, "fetch", unit="B", interval=10, clock=clock, stream=io.StringIO())
    clock.advance(10)
    b.update(2**20)
    assert b.lines == ["fetch: 1.0 MiB/3.0 MiB (33.3 %), elapsed 0:10, left 0:20"]


def test_lines_go_to_the_logger(caplog):
    clock = FakeClock()
    logger = logging.getLogger("kgeval.test_progress")
    with caplog.at_level(logging.INFO, logger="kgeval.test_progress"):
        with Progress(4, "dump", unit="questions", logger=logger, interval=5, clock=clock,
                      stream=io.StringIO()) as p:
            clock.advance(5)
            p.update(2)
            p.update(2)
    assert [r.getMessage() for r in caplog.records] == p.lines
    assert len(p.lines) == 2 and p.lines[-1].startswith("dump: 4/4 questions (100.0 %)")


def test_bar_only_when_enabled_and_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress_mod, "_bars_enabled", False)
    assert not Progress(5, "x", stream=FakeTTY()).is_bar  # workflow jobs: never a bar
    monkeypatch.setattr(progress_mod, "_bars_enabled", True)
    assert not Progress(5, "x", stream=io.StringIO()).is_bar  # redirected to a file: plain lines
    clock = FakeClock()
    tty = FakeTTY()
    with Progress(5, "bar", unit="items", clock=clock, stream=tty, interval=0) as p:
        assert p.is_bar
        for _ in range(5):
            clock.advance(100)
            p.update(1, loss=0.5)
    assert p.lines == []  # a bar, not log lines
    out = tty.getvalue()
    assert "bar" in out and "5/5" in out and "loss=0.5" in out


def test_write_goes_around_the_bar(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "_bars_enabled", True)
    tty = FakeTTY()
    with Progress(2, "w", stream=tty) as p:
        p.update()
        p.write("hello")
    assert capsys.readouterr().out == "hello\n"
    plain = Progress(2, "w", stream=io.StringIO())
    plain.write("again")
    assert capsys.readouterr().out == "again\n"


def test_training_reports_batches_loss_and_validation(synth_kg, monkeypatch, caplog):
    from kgeval.training import trainer as trainer_mod
    from kgeval.training.config import TrainConfig

    # a line after every batch: each must show the batch count and the epoch's running mean loss
    monkeypatch.setattr(trainer_mod, "Progress", lambda *a, **kw: Progress(*a, **{**kw, "interval": 0.0}))
    cfg = TrainConfig(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=2, eval_every=1)
    tr = trainer_mod.Trainer(synth_kg, "DistMult", {"dim": 8, "reciprocal": True}, cfg, seed=0, device="cpu")
    per_epoch = tr.steps_per_epoch()
    with caplog.at_level(logging.INFO, logger="kgeval.training.trainer"):
        res = tr.fit()
    lines = [r.getMessage() for r in caplog.records
             if r.name == "kgeval.training.trainer" and " batches (" in r.getMessage()]
    assert len(lines) == res.steps + 1 == 2 * per_epoch + 1  # one per batch, then the closing line
    total = 2 * per_epoch
    assert lines[0].startswith(f"DistMult seed 0: 1/{total} batches ")
    assert f"epoch 1/2, batch {per_epoch}/{per_epoch}, loss " in lines[per_epoch - 1]
    assert lines[-1].startswith(f"DistMult seed 0: {total}/{total} batches (100.0 %)")
    assert "left 0:00" in lines[-1]
    for e, entry in enumerate(res.trace):
        last_of_epoch = lines[(e + 1) * per_epoch - 1]
        assert last_of_epoch.endswith(f"loss {entry['loss']:.4g}")
    mrr_lines = [r.getMessage() for r in caplog.records if "validation MRR" in r.getMessage()]
    assert [float(m.split("validation MRR ")[1].split()[0]) for m in mrr_lines] == \
        [pytest.approx(t["valid_mrr"], abs=5e-5) for t in res.trace]


def test_score_dump_reports_questions(synth_kg, tmp_path, monkeypatch, caplog):
    from kgeval.data.questions import save_questions
    from kgeval.data.testsets import full_test
    from kgeval.models.checkpoint import save_checkpoint
    from kgeval.scores import steps as scoring
    from kgeval.scores.dumps import load_dump
    from kgeval.training.config import TrainConfig
    from kgeval.training.trainer import Trainer, model_state

    cfg = TrainConfig(regime="1vsAll", lr=0.01, batch_size=128, max_epochs=1)
    tr = Trainer(synth_kg, "DistMult", {"dim": 8, "reciprocal": True}, cfg, seed=0, device="cpu")
    res = tr.fit()
    save_checkpoint(model_state("DistMult", {"dim": 8, "reciprocal": True}, synth_kg, res, tr.hash),
                    tmp_path / "model.pt")
    synth_kg.save(tmp_path / "kg.npz")
    ts = full_test(synth_kg, "T")
    ts.save(tmp_path / "T.tsv", synth_kg)
    questions = ts.questions(synth_kg)
    save_questions(questions, tmp_path / "T.questions.tsv", synth_kg)
    monkeypatch.setattr(scoring, "Progress", lambda *a, **kw: Progress(*a, **{**kw, "interval": 0.0}))
    args = (tmp_path / "model.pt", tmp_path / "kg.npz", tmp_path / "T.tsv", tmp_path / "T.questions.tsv")
    with caplog.at_level(logging.INFO, logger="kgeval.scores.steps"):
        # a small memory budget: several batches per side
        scoring.dump_scores(*args, tmp_path / "dump", "DistMult", "T", k=10, memory_budget_mb=0.05, device="cpu")
    lines = [r.getMessage() for r in caplog.records if r.name == "kgeval.scores.steps" and " questions (" in r.getMessage()]
    Q = len(questions)
    counts = [int(line.split(": ")[1].split("/")[0].replace(",", "")) for line in lines]
    assert len(lines) > 3 and counts == sorted(counts) and counts[-1] == Q
    assert all(line.startswith("DistMult on T: ") and f"/{Q:,} questions" in line for line in lines)
    # the counting scorer changes nothing: the dump equals the engine's ranking with the bare model
    from kgeval.data.questions import AnswerIndex
    from kgeval.models.checkpoint import load_model
    from kgeval.scores.ranking import docno_ranks, judged_entities, rank_questions

    model = load_model(tmp_path / "model.pt", synth_kg, device="cpu")
    known = AnswerIndex(synth_kg.known(("train", "valid")), synth_kg.num_entities, synth_kg.num_relations)
    ref = rank_questions(model.score_questions, questions, judged_entities(ts, questions), known,
                         docno_ranks(synth_kg.entities), k=10, memory_budget_mb=0.05)
    dump = load_dump(tmp_path / "dump")
    assert (dump.score == ref.score).all() and (dump.n_gt == ref.n_gt).all() and (dump.n_eq == ref.n_eq).all()


def test_heartbeat_speaks_only_into_a_silence_and_says_what_ran_last():
    from kgeval.progress import Heartbeat

    now = [100.0]
    work = logging.getLogger("kgeval.test_heartbeat_work")
    with Heartbeat("kgeval evaluate", interval=30, clock=lambda: now[0]) as beat:
        beat._stop.set()  # the test ticks by hand, on its clock
        now[0] = 129.0
        assert beat.tick() is None  # 29 s of silence: not yet
        now[0] = 131.0
        assert beat.tick() == "kgeval evaluate: working, elapsed 0:31"
        now[0] = 150.0
        work.warning("placing FB-Test-S-C\nsecond line")  # the work speaks: the clock restarts at 150
        now[0] = 175.0
        assert beat.tick() is None
        now[0] = 181.0
        assert beat.tick() == "kgeval evaluate: working, elapsed 1:21 (last: placing FB-Test-S-C)"
        now[0] = 200.0
        assert beat.tick() is None  # its own line restarted the clock, it did not count as the work's
        assert beat.lines == ["kgeval evaluate: working, elapsed 0:31",
                              "kgeval evaluate: working, elapsed 1:21 (last: placing FB-Test-S-C)"]
    assert beat not in logging.getLogger().handlers


def test_a_benchmark_ends_on_a_kgeval_error_with_one_line(monkeypatch):
    """benchmarks/call_walk.py without data printed DataUnavailableError's traceback; heartbeat_main ends a
    benchmark on any kgeval error with the script's name and the error's one line, and lets other errors through."""
    from pathlib import Path

    from kgeval.errors import InputError

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from _common import heartbeat_main

    def fails():
        raise InputError("runs/x.tsv", 3, "not a run")

    with pytest.raises(SystemExit) as stop:
        heartbeat_main(fails, "benchmarks/walk.py")
    assert str(stop.value) == f"benchmarks/walk.py: {InputError('runs/x.tsv', 3, 'not a run')}"
    assert "runs/x.tsv" in str(stop.value) and "\n" not in str(stop.value)
    assert heartbeat_main(lambda: 7, "benchmarks/walk.py") == 7
    with pytest.raises(ZeroDivisionError):
        heartbeat_main(lambda: 1 / 0, "benchmarks/walk.py")


def test_every_benchmark_speaks_while_it_runs():
    """A benchmark of minutes that prints nothing looks hung (issue 52: scale_mrr_time.py printed nothing for
    minutes at ogbl-wikikg2's shape): every script's entry point goes through heartbeat_main."""
    import ast
    from pathlib import Path

    silent = []
    for path in sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
                if "heartbeat_main(" not in ast.unparse(node):
                    silent.append(path.name)
    assert silent == []
