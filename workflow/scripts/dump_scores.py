from kgeval.scores.steps import dump_scores
from kgeval.workflow import run_step

run_step(
    snakemake,
    dump_scores,
    model_path=snakemake.input.model,
    kg_path=snakemake.input.kg,
    testset_path=snakemake.input.judgments,
    questions_path=snakemake.input.questions,
    out=snakemake.output.dump,
    model_name=snakemake.wildcards.model,
    testset_name=snakemake.wildcards.testset,
    k=snakemake.params.k,
    keep_scores=snakemake.params.keep_scores,
    memory_budget_mb=snakemake.params.memory_budget_mb,
    compile=snakemake.params.compile,
)
