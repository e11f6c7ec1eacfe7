"""The universe of the judgment stages (issue 50): per item the depth-0 state, the judging depth, the pooled and
hidden masks that bounds' selection and simulation and the sampling stage read, checked by enumeration against
the dump's judged rows (one dictionary look-up per item, no shared code with the vectorised build)."""

from __future__ import annotations

import numpy as np
from test_sampling_estimates import judged_plan

from kgeval.data.kg import HEAD
from kgeval.judgments.universe import from_dumps
from kgeval.scores.dumps import load_dump


def test_universe_states_by_enumeration(pooled, synth_kg, tmp_path):
    dumps, *_ = judged_plan(tmp_path, synth_kg, pooled[1], "P")
    max_depth = 3  # below the pool's deepest depth, so that some judged items count as never judged
    u = from_dumps(dumps, synth_kg, 5, max_depth)
    j = load_dump(dumps[sorted(dumps)[0]]).judged
    row = {(int(q), int(e)): (int(d), int(y)) for q, e, d, y in zip(j.q, j.entity, j.depth, j.label)}
    found = [row.get((int(q), int(e)), (None, None)) for q, e in zip(u.items.q, u.items.entity)]
    depth = np.array([d if d is not None and d <= max_depth else max_depth + 1 for d, _ in found])
    label = np.array([y if d is not None and d <= max_depth else -1 for d, y in found])
    zero = np.array([y if d == 0 else -1 for d, y in found])
    np.testing.assert_array_equal(u.depth, depth)
    np.testing.assert_array_equal(u.cand.state, label)
    np.testing.assert_array_equal(u.zero, zero)
    np.testing.assert_array_equal(u.pooled, (label >= 0) & (depth >= 1))
    np.testing.assert_array_equal(u.hidden, (zero == -1) & (label >= 0))
    assert u.pooled.any() and (zero >= 0).any() and (depth > max_depth).any()  # every case occurs
    # the values set once for the stages above: every item's triple and the candidates' pair order
    qs = load_dump(dumps[sorted(dumps)[0]]).questions
    triples = [(e, r, k) if s == HEAD else (k, r, e) for e, r, k, s in
               zip(u.items.entity, qs.relation[u.items.q], qs.entity[u.items.q], qs.side[u.items.q])]
    np.testing.assert_array_equal(u.triples, np.array(triples))
    a, b = u.cand.pairs
    assert [(int(x), int(y)) for x, y in zip(a, b)] == [(x, y) for x in range(len(u.systems))
                                                        for y in range(x + 1, len(u.systems))]
    assert (u.cand.n_systems, u.cand.n_items) == u.cand.ranks.shape
