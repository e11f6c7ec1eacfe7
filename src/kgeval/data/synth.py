"""A seeded synthetic knowledge graph with planted structure, laid out like the published resources.

Entities have a type and a latent vector z_e; relation r links its domain type to its range type, and its true
pairs follow a bilinear plausibility s_r(h, t) = sum(z_h * w_r * z_t), so embedding models can learn them:
- N-N: the pairs above a quantile of s_r; N-1: each head's best tail; 1-N: each tail's best head;
  1-1: a greedy one-to-one matching by decreasing s_r. Each relation has one category, by construction.
A share of the true triples is observed and split into train/valid/test; the rest stay hidden, as the
unlabelled positives of a real KG. A sampled subset of the test split plays FB-Test-S; six simulated pooling
systems (s_r plus noise) pool the top-10 candidates of its questions, and every pooled triple is judged against
the planted truth (Y if true, N otherwise), which gives ``annotations.txt`` and ``pooling_depth.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import atomic_open
from .kg import CATEGORIES
from .tsv import write_columns, write_rows

ROLE_FILES = {
    "train": "train.txt", "valid": "valid.txt", "test": "test.txt", "names": "mid2name.txt",
    "categories": "type_information", "relation_types": "type_information/relation_specific.txt",
    "entity_types": "entity_types.txt", "sample_idxs": "sample_idxs.txt", "samples": "samples.txt",
    "annotations": "annotations.txt", "pooling_depth": "pooling_depth.txt",
}


@dataclass
class SynthSpec:
    num_entities: int = 250
    num_relations: int = 16
    num_types: int = 4
    dim: int = 6
    observed: float = 0.7
    valid_share: float = 0.1
    test_share: float = 0.15
    sample_share: float = 0.4
    pool_depth: int = 10
    pool_systems: int = 6
    pool_noise: float = 1.0
    annotations: bool = True
    nn_quantile: float = 0.85


#: the most memory one synthetic graph may take; beyond it the generator would swap or be killed
MEMORY_LIMIT = 8 << 30


def memory_bytes(spec: SynthSpec) -> int:
    """About the peak memory of :func:`synthesize`: one relation's plausibility matrix between two entity types
    (float64, with the sort of a one-to-one relation and the quantile's copy beside it, three such matrices), and
    the pooling's per-candidate arrays."""
    per_type = -(-spec.num_entities // spec.num_types)
    return 3 * 8 * per_type * per_type + 64 * spec.num_entities * spec.pool_systems


def check_size(spec: SynthSpec, limit: int = MEMORY_LIMIT) -> None:
    """Refuse sizes whose generation would need more than ``limit`` bytes, naming the need and the way out."""
    from ..errors import KgevalError

    need = memory_bytes(spec)
    if need > limit:
        raise KgevalError(f"synth: {spec.num_entities:,} entities in {spec.num_types} types need about "
                          f"{need / 2**30:.1f} GiB for one relation's score matrix (more than the {limit / 2**30:.0f} "
                          "GiB kgeval allows): use fewer entities or more types")


def _true_pairs(rng, score: np.ndarray, category: str, nn_quantile: float) -> tuple[np.ndarray, np.ndarray]:
    """The planted pairs of one relation as (domain rows, range columns) of ``score``."""
    nd, nr = score.shape
    if category == "many_to_many":
        cut = np.quantile(score, nn_quantile)
        return np.nonzero(score >= cut)
    if category == "many_to_one":  # each (participating) head has exactly one tail
        heads = rng.choice(nd, size=max(2, nd // 2), replace=False)
        return heads, score[heads].argmax(1)
    if category == "one_to_many":  # each (participating) tail has exactly one head
        tails = rng.choice(nr, size=max(2, nr // 2), replace=False)
        return score[:, tails].argmax(0), tails
    order = np.argsort(-score, axis=None)
    used_h, used_t, pairs = set(), set(), []
    limit = max(2, min(nd, nr) // 2)
    for flat in order.tolist():
        h, t = divmod(flat, nr)
        if h in used_h or t in used_t:
            continue
        used_h.add(h)
        used_t.add(t)
        pairs.append((h, t))
        if len(pairs) >= limit:
            break
    hs, ts = np.array(pairs, np.int64).reshape(-1, 2).T
    return hs, ts


class _TripleKeys:
    """Triples (h, r, t) as one int64 each, ordered as the tuples are: ``(h * R + r) * N + t``."""

    def __init__(self, num_entities: int, num_relations: int):
        self.n, self.r = num_entities, num_relations

    def of(self, h, r, t) -> np.ndarray:
        return (np.asarray(h, np.int64) * self.r + r) * self.n + t

    def sorted(self, triples: np.ndarray) -> np.ndarray:
        return np.unique(self.of(triples[:, 0], triples[:, 1], triples[:, 2]))

    def triples(self, keys: np.ndarray) -> np.ndarray:
        hr, t = np.divmod(keys, self.n)
        h, r = np.divmod(hr, self.r)
        return np.stack([h, r, t], 1)


#: candidates scored at once while pooling (questions x entities), which bounds the pooling's memory
POOL_BLOCK = 1 << 22


def _pool_side(sample: np.ndarray, side: int, noisy: np.ndarray, etype: np.ndarray, want_type: np.ndarray,
               w: np.ndarray, in_kg: np.ndarray, filtered: _KeySet, keys: _TripleKeys, depth: int,
               spec: SynthSpec) -> tuple[np.ndarray, np.ndarray]:
    """One simulated system's top ``pool_depth`` candidates of every sample question on one side (0: the head
    is asked, 1: the tail), as ``(triple keys, ranks)``; a rank counts the candidates in the graph that are not
    the macro filter's known answers (test answers count).

    A candidate's score is ``noisy[c] . (w_r * noisy[anchor])`` (``w``: each question's relation weights), less
    1e3 outside the relation's domain (range) ``want_type`` for a typed system, and -inf outside the graph;
    candidates come in stable order of decreasing score, the first ``depth`` of them (:func:`_pool_depth`).
    """
    n = len(noisy)
    h, r, t = sample[:, 0], sample[:, 1], sample[:, 2]
    anchor = t if side == 0 else h
    out_keys, out_ranks = [], []
    step = max(1, POOL_BLOCK // max(n, 1))
    for lo in range(0, len(sample), step):
        sl = slice(lo, lo + step)
        v = w[sl] * noisy[anchor[sl]]
        sc = v @ noisy.T  # one product for a block of questions, not one per question
        np.subtract(sc, 1e3, out=sc, where=etype[None, :] != want_type[sl, None])  # a typed system prefers the
        # domain (range); in place, not by a boolean index's gather and scatter
        sc[:, ~in_kg] = -np.inf
        order = _top_columns(sc, depth)
        cand = keys.of(order, r[sl, None], t[sl, None]) if side == 0 else keys.of(h[sl, None], r[sl, None], order)
        # ranks count macro-filter candidates (test answers included): the filter's answers and entities outside
        # the graph are skipped
        ok = in_kg[order] & ~filtered.has(cand)
        rank = np.cumsum(ok, axis=1)
        take = ok & (rank <= spec.pool_depth)
        out_keys.append(cand[take])
        out_ranks.append(rank[take])
    return (np.concatenate(out_keys) if out_keys else np.zeros(0, np.int64),
            np.concatenate(out_ranks) if out_ranks else np.zeros(0, np.int64))


def _relation_weights(r: np.ndarray, seed: int, dim: int) -> np.ndarray:
    """The pooling systems' weights of each relation in ``r`` (one row per entry), each relation's from its own
    seeded stream (drawn once per relation, shared by every system and side)."""
    rels, which = np.unique(r, return_inverse=True)
    return np.stack([np.random.default_rng([seed, 1000 + int(x)]).normal(size=dim) for x in rels])[which]


def _pool_depth(sample: np.ndarray, side: int, filtered: np.ndarray, keys: _TripleKeys, spec: SynthSpec) -> int:
    """The candidates to take per question: the top pool_depth lie within the first pool_depth + (most filter
    answers of one question) candidates (the same for every system: computed once per side)."""
    fh, fr, ft = keys.triples(filtered).T
    asked = np.unique(fr * keys.n + (ft if side == 0 else fh), return_counts=True)[1]
    return min(keys.n, spec.pool_depth + int(asked.max(initial=0)))


def _top_columns(sc: np.ndarray, depth: int) -> np.ndarray:
    """The first ``depth`` columns of each row's stable descending sort, without sorting whole rows: the depth
    largest by partition, then sorted by (score descending, column). Equal to the full stable sort wherever the
    depth-th and the next finite score differ (scores carry continuous noise; -inf cells, outside the graph, are
    dropped by the caller whichever are taken)."""
    if depth >= sc.shape[1]:
        return np.argsort(-sc, axis=1, kind="stable")
    part = np.argpartition(-sc, depth - 1, axis=1)[:, :depth]
    o = np.lexsort((part, -np.take_along_axis(sc, part, 1)), axis=1)
    return np.take_along_axis(part, o, 1)


class _KeySet:
    """A sorted array of int64 keys with a membership test that binary-searches only the values a hashed table
    (2^24 one-byte slots, 16 MB; about 6 % of absent values pass it with a million keys) cannot rule out: with
    thousands of relations the pooling tests tens of millions of candidates against a million filter keys, and a
    binary search per candidate was a quarter of ``synth --relations 10000``'s time."""

    BITS = 24

    def __init__(self, sorted_keys: np.ndarray):
        self.keys = np.asarray(sorted_keys, np.int64)
        self.table = np.zeros(1 << self.BITS, bool)
        self.table[self._slot(self.keys)] = True

    def _slot(self, values: np.ndarray) -> np.ndarray:
        mixed = np.asarray(values, np.int64).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # wraps: a hash
        return (mixed >> np.uint64(64 - self.BITS)).astype(np.intp)

    def has(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, np.int64)
        out = np.zeros(values.shape, bool)
        if not len(self.keys):
            return out
        maybe = self.table[self._slot(values)]
        v = values[maybe]
        pos = np.minimum(np.searchsorted(self.keys, v), len(self.keys) - 1)
        out[maybe] = self.keys[pos] == v
        return out


def synthesize(out_dir: str | Path, seed: int = 0, spec: SynthSpec | None = None) -> dict[str, Path]:
    """Write a synthetic dataset into ``out_dir``; return the path of each role file."""
    spec = spec or SynthSpec()
    check_size(spec)
    rng = np.random.default_rng(seed)
    out = Path(out_dir)
    n, T = spec.num_entities, spec.num_types
    etype = rng.integers(0, T, size=n)
    etype[:T] = np.arange(T)  # every type is inhabited
    z = rng.normal(size=(n, spec.dim))
    entities = [f"/s/e{i:05d}" for i in range(n)]
    members = [np.flatnonzero(etype == k) for k in range(T)]

    relations, rel_cat, rel_dom, rel_rng, all_true = [], [], [], [], []
    keys = _TripleKeys(n, spec.num_relations)
    for r in range(spec.num_relations):
        cat = CATEGORIES[r % 4]
        dom, ran = int(rng.integers(T)), int(rng.integers(T))
        w = rng.normal(size=spec.dim)
        dom_e, ran_e = members[dom], members[ran]
        score = (z[dom_e] * w) @ z[ran_e].T
        name = f"/t{dom}/rel{r:02d}/t{ran}"
        relations.append(name)
        rel_cat.append(cat)
        rel_dom.append(f"/t{dom}")
        rel_rng.append(f"/t{ran}")
        hp, tp = _true_pairs(rng, score, cat, spec.nn_quantile)
        keep = dom_e[hp] != ran_e[tp]  # no self-loops
        all_true.append(keys.of(dom_e[hp[keep]], r, ran_e[tp[keep]]))
    # the distinct triples in (head, relation, tail) order: their keys sorted (as the tuples were, one by one)
    true_keys = np.unique(np.concatenate(all_true)) if all_true else np.zeros(0, np.int64)
    true = keys.triples(true_keys)
    true = true[rng.permutation(len(true))]
    n_obs = int(round(spec.observed * len(true)))
    observed = true[:n_obs]  # the rest stay hidden: unlabelled positives
    n_test = int(round(spec.test_share * n_obs))
    n_valid = int(round(spec.valid_share * n_obs))
    test, valid, train = observed[:n_test], observed[n_test:n_test + n_valid], observed[n_test + n_valid:]

    def named(arr):  # (head, relation, tail) name columns as lists of the names themselves (no copies): thousands
        # of relations give millions of rows
        return [[entities[i] for i in arr[:, 0].tolist()], [relations[i] for i in arr[:, 1].tolist()],
                [entities[i] for i in arr[:, 2].tolist()]]

    paths = {role: out / f for role, f in ROLE_FILES.items()}
    for split, arr in (("train", train), ("valid", valid), ("test", test)):
        write_columns(paths[split], named(arr))
    in_kg = np.zeros(n, bool)
    in_kg[observed[:, [0, 2]].ravel()] = True  # isolated entities do not exist in the KG
    write_rows(paths["names"], [(e, f"Type{etype[i]} entity {i}") for i, e in enumerate(entities) if in_kg[i]])
    write_rows(paths["entity_types"], [(e, f"/t{etype[i]}") for i, e in enumerate(entities) if in_kg[i]])
    for cat in CATEGORIES:
        write_rows(paths["categories"] / f"{cat}.txt", [(r,) for r, c in zip(relations, rel_cat) if c == cat])
    write_rows(paths["relation_types"], list(zip(relations, rel_dom, rel_rng)))
    if not spec.annotations:
        for role in ("sample_idxs", "samples", "annotations", "pooling_depth"):
            paths.pop(role)
        return paths

    if len(test) < 4:  # the sampled test set (FB-Test-S's role) draws four triples at least
        from ..errors import KgevalError

        raise KgevalError(f"synth: {spec.num_entities:,} entities and {spec.num_relations:,} relations left "
                          f"{len(test)} test triples, too few for the sampled and judged test sets (4 needed): "
                          "use more entities, or a spec without annotations")
    idx = np.sort(rng.choice(len(test), size=max(4, int(spec.sample_share * len(test))), replace=False))
    sample = test[idx]
    with atomic_open(paths["sample_idxs"]) as fh:
        fh.write("\n".join(str(i) for i in idx.tolist()) + "\n")
    write_columns(paths["samples"], named(sample))

    dom_t = np.array([int(d[2:]) for d in rel_dom])
    ran_t = np.array([int(t[2:]) for t in rel_rng])
    # the triples are distinct: their keys sorted are their sorted set (np.unique would hash them again)
    filtered = np.sort(keys.of(*np.concatenate([train, valid]).T))  # the macro filter
    known = _KeySet(np.sort(keys.of(*observed.T)))
    filter_set = _KeySet(filtered)
    w = _relation_weights(sample[:, 1], seed, spec.dim)
    depth = [_pool_depth(sample, side, filtered, keys, spec) for side in (0, 1)]
    want_type = [dom_t[sample[:, 1]], ran_t[sample[:, 1]]]
    found_keys, found_ranks = [], []
    for system in range(spec.pool_systems):
        noise_rng = np.random.default_rng([seed, system])
        noisy = z + spec.pool_noise * noise_rng.normal(size=z.shape) * (0.5 + system / spec.pool_systems)
        for side in (0, 1):  # 0: (?, r, t); 1: (h, r, ?)
            k, r = _pool_side(sample, side, noisy, etype, want_type[side], w, in_kg, filter_set, keys, depth[side],
                              spec)
            fresh = ~known.has(k)  # the pool holds candidates that are not known facts
            found_keys.append(k[fresh])
            found_ranks.append(r[fresh])
    # each pooled triple at its best (lowest) rank over the systems and sides, in (head, relation, tail) order
    found_keys, found_ranks = np.concatenate(found_keys), np.concatenate(found_ranks)
    by = np.lexsort((found_ranks, found_keys))
    first = np.ones(len(by), bool)
    first[1:] = found_keys[by][1:] != found_keys[by][:-1]
    pooled_keys, pooled_depth = found_keys[by][first], found_ranks[by][first]
    pooled = keys.triples(pooled_keys)
    is_true = _KeySet(true_keys).has(pooled_keys)
    judged = np.concatenate([sample, pooled])
    label = np.concatenate([np.full(len(sample), "Y"), np.where(is_true, "Y", "N")])
    perm = rng.permutation(len(judged))
    write_columns(paths["annotations"], [*named(judged[perm]), label[perm]])
    write_columns(paths["pooling_depth"], [*named(pooled), pooled_depth])
    return paths
