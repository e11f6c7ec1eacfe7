from kgeval.data.steps import extract_splits
from kgeval.workflow import run_step

run_step(
    snakemake,
    extract_splits,
    archive=snakemake.input.archive,
    out_dir=f"resources/datasets/{snakemake.wildcards.dataset}/splits",
    outputs=dict(snakemake.output.items()),
)
