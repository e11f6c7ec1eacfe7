"""The baseline sub-command: a popularity or frequency baseline written as run files for ``kgeval evaluate``."""

from __future__ import annotations

import argparse

from .options import SchemaNumber, command, name_type


# ---- baselines (kgeval.external.baselines) ---------------------------------------------------------------------
@command("baseline", "write a baseline that needs no training as TREC run files, OUT/<test set>.run.gz, ready for "
                     "kgeval evaluate: popularity (entities ranked by how often they fill the question's side of "
                     "its relation in training) or frequency (by how often they occur in training at all). Missing "
                     "data (the dataset and the test sets asked for) are built first, once: in a workflow folder "
                     "into resources/, elsewhere into $KGEVAL_HOME.",
         "kgeval baseline popularity --out runs --testsets FB-Test-S-C")
def _baseline(p: argparse.ArgumentParser):
    p.add_argument("kind", choices=("popularity", "frequency"), help="which baseline")
    p.add_argument("--out", required=True, help="folder for <test set>.run.gz; what an earlier baseline wrote "
                   "there is replaced, nothing else is touched")
    p.add_argument("--dataset", type=name_type, default="FB15k-237", help="the dataset (default: %(default)s)")
    p.add_argument("--testsets", default=None, help="comma-separated test sets of the dataset (default: all)")
    p.add_argument("--depth", type=SchemaNumber("arguments", "baseline_depth"), default=100,
                   help="entities per question (default: %(default)s)")
    p.add_argument("--tag", type=name_type, default=None, help="the runs' tag column (default: the kind)")
    p.add_argument("--workdir", default=".", help="workflow folder whose resources/ hold the data (default: here; "
                   "outside a workflow folder the data are in $KGEVAL_HOME)")
    p.add_argument("--config", default=None, help="workflow config (default: config/config.yaml here, else the "
                   "packaged one)")

    def run(a):
        from ..api.baselines import baseline

        names = [t for t in (a.testsets or "").split(",") if t] or None
        written = baseline(a.kind, a.out, names, a.dataset, a.depth, a.tag, workdir=a.workdir, config=a.config)
        for name, path in written.items():
            print(f"{name}\t{path}")
        return 0

    return run
