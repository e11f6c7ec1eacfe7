"""The scale run's summary page (kgeval.scale.summary): hand-made tables give the rows and sentences written."""

from __future__ import annotations

import math

import pandas as pd

from kgeval.scale.summary import summary_step


def test_summary_of_hand_made_tables(tmp_path):
    exact = pd.DataFrame({"system": [0, 1], "metric": ["mrr", "mrr"], "value": [math.nan, math.nan],
                          "answers": [0, 0], "note": ["not computed: 1,000 test answers exceed exact_max_answers"] * 2})
    est = pd.DataFrame({"system": [0, 1], "metric": ["mrr", "mrr"], "estimate": [0.09, 0.02], "low": [0.08, 0.015],
                        "high": [0.1, 0.03], "n": [200, 200], "population": [1000, 1000]})
    neg = pd.DataFrame({"system": [0, 1], "mrr_full": [0.09, 0.02], "mrr_sampled": [0.5, 0.25],
                        "negatives": ["uniform:500"] * 2})
    paths = {k: tmp_path / f"{k}.csv" for k in ("exact", "estimates", "negatives")}
    for k, df in zip(paths, (exact, est, neg)):
        df.to_csv(paths[k], index=False)
    (tmp_path / "tau.json").write_text('{"tau": 1.0, "tau_interval_95": [1.0, 1.0]}')
    summary_step("wikikg2", *paths.values(), tmp_path / "tau.json", tmp_path / "summary.md")
    text = (tmp_path / "summary.md").read_text()
    assert "**system 0 is the best**" in text
    assert "| 0 (noise 0.2) | — | 0.0900 | [0.0800, 0.1000] | 0.0900 | 0.5000 |" in text
    assert "| 1 (noise 0.4) | — | 0.0200 | [0.0150, 0.0300] | 0.0200 | 0.2500 |" in text
    assert "Exact MRR not computed: 1,000 test answers exceed exact_max_answers." in text
    assert "Estimates from 200 sampled answers of 1,000." in text
    # 0.09 / 0.02 = 4.5 under full ranking, 0.5 / 0.25 = 2.0 sampled
    assert "τ = 1.00 [1.00, 1.00]" in text and "ratio shrinks from 4.5 (full ranking) to 2.0 (sampled)" in text
