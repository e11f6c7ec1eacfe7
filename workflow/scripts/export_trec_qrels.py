from kgeval.pools.steps import export_trec_qrels_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    export_trec_qrels_step,
    testset=snakemake.input.judgments,
    questions=snakemake.input.questions,
    kg_path=snakemake.input.kg,
    out=snakemake.output.qrels,
)
