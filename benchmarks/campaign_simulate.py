"""A campaign on the real FB-Test-S-C, judged by an oracle through the HTTP API and offline (issue 43).

The universe of the sampling simulation (``benchmarks/sampling.py``: the study systems' top 10 from the reference
pack, every published label beyond depth 0 hidden, its true value known): a P@10 plan for the pairs of three
study systems, its sheet (one item per triple, in the plan's order) and live terms in a campaign file, and
``kgeval.campaign.simulate`` judging it as two annotators (a seeded share answered wrongly) and an adjudicator
with the published labels as the oracle. Prints per pair the true Δ, the final Δ̂ and the judgment at which the
comparison was decided over HTTP and offline, and the HTTP run's wall time, as JSON.

    python benchmarks/campaign_simulate.py OUT [--systems ComplEx TuckER TransE] [--budget 600]
        [--disagreement 0.1] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from _common import heartbeat_main
from sampling import universe  # benchmarks/sampling.py: the FB-Test-S-C universe from the reference pack

from kgeval.campaign.comparisons import terms
from kgeval.campaign.live import add_comparisons
from kgeval.campaign.simulate import offline, over_http
from kgeval.campaign.store import connect, create
from kgeval.data.kg import KnowledgeGraph
from kgeval.judgments.items import item_triples
from kgeval.pools.annotation import load_templates, question
from kgeval.sampling.plan import make_plan
from kgeval.sampling.problem import Problem
from kgeval.sampling.weights import pairs

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--systems", nargs=3, default=["ComplEx", "TuckER", "TransE"])
    ap.add_argument("--budget", type=float, default=600)
    ap.add_argument("--disagreement", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    u = universe()
    kg = KnowledgeGraph.load(ROOT / "resources/datasets/FB15k-237/kg.npz")
    pb = Problem(u.hidden_state(), u.truth, "P@k")
    p = u.out_of_fold_prior()
    ia, ib = pairs(len(u.systems))
    want = [u.systems.index(s) for s in a.systems]
    cols = np.flatnonzero(np.isin(ia, want) & np.isin(ib, want))
    plan = make_plan(pb, p, u.systems, cols, a.budget, seed=a.seed, metric="P")
    triples = item_triples(u.items, u.questions, plan.items)
    _, first, inverse = np.unique(triples, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    item_of = rank[inverse.ravel()]
    tmpl = load_templates(ROOT / "annotations/templates.tsv")
    sheet = triples[np.sort(first)]
    items = [{"batch": "sample-FB-Test-S-C", "sheet_item": str(i), "head_id": kg.entities[h],
              "relation": kg.relations[r], "tail_id": kg.entities[t], "head_name": kg.display_name(h),
              "tail_name": kg.display_name(t), "question": question(kg, (h, r, t), tmpl), "audit": 0}
             for i, (h, r, t) in enumerate(sheet.tolist(), start=1)]
    truth = np.zeros(len(items), np.int8)
    truth[item_of] = u.truth[plan.items]  # the published label of each triple (hidden from the plan)
    comps, c1, c0 = terms(pb, p, cols, plan.items, plan.pi, item_of, len(items), u.systems, "P@10")
    db = a.out / "campaign.db"
    db.unlink(missing_ok=True)
    create(db, items, {"title": "FB-Test-S-C oracle"})
    conn = connect(db)
    add_comparisons(conn, comps, c1, c0)
    prepared = time.perf_counter() - t0
    off = offline(conn, truth, a.disagreement, a.seed)
    conn.close()
    t0 = time.perf_counter()
    http = over_http(db, truth, a.disagreement, a.seed)
    wall = time.perf_counter() - t0
    y = np.array([[c["base"]] for c in comps]) + np.where(truth.astype(bool), c1, c0)
    rows = [{"A": c["a"], "B": c["b"], "true_delta": float(pb.true[j]), "final_delta": float(y[i].mean()),
             "decided_at_http": h["decided_at"], "decided_at_offline": o["decided_at"]}
            for i, (j, c, h, o) in enumerate(zip(cols, comps, http["comparisons"], off["comparisons"]))]
    print(json.dumps({"items": len(items), "units": int(plan.items.size), "relevant": int(truth.sum()),
                      "judgments_http": http["judgments"], "judgments_offline": off["judgments"],
                      "equal": http == off, "http_wall_s": round(wall, 1), "prepare_s": round(prepared, 1),
                      "pairs": rows}, indent=1))


if __name__ == "__main__":
    heartbeat_main(main, __file__)
