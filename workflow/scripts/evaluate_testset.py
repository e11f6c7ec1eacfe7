from kgeval.metrics.steps import evaluate_testset
from kgeval.workflow import run_step

run_step(
    snakemake,
    evaluate_testset,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    evaluation_csv=snakemake.output.evaluation,
    per_category_csv=snakemake.output.per_category,
    per_question_out=snakemake.output.per_question,
    per_answer_out=snakemake.output.per_answer,
    measures=snakemake.params.measures,
)
