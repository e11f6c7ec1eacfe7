from kgeval.kp.steps import early_stopping_model_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    early_stopping_model_step,
    selection=snakemake.input.selection,
    seed_models=list(snakemake.input.seed_models),
    kg_path=snakemake.input.kg,
    snapshot_root=snakemake.params.snapshot_root,
    out=snakemake.output.checkpoints,
    model_name=snakemake.wildcards.model,
    splits=list(snakemake.params.splits),
    test_mrr=snakemake.params.test_mrr,
    memory_budget_mb=snakemake.params.memory_budget_mb,
    compile=snakemake.params.compile,
    **snakemake.params.kp,
)
