"""A popularity baseline written as TREC run files: an outside system to try ``kgeval evaluate`` and the config key
``external_systems:`` on the real test sets without training anything.

For a question (side, entity, relation) it ranks the entities by how often they fill that side of that relation
in the training triples, then by how often they occur in training at all, then by id; the score is the count plus
the overall frequency as a fraction below one, so that trec_eval's score order is the ranking. Every question of
one (side, relation) gets the same list; kgeval removes the question's known answers itself.

    python benchmarks/popularity_runs.py --dataset FB15k-237 --out runs \\
        --testsets FB-Test-O,FB-Test-S,FB-Test-S-C --depth 100

run in a workflow folder. Test sets whose data are missing (resources/datasets/<dataset>/kg.npz,
resources/testsets/) are built first, only those, as ``kgeval.api.load_testset`` builds them (set KGEVAL_MIRROR
to a data mirror without network access). ``--testsets`` is spelled and separated as in ``kgeval evaluate``.
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path

import numpy as np
import pandas as pd

from kgeval.data.kg import HEAD, KnowledgeGraph
from kgeval.data.questions import load_questions
from kgeval.errors import KgevalError


def popularity_scores(kg: KnowledgeGraph) -> np.ndarray:
    """(2, relations, entities) scores: side-and-relation counts plus the overall frequency scaled below one."""
    train = kg.splits["train"]
    scores = np.zeros((2, kg.num_relations, kg.num_entities))
    np.add.at(scores, (HEAD, train[:, 1], train[:, 0]), 1.0)
    np.add.at(scores, (1 - HEAD, train[:, 1], train[:, 2]), 1.0)
    overall = np.bincount(train[:, [0, 2]].ravel(), minlength=kg.num_entities).astype(float)
    return scores + overall / (overall.max() + 1.0)


def write_runs(workdir: Path, dataset: str, test_sets: list[str], out: Path, depth: int, tag: str,
               config: str | None = None) -> None:
    from kgeval.api import data_files, load_testset

    for name in test_sets:  # builds what is missing, once; a failed download is one line naming the command
        if not all(p.is_file() for p in data_files(workdir, dataset, name).values()):
            load_testset(name, workdir=workdir, config=config)
    kg = KnowledgeGraph.load(data_files(workdir, dataset, test_sets[0])["kg"])
    scores = popularity_scores(kg)
    # the top `depth` of every (side, relation), best first; ties by entity id (stable sort of -score)
    order = np.argsort(-scores, axis=2, kind="stable")[:, :, :depth]
    out.mkdir(parents=True, exist_ok=True)
    for name in test_sets:
        t0 = time.time()
        qs = load_questions(data_files(workdir, dataset, name)["questions"], kg)
        top = order[qs.side, qs.relation]  # (questions, depth)
        top_scores = np.take_along_axis(scores[qs.side, qs.relation], top, axis=1)
        n, k = top.shape
        run = pd.DataFrame({"qid": np.repeat(np.asarray(qs.qid), k), "Q0": "Q0",
                            "docno": np.asarray(kg.entities)[top.ravel()], "rank": np.tile(np.arange(1, k + 1), n),
                            "score": np.char.mod("%.6f", top_scores.ravel()), "tag": tag})
        path = out / f"{name}.run.gz"
        with gzip.open(path, "wt", compresslevel=6) as fh:
            run.to_csv(fh, sep=" ", header=False, index=False)
        print(f"{path}: {n} questions x {k} = {n * k} lines in {time.time() - t0:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default=".", help="workflow folder (missing data are built there)")
    ap.add_argument("--config", default=None, help="workflow config (default: config/config.yaml of --workdir)")
    ap.add_argument("--dataset", default="FB15k-237")
    ap.add_argument("--testsets", default="FB-Test-O,FB-Test-S,FB-Test-S-C",
                    help="comma-separated test sets, as kgeval evaluate --testsets (default: %(default)s)")
    ap.add_argument("--out", required=True, help="folder for <test set>.run.gz")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--tag", default="popularity")
    a = ap.parse_args()
    try:
        write_runs(Path(a.workdir), a.dataset, a.testsets.split(","), Path(a.out), a.depth, a.tag, a.config)
    except KgevalError as exc:
        raise SystemExit(f"popularity_runs: error: {' '.join(str(exc).split())}") from None


if __name__ == "__main__":
    main()
