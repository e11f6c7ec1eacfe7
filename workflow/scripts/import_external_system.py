from kgeval.external.steps import import_system
from kgeval.workflow import run_step

run_step(
    snakemake,
    import_system,
    name=snakemake.wildcards.model,
    spec=dict(snakemake.params.spec),
    kg_path=snakemake.input.kg,
    testset_path=snakemake.input.judgments,
    questions_path=snakemake.input.questions,
    out=snakemake.output.dump,
    testset_name=snakemake.wildcards.testset,
    k=snakemake.params.k,
    memory_budget_mb=snakemake.params.memory_budget_mb,
)
