"""Unified metric framework (UMF; ``shared/papers/unified-metric-framework-slides.txt``, spec
``shared/specs/metric-families.md``): a rank transform f, class weights W and a weighted power mean M_p.

1. **Rank transform** f_α(x) = x^α. For α < 0 it is rescaled so that f(1) = 1 and f(|E|) = 0:

       f_α(x) = (x^α − 1)/(1 − |E|^α) + 1 = 1 − expm1(α ln x)/expm1(α ln |E|)   (evaluated in this form),

   with |E| the number of entities of the graph (``num_entities``), as the spec says — not the per-task N_i, so
   the worst rank of a filtered task (N_i < |E|) keeps a small positive value; ``worst="candidates"`` uses
   N_i instead (then f(N_i) = 0 for every task; a task with N_i = 1 gets f = 1). α = 0 is the continuous
   limit of the rescaled form, f_0(x) = 1 − ln x / ln |E| (x^0 ≡ 1 would be constant). α > 0 is the plain
   x^α, an MR-like transform where lower is better (``rescale=True`` rescales it too, giving f ∈ [0, 1] with
   f(1) = 1, f(|E|) = 0 for every α; ``rescale=False`` never rescales). α = −inf is the limit
   lim_{α→−∞} f_α = 𝟙[x ≤ 1] (Hits@1), and ``hits_k=k`` the step f = 𝟙[x ≤ k] (Hits@k).
2. **Class weights** over classes c of the answer entity (``classes``: one label per ranking task, e.g. the
   entity id or a frequency bin): w_c ∝ n_c^{1−β}, n_c the number of tasks of class c in the evaluated set
   (weighted counts with item weights). β = 0: ``"frequency"`` (w_c ∝ n_c, the micro average over tasks);
   β = 1: ``"uniform"`` (w_c = 1/#classes, macro by class); other β: ``"stratified"`` (Mohamed et al. 2020,
   the stratified metrics of the Knowledge Persistence paper's Table 6). ``classes=None``: one class.
3. **Aggregation**: M_p = (Σ_c w_c μ_c)^{1/p}, μ_c = (1/n_c) Σ_{i∈c} f(r_i)^p; p = 0 is the limit
   exp(Σ_c w_c (1/n_c) Σ_{i∈c} ln f(r_i)) (weighted geometric mean). M_p is increasing in every f value for
   every p, lies in [min f(r_i), max f(r_i)] (Lemma 1), so its range is f's whatever W and p, and its direction
   is f's. An f value of 0 gives M_p = 0 for p ≤ 0.

Where the usual metrics sit (tests/test_metric_families.py):

* α = −1, p = 1, frequency: UMF = (|E|·MRR − 1)/(|E| − 1), affine in MRR with constants depending only on
  |E| — same system ranking as MRR (``rescale=False``: exactly MRR);
* α = 1, p = 1, frequency: MR (unscaled); p = 0: GMR; p = −1: HMR; with ``rescale=True``, α = 1, p = 1:
  1 − (MR − 1)/(|E| − 1), the AMRI form with |E| in place of E[MR];
* ``hits_k=k``, p = 1, frequency: Hits@k; α → −∞: Hits@1; with p ≠ 1 a Hits-like (Hits@k)^{1/p};
* w_c ∝ n_c (β = 0) gives the frequency-weighted (micro) average over tasks whatever the classes;
  β = 1 the uniform (macro-by-class) average.

Null model: for p = 1 the metric is a fixed linear combination of the f(r_i) (the class weights depend on the
class counts only), so E and Var are exact finite sums over j ≤ N_i (``expected_value``/``variance``); for
p ≠ 1 there is no closed form and ``expectation_mc`` gives a seeded Monte-Carlo estimate with its standard
error.

Components (resampling): with β = 0 one column g(f(r_i)), g(x) = x^p (for 0 < |p| < 0.5 the shifted
x^p − 1 = expm1(p ln x), which keeps M_p = exp(ln(1 + Σ_c w_c(μ_c − 1))/p) accurate for small |p|), or ln x
for p = 0; otherwise 2K columns, 𝟙[i ∈ c]·g(f(r_i)) and 𝟙[i ∈ c] for the K classes present (their means are
n_c/n·g-means and n_c/n, so a resample re-derives its own n_c and class weights; a class absent from a
resample drops out). The dense
(n, 2K) matrix suits binned classes (a few dozen bins); with one class per entity use binned classes for
resampling, or the direct evaluation (``__call__`` uses sparse class sums).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy import sparse

from .kendall import tau_b
from .moments import NoClosedFormError
from .rank_based import RankBasedMetric

DEFAULT_ALPHAS: tuple[float, ...] = (-2.0, -1.0, -0.5, -0.25, -0.1, 0.0, 1.0)
DEFAULT_PS: tuple[float, ...] = (-1.0, 0.0, 0.5, 1.0, 2.0)
WEIGHTINGS = {"uniform": 1.0, "frequency": 0.0}


def _fmt(x: float) -> str:
    return f"{x:g}"


class UnifiedMetric(RankBasedMetric):
    """Unified metric M_p(f_α, W) (see the module docstring for f_α, W and M_p).

    Parameters: ``alpha`` (float, −inf allowed), ``p`` (power of the mean, 0 = geometric), ``weighting``
    (``"uniform"`` | ``"frequency"`` | ``"stratified"``), ``beta`` (for ``"stratified"``: w_c ∝ n_c^{1−β}),
    ``num_entities`` (|E|, needed by the rescaled transforms with ``worst="entities"``), ``hits_k`` (step
    transform 𝟙[x ≤ k] instead of f_α), ``rescale`` (None: as the spec, only α ≤ 0; True: every α; False: none),
    ``worst`` (``"entities"``: |E| as in the spec; ``"candidates"``: per-task N_i).

    Key (CSV-safe column suffix): ``umf_a<α>_p<p>_<weighting>``, e.g. ``umf_a-1_p1_uniform``,
    ``umf_a-0.5_p0_frequency``, ``umf_a-1_p1_strat0.5``, ``umf_h10_p1_uniform`` (step at 10); suffix ``_r`` for
    a rescaled α > 0, ``_ni`` for ``worst="candidates"``. Range: f's, [0, 1] for rescaled and step transforms
    (higher is better), [1, |E|^α] for an unscaled α > 0 (lower is better)."""

    name = "Unified metric"
    formula = "M_p(f, W) = (Σ_c w_c (1/n_c) Σ_{i∈c} f(r_i)^p)^{1/p}"
    family = "unified"
    citation = "Moon et al., unified metric framework (slides); Hoyt et al. (2022) for f and M_p"

    def __init__(self, alpha: float = -1.0, p: float = 1.0, weighting: str = "uniform", beta: float | None = None,
                 num_entities: int | None = None, hits_k: int | None = None, rescale: bool | None = None,
                 worst: str = "entities"):
        if weighting in WEIGHTINGS:
            if beta is not None and beta != WEIGHTINGS[weighting]:
                raise ValueError(f"weighting {weighting!r} means beta = {WEIGHTINGS[weighting]}")
            beta = WEIGHTINGS[weighting]
        elif weighting == "stratified":
            if beta is None:
                raise ValueError("stratified weighting needs beta")
        else:
            raise ValueError(f"unknown weighting {weighting!r}")
        if not np.isfinite(p):
            raise ValueError("p must be finite")
        if worst not in ("entities", "candidates"):
            raise ValueError("worst must be 'entities' or 'candidates'")
        if hits_k is not None and hits_k < 1:
            raise ValueError("hits_k must be positive")
        if alpha == 0 and rescale is False and hits_k is None:
            raise ValueError("alpha = 0 without rescaling is constant")
        self.alpha = float(alpha)
        self.p = float(p)
        self.weighting = weighting
        self.beta = float(beta)
        self.num_entities = None if num_entities is None else int(num_entities)
        self.hits_k = None if hits_k is None else int(hits_k)
        self.worst = worst
        if self.hits_k is not None or np.isneginf(self.alpha):
            self.rescaled = False
        elif rescale is None:
            self.rescaled = self.alpha <= 0
        else:
            self.rescaled = bool(rescale) or self.alpha == 0
        if self.rescaled and worst == "entities" and self.num_entities is None:
            raise ValueError("a rescaled transform needs num_entities (|E|)")

    # -- description ----------------------------------------------------------------------------------------
    @property
    def is_step(self) -> bool:
        return self.hits_k is not None or np.isneginf(self.alpha)

    @property
    def increasing(self) -> bool:  # type: ignore[override]
        return self.is_step or self.rescaled or self.alpha < 0

    @property
    def value_range(self) -> tuple[float, float]:  # type: ignore[override]
        if self.increasing:
            return (0.0, 1.0)
        top = float(self.num_entities) ** self.alpha if self.num_entities else float("inf")
        return (1.0, top)

    @property
    def is_item_mean(self) -> bool:  # type: ignore[override]
        return self.p == 1.0 and self.beta == 0.0

    @property
    def weighting_label(self) -> str:
        return f"strat{_fmt(self.beta)}" if self.weighting == "stratified" else self.weighting

    @property
    def key(self) -> str:  # type: ignore[override]
        if self.hits_k is not None:
            t = f"h{self.hits_k}"
        else:
            t = f"a{_fmt(self.alpha)}" + ("_r" if self.rescaled and self.alpha > 0 else "")
        suffix = "_ni" if (self.worst == "candidates" and self.rescaled) else ""
        return f"umf_{t}_p{_fmt(self.p)}_{self.weighting_label}{suffix}"

    def __repr__(self) -> str:
        return (f"UnifiedMetric(alpha={self.alpha:g}, p={self.p:g}, weighting={self.weighting!r}, "
                f"beta={self.beta:g}, num_entities={self.num_entities}, hits_k={self.hits_k}, "
                f"rescale={self.rescaled}, worst={self.worst!r})")

    # -- rank transform ------------------------------------------------------------------------------------
    def _worst(self, num_candidates, shape) -> np.ndarray | float:
        if self.worst == "candidates":
            if num_candidates is None:
                raise ValueError("worst='candidates' needs num_candidates")
            return np.broadcast_to(np.asarray(num_candidates, dtype=np.float64), shape)
        return float(self.num_entities)

    def _affine_basis(self, x: np.ndarray, num_candidates=None):
        """f(x) = A + u(x)/C with u a transform of x alone: (A, C, u) (A, C scalars or per-task arrays).

        Rescaled: A = 1, u = expm1(α ln x) (ln x for α = 0), C = −expm1(α ln W) (−ln W), so f(W) = 1 − 1 = 0
        exactly; a task with W = 1 gets C = inf and f = 1."""
        if self.is_step:
            k = 1 if self.hits_k is None else self.hits_k
            return 0.0, 1.0, (x <= k).astype(np.float64)
        if not self.rescaled:
            return 0.0, 1.0, x ** self.alpha
        W = self._worst(num_candidates, x.shape[-1:])
        return 1.0, self._scale(W), (np.log(x) if self.alpha == 0 else np.expm1(self.alpha * np.log(x)))

    def _scale(self, W) -> np.ndarray:
        W = np.asarray(W, dtype=np.float64)
        C = -np.log(W) if self.alpha == 0 else -np.expm1(self.alpha * np.log(W))
        return np.where(W > 1, C, np.inf)

    def transform(self, ranks, num_candidates=None) -> np.ndarray:
        """f(r_i) (the rank transform), elementwise over ranks (..., n)."""
        x = np.asarray(ranks, dtype=np.float64)
        if (x < 1).any():
            raise ValueError("ranks must be ≥ 1")
        if self.rescaled and not self.is_step:
            W = self._worst(num_candidates, x.shape[-1:])
            if (x > W).any():
                raise ValueError("a rank exceeds the worst rank of the rescaled transform (|E| or N_i)")
        A, C, u = self._affine_basis(x, num_candidates)
        f = A + u / C
        if self.rescaled:
            f = np.clip(f, 0.0, 1.0)
        return f

    @property
    def _shifted(self) -> bool:
        return self.p != 0 and abs(self.p) < 0.5

    def _g(self, f: np.ndarray) -> np.ndarray:
        """Per-item power: ln f for p = 0; f^p − 1 = expm1(p ln f) for 0 < |p| < 0.5 (the shift keeps the
        precision that (·)^{1/p} would amplify for small |p|; the class means are then μ_c − 1); f^p otherwise
        (where the shift would cost the absolute precision of μ_c near 0)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.p == 0:
                return np.log(f)
            if self._shifted:
                return np.expm1(self.p * np.log(f))
            return f ** self.p

    def _h(self, agg: np.ndarray) -> np.ndarray:
        """M_p from agg = Σ_c w_c μ_c (Σ_c w_c (μ_c − 1) when shifted; the weighted mean log for p = 0)."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if self.p == 0:
                return np.exp(agg)
            if self._shifted:  # agg ≥ −1 in exact arithmetic (clipped against rounding)
                return np.exp(np.log1p(np.maximum(agg, -1.0)) / self.p)
            return np.maximum(agg, 0.0) ** (1.0 / self.p)

    # -- values ----------------------------------------------------------------------------------------------
    def item_values(self, ranks, num_candidates=None):
        if not self.is_item_mean:
            raise NotImplementedError(f"{self.key} is not an arithmetic mean of per-item values (p ≠ 1 or "
                                      "class weighting): use components/combine")
        return self.transform(ranks, num_candidates)

    @staticmethod
    def _codes(classes, n: int) -> tuple[np.ndarray, int]:
        if classes is None:
            return np.zeros(n, np.int64), 1
        c = np.asarray(classes)
        if c.shape != (n,):
            raise ValueError(f"classes must have one label per ranking task ({n})")
        _, codes = np.unique(c, return_inverse=True)
        return codes.reshape(-1), int(codes.max()) + 1 if n else 0

    def components(self, ranks, num_candidates=None, classes=None):
        g = self._g(self.transform(ranks, num_candidates))
        if self.beta == 0.0:
            return g[..., None]
        codes, K = self._codes(classes, g.shape[-1])
        onehot = codes[:, None] == np.arange(K)[None, :]  # (n, K)
        return np.concatenate([np.where(onehot, g[..., None], 0.0),
                               np.broadcast_to(onehot.astype(np.float64), g.shape + (K,))], -1)

    def class_weights(self, counts: np.ndarray) -> np.ndarray:
        """w_c ∝ n_c^{1−β} over the classes with n_c > 0 (normalised; 0 for absent classes)."""
        counts = np.asarray(counts, dtype=np.float64)
        present = counts > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(present, np.abs(counts) ** (1.0 - self.beta), 0.0)
        return w / w.sum(-1, keepdims=True)

    def combine(self, means, n=None):
        m = np.asarray(means, dtype=np.float64)
        if self.beta == 0.0:
            return self._h(m[..., 0])
        K = m.shape[-1] // 2
        S, cnt = m[..., :K], m[..., K:]
        w = self.class_weights(cnt)
        with np.errstate(divide="ignore", invalid="ignore"):
            mu = S / cnt
            agg = np.sum(np.where(w > 0, w * mu, 0.0), -1)
        return self._h(agg)

    def _class_sums(self, g: np.ndarray, codes: np.ndarray, K: int, w: np.ndarray) -> np.ndarray:
        """Column means of the (n, 2K) components without building them: g (S, n) → (S, 2K)."""
        n = codes.size
        M = sparse.csr_matrix((w, (np.arange(n), codes)), shape=(n, K))
        P = sparse.csr_matrix(((w > 0).astype(np.float64), (np.arange(n), codes)), shape=(n, K))
        finite = np.isfinite(g)
        sums = np.asarray((M.T @ np.where(finite, g, 0.0).T).T)
        if not finite.all():
            pos = np.asarray((P.T @ np.isposinf(g).T.astype(np.float64)).T) > 0
            neg = np.asarray((P.T @ np.isneginf(g).T.astype(np.float64)).T) > 0
            sums = np.where(pos, np.inf, np.where(neg, -np.inf, sums))
            sums = np.where(pos & neg, np.nan, sums)
        cnt = np.broadcast_to(np.bincount(codes, weights=w, minlength=K), sums.shape)
        total = w.sum()
        return np.concatenate([sums / total, cnt / total], -1)

    def _from_components(self, ranks, num_candidates, weights, classes=None):
        x = np.asarray(ranks, dtype=np.float64)
        n = x.shape[-1]
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        g = self._g(self.transform(x, num_candidates))
        if self.beta == 0.0:
            codes, K = np.zeros(n, np.int64), 1
            means = self._class_sums(np.atleast_2d(g), codes, K, w)[..., :1]
        else:
            codes, K = self._codes(classes, n)
            means = self._class_sums(np.atleast_2d(g), codes, K, w)
        out = self.combine(means)
        return out if x.ndim > 1 else out[0]

    def _mc_cost(self, num_candidates, **kwargs) -> int:
        return 2

    def __call__(self, ranks, num_candidates=None, weights=None, classes=None):
        if len(ranks) == 0:
            return float("nan")
        return float(self._from_components(ranks, num_candidates, weights, classes))

    # -- null model (p = 1: exact) ------------------------------------------------------------------------
    def item_weights(self, n: int, weights=None, classes=None) -> np.ndarray:
        """ω_i with M_1 = Σ_i ω_i f(r_i): ω_i = w_i · w_c(i) / n_c(i) (normalised item weights)."""
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
        codes, K = self._codes(classes, n) if self.beta != 0.0 else (np.zeros(n, np.int64), 1)
        cnt = np.bincount(codes, weights=w, minlength=K)
        wc = self.class_weights(cnt)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(cnt[codes] > 0, w * wc[codes] / cnt[codes], 0.0)

    def item_moments(self, num_candidates) -> tuple[np.ndarray, np.ndarray]:
        """E[f(r_i)] and Var[f(r_i)] for r_i ~ U{1..N_i}: exact finite sums (cumulative sums up to max N_i)."""
        N = np.asarray(num_candidates, dtype=np.int64)
        if (N < 1).any():
            raise ValueError("num_candidates must be ≥ 1")
        j = np.arange(1, N.max() + 1, dtype=np.float64)
        if self.rescaled and self.worst == "candidates":  # f = 1 + u(j)/C_i, C_i from N_i
            A, C = 1.0, self._scale(N)
            u = np.log(j) if self.alpha == 0 else np.expm1(self.alpha * np.log(j))
        else:
            if self.rescaled and N.max() > self.num_entities:
                raise ValueError("num_candidates exceed num_entities")
            A, C, u = self._affine_basis(j, None)
        u = np.asarray(u).reshape(-1)
        c1, c2 = np.cumsum(u), np.cumsum(u * u)
        e1, e2 = c1[N - 1] / N, c2[N - 1] / N
        C = np.asarray(C, dtype=np.float64)
        return A + e1 / C, np.maximum(e2 - e1 * e1, 0.0) / C ** 2

    def _check_closed(self):
        if self.p != 1.0:
            raise NoClosedFormError(f"{self.key}: no closed form for p ≠ 1, use expectation_mc / variance_mc")

    def expected_value(self, num_candidates, weights=None, classes=None):
        self._check_closed()
        E, _ = self.item_moments(num_candidates)
        return float(np.sum(self.item_weights(E.size, weights, classes) * E))

    def variance(self, num_candidates, weights=None, classes=None):
        self._check_closed()
        _, V = self.item_moments(num_candidates)
        return float(np.sum(self.item_weights(V.size, weights, classes) ** 2 * V))


# -- grids ------------------------------------------------------------------------------------------------
def _weighting_args(weighting) -> dict:
    if isinstance(weighting, str):
        return {"weighting": weighting}
    return {"weighting": "stratified", "beta": float(weighting)}


def umf_grid(ranks, num_entities: int, classes=None, num_candidates=None, weights=None,
             alphas: Iterable[float] = DEFAULT_ALPHAS, ps: Iterable[float] = DEFAULT_PS,
             weightings: Iterable = ("uniform", "frequency"), **kwargs) -> pd.DataFrame:
    """The unified metric of one system over a grid of α × p × weighting (a weighting is ``"uniform"``,
    ``"frequency"`` or a number β for the stratified w_c ∝ n_c^{1−β}).

    Returns a tidy frame: alpha, p, weighting, key, increasing, value."""
    rows = []
    for wt in weightings:
        for a in alphas:
            for p in ps:
                m = UnifiedMetric(alpha=a, p=p, num_entities=num_entities, **_weighting_args(wt), **kwargs)
                rows.append({"alpha": float(a), "p": float(p), "weighting": m.weighting_label, "key": m.key,
                             "increasing": m.increasing,
                             "value": m(ranks, num_candidates, weights, classes=classes)})
    return pd.DataFrame(rows)


def umf_grid_systems(ranks_by_system: Mapping[str, np.ndarray], num_entities: int, classes=None,
                     num_candidates=None, weights=None, **kwargs) -> pd.DataFrame:
    """``umf_grid`` for several systems on the same ranking tasks (shared ``classes``/``num_candidates``, or
    a mapping system → array for each); adds a ``system`` column."""
    def pick(x, s):
        return x[s] if isinstance(x, Mapping) else x

    frames = [umf_grid(r, num_entities, pick(classes, s), pick(num_candidates, s), pick(weights, s), **kwargs)
              .assign(system=s) for s, r in ranks_by_system.items()]
    df = pd.concat(frames, ignore_index=True)
    return df[["system"] + [c for c in df.columns if c != "system"]]


def _system_vectors(grid: pd.DataFrame) -> dict[tuple[str, float, float], tuple[np.ndarray, bool]]:
    systems = sorted(grid["system"].unique())
    out = {}
    for (wt, a, p), g in grid.groupby(["weighting", "alpha", "p"], sort=True):
        v = g.set_index("system")["value"].reindex(systems).to_numpy(dtype=float)
        inc = bool(g["increasing"].iloc[0]) if "increasing" in g else True
        out[(wt, float(a), float(p))] = (v, inc)
    return out


def ranking_sensitivity(values_by_system_grid: pd.DataFrame) -> pd.DataFrame:
    """Kendall τ-b between the system rankings at neighbouring grid points, for a heat map.

    Input: the tidy frame of ``umf_grid_systems`` (system, alpha, p, weighting, value[, increasing]). For each
    weighting and grid point, τ to the next α (same p; ``axis="alpha"``) and to the next p (same α;
    ``axis="p"``), plus τ between the weightings at the same (α, p) (``axis="weighting"``, against the first
    weighting in sorted order). Directions are taken into account (an unscaled α > 0 is lower-is-better).
    Returns: weighting, axis, alpha, p, alpha_next, p_next, weighting_next, tau."""
    vec = _system_vectors(values_by_system_grid)
    rows = []
    weightings = sorted({k[0] for k in vec})
    for wt in weightings:
        pts = [k for k in vec if k[0] == wt]
        alphas = sorted({k[1] for k in pts})
        ps = sorted({k[2] for k in pts})
        for a in alphas:
            for p in ps:
                if (wt, a, p) not in vec:
                    continue
                x, ix = vec[(wt, a, p)]
                nexts = []
                if alphas.index(a) + 1 < len(alphas):
                    nexts.append(("alpha", (wt, alphas[alphas.index(a) + 1], p)))
                if ps.index(p) + 1 < len(ps):
                    nexts.append(("p", (wt, a, ps[ps.index(p) + 1])))
                if wt != weightings[0]:
                    nexts.append(("weighting", (weightings[0], a, p)))
                for axis, nk in nexts:
                    if nk not in vec:
                        continue
                    y, iy = vec[nk]
                    rows.append({"weighting": wt, "axis": axis, "alpha": a, "p": p, "alpha_next": nk[1],
                                 "p_next": nk[2], "weighting_next": nk[0], "tau": tau_b(x, y, ix, iy)})
    return pd.DataFrame(rows, columns=["weighting", "axis", "alpha", "p", "alpha_next", "p_next",
                                       "weighting_next", "tau"])


def ranking_vs_reference(values_by_system_grid: pd.DataFrame, alpha: float = -1.0, p: float = 1.0,
                         weighting: str = "frequency") -> pd.DataFrame:
    """τ-b between the system ranking at every grid point and at a reference point (default α = −1, p = 1,
    frequency: the MRR ranking). Returns: weighting, alpha, p, tau."""
    vec = _system_vectors(values_by_system_grid)
    y, iy = vec[(weighting, float(alpha), float(p))]
    rows = [{"weighting": k[0], "alpha": k[1], "p": k[2], "tau": tau_b(x, y, ix, iy)} for k, (x, ix) in vec.items()]
    return pd.DataFrame(rows, columns=["weighting", "alpha", "p", "tau"])
