# Sampling stage: decide system comparisons with a random sample of judgments drawn with known inclusion
# probabilities: the plan over the published judgments' unknowns and the simulation on the hidden published
# labels, on every pooled test set.


rule sampling_plan:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        templates=config["annotation"]["templates"],
    output:
        sheet=report(
            SAMPLING_PLAN,
            caption="../report/sampling_plan.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
        sidecar="results/sampling/{testset}/sampling_plan.csv",
        pairs=report(
            SAMPLING_BUDGETS,
            caption="../report/sampling_budgets.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
    log:
        "logs/sampling_plan/{testset}.log",
    benchmark:
        "logs/benchmarks/sampling_plan/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metric=config["sampling"]["plan_metric"],
        budget=config["sampling"]["budget"],
        design=config["sampling"]["design"],
        floor_share=config["sampling"]["floor_share"],
        level=config["sampling"]["level"],
        max_budget=config["sampling"]["max_budget"],
        against=config["sampling"]["against"],
        pair=config["sampling"]["pair"],
        prior=config["bounds"]["prior"],
        mc_draws=config["sampling"]["mc_draws"],
        judging=config["sampling"]["judging"],
        seed=config["sampling"]["seed"],
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/sampling_plan.py"


rule sampling_simulation:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
    output:
        table=report(
            "results/sampling/{testset}/sampling_simulation.csv",
            caption="../report/sampling_simulation.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
        sequence="results/sampling/{testset}/sampling_sequence.csv",
        vs_mtc=report(
            "results/sampling/{testset}/sampling_vs_mtc.csv",
            caption="../report/sampling_vs_mtc.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
        figure=report(
            SAMPLING_COVERAGE,
            caption="../report/sampling_coverage.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
        figure_pdf="results/sampling/{testset}/sampling_coverage.pdf",
    log:
        "logs/sampling_simulation/{testset}.log",
    benchmark:
        "logs/benchmarks/sampling_simulation/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metrics=config["sampling"]["simulation_metrics"],
        budgets=config["sampling"]["budgets"],
        reps=config["sampling"]["repetitions"],
        floor_share=config["sampling"]["floor_share"],
        shift=config["sampling"]["shift"],
        min_delta=config["sampling"]["min_delta"],
        level=config["sampling"]["level"],
        looks=config["sampling"]["looks"],
        sequence_reps=config["sampling"]["sequence_repetitions"],
        prior=config["bounds"]["prior"],
        folds=config["bounds"]["prior_folds"],
        mc_draws=config["sampling"]["mc_draws"],
        judging=config["sampling"]["judging"],
        seed=config["sampling"]["seed"],
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/sampling_simulation.py"


rule sampling_estimates:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        sidecar="results/sampling/{testset}/sampling_plan.csv",
        pairs=SAMPLING_BUDGETS,
        labels="annotations/sampling/{testset}.labels.txt",
    output:
        estimates="results/sampling/{testset}/estimates.csv",
        audit="results/sampling/{testset}/prior_audit.csv",
    log:
        "logs/sampling_estimates/{testset}.log",
    benchmark:
        "logs/benchmarks/sampling_estimates/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        level=config["sampling"]["level"],
        prior=config["bounds"]["prior"],
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/sampling_estimates.py"


rule sampling_priors:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
    output:
        calibration=report(
            "results/tables/{testset}/prior_calibration.csv",
            caption="../report/sampling_priors.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
        reliability="results/tables/{testset}/prior_reliability.csv",
        budgets=report(
            PRIOR_BUDGETS,
            caption="../report/sampling_priors.rst",
            category="6. Beyond the paper",
            subcategory="Sampled judgments: {testset}",
        ),
    log:
        "logs/sampling_priors/{testset}.log",
    benchmark:
        "logs/benchmarks/sampling_priors/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metrics=config["sampling"]["simulation_metrics"],
        folds=config["bounds"]["prior_folds"],
        mc_draws=config["sampling"]["mc_draws"],
        judging=config["sampling"]["judging"],
        design=config["sampling"]["design"],
        floor_share=config["sampling"]["floor_share"],
        level=config["sampling"]["level"],
        max_budget=config["sampling"]["max_budget"],
        seed=config["sampling"]["seed"],
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/sampling_priors.py"


add_final_outputs(
    expand(SAMPLING_PLAN, testset=POOLED_SETS)
    + expand(PRIOR_BUDGETS, testset=POOLED_SETS)
    + (
        expand(SAMPLING_COVERAGE, testset=POOLED_SETS)
        if config["sampling"]["simulation"]
        else []
    )
    if config["sampling"]["enabled"]
    else []
)
