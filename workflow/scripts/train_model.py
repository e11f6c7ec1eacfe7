from kgeval.training.steps import train_seed
from kgeval.workflow import run_step

settings = snakemake.params.settings
run_step(
    snakemake,
    train_seed,
    kg_path=snakemake.input.kg,
    model_name=snakemake.wildcards.model,
    model_hparams=settings["model"],
    train=settings["train"],
    seed=int(snakemake.wildcards.seed),
    out=snakemake.output.model,
    work_dir=snakemake.params.work_dir,
    snapshot_dir=snakemake.params.snapshot_dir,
)
