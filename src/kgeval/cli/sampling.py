"""Sub-commands of the sampling stage (kgeval.sampling)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..io import OutputStage
from .options import SchemaNumber, command


@command("sample-estimate", "estimate each pair's difference from a sampling plan whose sheet went through "
                            "annotate-merge: estimates.csv (per pair of the plan: the estimate with the prior as "
                            "control variate, its confidence interval, decided when it excludes 0, the judgments used) "
                            "and prior_audit.csv (predicted against observed relevant rates) in --out. It needs "
                            "the score dumps and the knowledge graph the plan was made from, with the same --k, "
                            "--prior and --max-depth; a plan made otherwise is refused.",
         "kgeval sample-estimate --plan results/sampling/FB-Test-S-C --labels judged.txt "
         "--scores results/scores/FB-Test-S-C --kg resources/datasets/FB15k-237/kg.npz --out est")
def _sample_estimate(p: argparse.ArgumentParser):
    p.add_argument("--plan", required=True, help="the plan's folder: sampling_plan.csv and sampling_budgets.csv")
    p.add_argument("--labels", required=True, help="the merged judgments (head relation tail Y|N) of the plan's "
                                                   "sheet, as annotate-merge writes them")
    p.add_argument("--scores", required=True, help="a folder holding one score dump per study system (its "
                                                   "subfolders), as results/scores/<test set>/")
    p.add_argument("--kg", required=True, help="the dataset's kg.npz")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--k", type=SchemaNumber("bounds", "k"), default=10, help="cut-off k of the plan")
    p.add_argument("--max-depth", type=SchemaNumber("pooling", "depth"), default=10, help="deepest pool depth")
    p.add_argument("--prior", choices=("logistic", "binned", "uniform", "boosted"), default="boosted",
                   help="the plan's relevance prior")
    p.add_argument("--rbp-p", type=float, default=0.8, help="RBP's persistence (a plan on RBP)")

    def run(a):
        from ..sampling.steps import estimate_step

        sidecar, pairs = Path(a.plan) / "sampling_plan.csv", Path(a.plan) / "sampling_budgets.csv"
        scores = Path(a.scores)
        dumps = {d.name: str(d) for d in sorted(scores.iterdir()) if d.is_dir()} if scores.is_dir() else {}
        if not dumps:
            p.error(f"--scores {a.scores}: not a folder of score dumps (one subfolder per system)")
        out = Path(a.out)
        with OutputStage("sample-estimate", inputs=[sidecar, pairs, a.labels, a.kg], input_folders=[scores],
                         folder=out) as stage:
            est = estimate_step(dumps, a.kg, str(sidecar), str(pairs), a.labels,
                                str(stage.path(out / "estimates.csv")), str(stage.path(out / "prior_audit.csv")),
                                k=a.k, rbp_p=a.rbp_p, prior=a.prior, max_depth=a.max_depth)
        for row in est.itertuples(index=False):
            verdict = "decided" if row.decided else "undecided"
            print(f"{row.Metric}\t{row.A} − {row.B}\t{row.delta:+.4f}\t[{row.lo:+.4f}, {row.hi:+.4f}]\t{verdict}\t"
                  f"{row.judgments_used} judgments")
        print(f"{out / 'estimates.csv'}\t{int(est['decided'].sum())} of {len(est)} pairs decided")
        return 0

    return run
