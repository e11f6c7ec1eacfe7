from kgeval.analysis.steps import discrimination_step
from kgeval.workflow import run_step

settings = snakemake.params.settings
run_step(
    snakemake,
    discrimination_step,
    test_sets=snakemake.params.test_sets,
    out_pvalues=snakemake.output.pvalues,
    out_summary=snakemake.output.summary,
    png=snakemake.output.figure,
    pdf=snakemake.output.pdf,
    families_png=snakemake.output.families,
    families_pdf=snakemake.output.families_pdf,
    trials=settings["tukey_trials"],
    seed=settings["seed"],
    alpha=settings["alpha"],
)
