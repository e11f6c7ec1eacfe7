"""What ``kgeval evaluate`` does between parsing its options and printing: the dataset's test sets and their data
files, the placement options from the config, and the evaluation of the systems into a folder. The command line
only parses and prints; these functions are the same for any caller."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import run_depth
from ..data.cache import kg_file, testset_file_paths
from ..data.kg import KnowledgeGraph
from ..errors import InputError
from .evaluate import evaluate_systems
from .outputs import Options, study_files, write_outputs
from .sampled import SamplingOptions, check_against
from .systems import System


def dataset_testsets(config: dict[str, Any], dataset: str, wanted: Sequence[str] | None = None,
                     source: str | Path = "config") -> list[str]:
    """The test sets of ``dataset`` in the config, or the ``wanted`` ones, each checked to be one of them;
    errors name ``source`` (the config file)."""
    names = [t for t, spec in config["test_sets"].items() if spec["dataset"] == dataset]
    if wanted:
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            raise InputError(source, None, f"test set(s) {', '.join(unknown)} are not test sets of {dataset} "
                                           f"({', '.join(names)})")
        names = list(wanted)
    if not names:
        raise InputError(source, None, f"no test set of dataset {dataset!r} "
                                       f"(datasets: {', '.join(config['datasets'])})")
    return names


@dataclass(frozen=True)
class TestsetFiles:
    """The data stage's files that evaluating on ``testsets`` of one dataset reads."""

    __test__ = False  # not a pytest class

    kg: Path
    testsets: dict[str, dict[str, str]]  # test set -> {"tsv": …, "questions": …}

    def paths(self) -> list[Path]:
        return [self.kg] + [Path(f) for files in self.testsets.values() for f in files.values()]

    def missing(self) -> list[Path]:
        return [path for path in self.paths() if not path.is_file()]


def testset_files(resources: str | Path, dataset: str, testsets: Sequence[str]) -> TestsetFiles:
    """Where the data stage writes a dataset's graph and its test sets (``workflow/rules/data.smk``)."""
    paths = {t: testset_file_paths(resources, t) for t in testsets}
    return TestsetFiles(kg_file(resources, dataset),
                        {t: {"tsv": str(p["tsv"]), "questions": str(p["questions"])} for t, p in paths.items()})


def placement_options(config: dict[str, Any], testsets: Sequence[str], results: str | Path, unjudged_k: int,
                      templates: str | Path, batch: str, tukey_trials: int | None, bootstrap: int,
                      reference: str, decide_against: Sequence[str] | None = None, judgments: str | None = None,
                      sample_metric: str | None = None, sample_budget: float | None = None,
                      pool_depth: int | None = None) -> Options:
    """The placement settings of an evaluation: the options given, and the config's for the rest (the pooled test
    set, Tukey HSD trials, the bounded metrics, the sampled judgments' design)."""
    kinds = {config["test_sets"][t]["kind"]: t for t in testsets}
    bounds = config.get("bounds", {})
    return Options(results, kinds.get("pooled", kinds.get("sample")), unjudged_k, templates, batch,
                   tukey_trials or config.get("analysis", {}).get("tukey_trials", 1000), repeats=bootstrap,
                   reference=reference, bounds_metrics=tuple(bounds.get("metrics", Options.bounds_metrics)),
                   bounds_k=bounds.get("k", Options.bounds_k), rbp_p=bounds.get("rbp_p", Options.rbp_p),
                   sampling=sampling_options(config, decide_against, judgments, sample_metric, sample_budget,
                                             pool_depth))


def sampling_options(config: dict[str, Any], decide_against: Sequence[str] | None = None,
                     judgments: str | None = None, metric: str | None = None,
                     budget: float | None = None, pool_depth: int | None = None) -> SamplingOptions:
    """The sampled judgments' settings: the options given, the config's ``sampling`` keys for the rest."""
    s = config.get("sampling", {})
    d = SamplingOptions()
    return SamplingOptions(enabled=s.get("enabled", d.enabled) or bool(decide_against or judgments),
                           against=tuple(decide_against) if decide_against else None,
                           metric=metric or s.get("plan_metric", d.metric),
                           budget=budget if budget is not None else s.get("budget"),
                           design=s.get("design", d.design), floor_share=s.get("floor_share", d.floor_share),
                           level=s.get("level", d.level), max_budget=s.get("max_budget", d.max_budget),
                           prior=config.get("bounds", {}).get("prior", d.prior), seed=s.get("seed", d.seed),
                           mc_draws=s.get("mc_draws", d.mc_draws), judging=s.get("judging", d.judging),
                           max_depth=pool_depth if pool_depth is not None else
                           config.get("pooling", {}).get("depth", d.max_depth), judgments=judgments)


def check_decide_against(ref, options: Options) -> None:
    """``--decide-against`` names study systems of the pooled test set, and ``--judgments`` needs that set's
    per-item reference: checked before any dump is written."""
    s = options.sampling
    if s.against is None and s.judgments is None:
        return
    files = None if ref is None or ref.kind == "authors" else ref.files.get(options.pooled)
    if files is None:
        raise InputError(None, None, "--decide-against / --judgments need the study systems' top-k lists on the "
                                     f"pooled test set ({options.pooled}): a results folder or a reference pack "
                                     "that holds them")
    if s.against is not None:
        from .placement import study_systems

        check_against(s.against, list(study_systems(files)["System"].astype(str)))


@dataclass
class FolderEvaluation:
    """What :func:`evaluate_into` wrote: the evaluation table, the output files and where the systems were
    placed (``note``)."""

    table: pd.DataFrame
    written: dict[str, Path]
    note: str


def evaluate_into(root: str | Path, systems: list[System], config: dict[str, Any], files: TestsetFiles,
                  options: Options, allow_missing: bool = False, bootstrap: int = 1000) -> FolderEvaluation:
    """Evaluate ``systems`` on the test sets of ``files`` and write every output of ``kgeval evaluate`` into
    ``root`` (a staging folder): the placement reference is checked first, before any dump is written, so a name
    clash with a study system or a broken results folder stops the run early."""
    ref, note = study_files(options, list(files.testsets), [s.name for s in systems])
    check_decide_against(ref, options)
    kg = KnowledgeGraph.load(files.kg)
    evaluations: dict = {}
    table, metas = evaluate_systems(systems, kg, files.testsets, Path(root), config["evaluation"]["trec_measures"],
                                    depth_of=lambda t: run_depth(config, t), allow_missing=allow_missing,
                                    repeats=bootstrap, evaluations=evaluations)
    written = write_outputs(root, kg, table, metas, evaluations, ref, note, options)
    return FolderEvaluation(table, written, note)
