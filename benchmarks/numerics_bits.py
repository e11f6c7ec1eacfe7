"""Which settings decide the bits of a CPU computation: each kernel family hashed under each setting.

Runs one small workload per child process (the settings are read when MKL, oneDNN and ATen first dispatch, so
each needs a fresh process) and prints the SHA-256 prefix of every part's result:

* ``mkl``: a 20-step Adam training of a 14,541 x 200 embedding table scored 1-vs-all (``x @ E.T``: MKL's sgemm,
  the product every model in the study ends with);
* ``tucker``: TuckER's core-tensor products (a ``(200, 200*200)`` matrix times a batch: a tall-skinny sgemm);
* ``conv``: ConvE's ``conv2d`` (oneDNN) forward and backward;
* ``aten``: ATen's own vectorised kernels (softplus, logsumexp, sums over rows);
* ``numpy``: numpy's matrix product (OpenBLAS) and its exp/log ufuncs (numpy's SIMD dispatch).

Run it on each CPU kind and compare the printed hashes: a part whose hash is the same under a setting on every
kind is reproducible under that setting. ``--json FILE`` writes the table (with the CPU kind and MKL's branch in
force under each setting); ``--compare FILE`` prints, per setting, the parts whose hash differs from another
kind's file (``docs/dev/measured/numerics/bits_<kind>.json`` are the kinds' files the docs quote).

    python benchmarks/numerics_bits.py --json /tmp/bits.json --compare docs/dev/measured/numerics/bits_amd_epyc.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

SETTINGS: dict[str, dict[str, str]] = {
    "native": {},
    "MKL_CBWR=AVX2": {"MKL_CBWR": "AVX2"},
    "MKL_CBWR=AVX2,STRICT": {"MKL_CBWR": "AVX2,STRICT"},
    "MKL_CBWR=AVX512": {"MKL_CBWR": "AVX512"},
    "MKL_CBWR=COMPATIBLE,STRICT": {"MKL_CBWR": "COMPATIBLE,STRICT"},
    "ONEDNN_MAX_CPU_ISA=AVX512_CORE": {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
    "ONEDNN_MAX_CPU_ISA=AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2"},
    "ATEN_CPU_CAPABILITY=avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "OPENBLAS_CORETYPE=Haswell": {"OPENBLAS_CORETYPE": "Haswell"},
    "NPY_DISABLE_CPU_FEATURES=AVX512F...": {"NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512CD AVX512_SKX AVX512_CLX "
                                                                         "AVX512_CNL AVX512_ICL AVX512_SPR"},
    "NPY_DISABLE_CPU_FEATURES=AVX512_SPR": {"NPY_DISABLE_CPU_FEATURES": "AVX512_SPR"},
    "mode's variables at start": {"MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE",
                                  "OPENBLAS_CORETYPE": "Haswell"},
    "kgeval mode (set in-process)": {"KGEVAL_NUMERICS": "reproducible"},
    "kgeval portable mode (set in-process)": {"KGEVAL_NUMERICS": "portable"},
}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()[:12]


def workload() -> dict[str, str]:
    """The parts' hashes in this process (its environment decides the kernels)."""
    if os.environ.get("KGEVAL_NUMERICS"):
        import kgeval.numerics

        kgeval.numerics.apply()
    import numpy as np
    import torch

    torch.set_num_threads(2)
    torch.manual_seed(0)  # the layers' default initialisation (ConvE's bias) draws from the global generator
    out = {}
    g = torch.Generator().manual_seed(0)
    n, d = 14_541, 200
    emb = torch.nn.Parameter(torch.randn(n, d, generator=g) * 0.1)
    rel = torch.nn.Parameter(torch.randn(237, d, generator=g) * 0.1)
    opt = torch.optim.Adam([emb, rel], lr=1e-3)
    for _ in range(20):
        h = torch.randint(0, n, (128,), generator=g)
        r = torch.randint(0, 237, (128,), generator=g)
        t = torch.randint(0, n, (128,), generator=g)
        scores = (emb[h] * rel[r]) @ emb.T
        loss = torch.nn.functional.cross_entropy(scores, t)
        opt.zero_grad()
        loss.backward()
        opt.step()
    out["mkl"] = _digest(emb.detach().numpy())
    core = torch.randn(200, 200 * 200, generator=g) * 0.01
    x = torch.randn(512, 200, generator=g)
    out["tucker"] = _digest((x @ core).numpy(), (core.T @ x.T).numpy())
    conv = torch.nn.Conv2d(1, 32, 3)
    torch.nn.init.normal_(conv.weight, generator=g)
    img = torch.randn(128, 1, 20, 20, generator=g, requires_grad=True)
    y = conv(img)
    y.square().sum().backward()
    out["conv"] = _digest(y.detach().numpy(), img.grad.numpy(), conv.weight.grad.numpy())
    z = torch.randn(1024, 4096, generator=g)
    out["aten"] = _digest(torch.nn.functional.softplus(z).numpy(), torch.logsumexp(z, 1).numpy(),
                          z.exp().sum(1).numpy(), z.sum().reshape(1).numpy())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((600, 500)), rng.standard_normal((500, 700))
    v = rng.standard_normal(100_000) * 10
    out["numpy"] = _digest(a @ b, np.exp(v), np.log(np.abs(v) + 1), np.tanh(v))
    # after the work, MKL has read its branch; importing kgeval would pin the mode's variables (harmless now, but
    # a row that named no mode reads back what it ran)
    os.environ.setdefault("KGEVAL_NUMERICS", "native")
    from kgeval.numerics import mkl_branch

    out["mkl_branch"] = mkl_branch()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write the table to this file")
    ap.add_argument("--compare", help="another kind's --json file: print the parts that differ from it")
    args = ap.parse_args()
    other = json.load(open(args.compare)) if args.compare else None
    if args.child:
        print(json.dumps(workload()))
        return
    rows = {}
    for name, env in SETTINGS.items():
        child_env = {k: v for k, v in os.environ.items()
                     if k not in {"MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
                                  "KGEVAL_NUMERICS", "NPY_DISABLE_CPU_FEATURES",
                                  "OPENBLAS_CORETYPE"}}
        child_env.update(env)
        res = subprocess.run([sys.executable, __file__, "--child"], env=child_env, capture_output=True, text=True,
                             check=True)
        rows[name] = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"{name:40s} " + " ".join(f"{k}={v}" for k, v in rows[name].items()), flush=True)
    from kgeval.reproduce.environment import cpu_info

    cpu = cpu_info()
    if other is not None:
        print(f"against {args.compare} ({other.get('kind', other.get('cpu'))}), here {cpu['kind']}:")
        for name, row in rows.items():
            theirs = other["rows"].get(name)
            if theirs is None:
                print(f"{name:40s} not in {args.compare}")
                continue
            differ = [k for k in row if k != "mkl_branch" and k in theirs and row[k] != theirs[k]]
            print(f"{name:40s} " + (f"differ: {', '.join(differ)}" if differ else "the same bits")
                  + f"  (MKL {row.get('mkl_branch')} here, {theirs.get('mkl_branch', 'not recorded')} there)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cpu": cpu["model"], "kind": cpu["kind"], "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    if "--child" in sys.argv:  # a bare child: importing kgeval (_common does) would set the mode in it
        main()
    else:
        from _common import heartbeat_main

        heartbeat_main(main, __file__)
