from kgeval.data.steps import download_resource
from kgeval.workflow import run_step

run_step(
    snakemake,
    download_resource,
    manifest=snakemake.params.manifest,
    mirror_path=snakemake.wildcards.path,
    out=snakemake.output[0],
    mirror=snakemake.params.mirror,
    prefer_mirror=snakemake.params.prefer_mirror,
    timeout=snakemake.params.timeout,
)
