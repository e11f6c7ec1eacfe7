from kgeval.training.steps import fetch_libkge
from kgeval.workflow import run_step

spec = snakemake.params.spec
run_step(
    snakemake,
    fetch_libkge,
    url=spec["url"],
    sha256=spec["sha256"],
    size=spec.get("bytes"),
    out=snakemake.output.checkpoint,
    mirror=snakemake.params.mirror,
    prefer_mirror=snakemake.params.prefer_mirror,
)
