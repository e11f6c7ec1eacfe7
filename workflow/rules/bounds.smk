# Bounds stage: what the existing judgments decide on a pooled test set at every pooling depth (published and
# rebuilt): exact per-system bounds, per-pair decisions and Kendall τ intervals under unjudged triples.


include: "helpers/bounds.smk"


rule bounds:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        seed=get_seed_testset,
        pool=POOL,
        annotations=get_pool_annotations,
    output:
        systems=report(
            "results/bounds/{testset}/systems.csv",
            caption="../report/bounds_systems.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        pairs=report(
            "results/bounds/{testset}/pairs.csv",
            caption="../report/bounds_pairs.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        tau=report(
            BOUNDS_TAU,
            caption="../report/bounds_tau.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        figure=report(
            "results/bounds/{testset}/tau.png",
            caption="../report/bounds_figure.rst",
            category="6. Beyond the paper",
            subcategory="Bounds under unjudged triples: {testset}",
        ),
        figure_pdf="results/bounds/{testset}/tau.pdf",
    log:
        "logs/bounds/{testset}.log",
    benchmark:
        "logs/benchmarks/bounds/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metrics=config["bounds"]["metrics"],
        milp_metrics=config["bounds"]["milp_metrics"],
        milp_time_limit=config["bounds"]["milp_time_limit"],
        milp_node_limit=config["bounds"]["milp_node_limit"],
        milp_depths=config["bounds"]["milp_depths"],
        max_depth=config["pooling"]["depth"],
        prefilter=config["pooling"]["prefilter"],
    script:
        "../scripts/bounds.py"


rule bounds_select:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
        templates=config["annotation"]["templates"],
    output:
        prior=report(
            "results/bounds/{testset}/prior_fit.csv",
            caption="../report/bounds_prior.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        reliability=report(
            "results/bounds/{testset}/prior_reliability.csv",
            caption="../report/bounds_reliability.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        pairs=report(
            "results/bounds/{testset}/pair_prob.csv",
            caption="../report/bounds_pair_prob.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        tau=report(
            BOUNDS_TAU_PRIOR,
            caption="../report/bounds_tau_prior.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        next=report(
            BOUNDS_NEXT,
            caption="../report/bounds_next.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        next_items=report(
            "results/bounds/{testset}/next_judgments.csv",
            caption="../report/bounds_next_items.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        counts=report(
            BOUNDS_COUNTS,
            caption="../report/bounds_counts.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
    log:
        "logs/bounds_select/{testset}.log",
    benchmark:
        "logs/benchmarks/bounds_select/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metrics=config["bounds"]["decide_metrics"],
        prior=config["bounds"]["prior"],
        folds=config["bounds"]["prior_folds"],
        draws=config["bounds"]["draws"],
        tau_draws=config["bounds"]["tau_draws"],
        count_draws=config["bounds"]["count_draws"],
        batch=config["bounds"]["selection_batch"],
        stop=config["bounds"]["stop"],
        seed=config["bounds"]["seed"],
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/bounds_select.py"


rule bounds_simulation:
    input:
        unpack(get_testset_dumps),
        kg=get_testset_kg,
    output:
        table=report(
            "results/bounds/{testset}/simulation.csv",
            caption="../report/bounds_simulation.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        summary=report(
            BOUNDS_SIMULATION_SUMMARY,
            caption="../report/bounds_simulation_summary.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        figure=report(
            "results/bounds/{testset}/simulation.png",
            caption="../report/bounds_simulation_figure.rst",
            category="6. Beyond the paper",
            subcategory="Fewest judgments that decide: {testset}",
        ),
        figure_pdf="results/bounds/{testset}/simulation.pdf",
    log:
        "logs/bounds_simulation/{testset}.log",
    benchmark:
        "logs/benchmarks/bounds_simulation/{testset}.tsv"
    wildcard_constraints:
        testset=alternatives(POOLED_SETS),
    conda:
        "../../envs/analysis.yaml"
    params:
        k=config["bounds"]["k"],
        rbp_p=config["bounds"]["rbp_p"],
        metrics=config["bounds"]["simulation_metrics"],
        prior=config["bounds"]["prior"],
        folds=config["bounds"]["prior_folds"],
        batch=config["bounds"]["simulation_batch"],
        draws=config["bounds"]["draws"],
        random_seeds=config["bounds"]["simulation_random_seeds"],
        seed=config["bounds"]["seed"],
        max_depth=config["pooling"]["depth"],
    script:
        "../scripts/bounds_simulation.py"


# the τ tables, the selection's next judgments and the simulation's summary (their rules write the other tables
# and the figures too); none when the stage is disabled
add_final_outputs(
    expand(BOUNDS_TAU, testset=POOLED_SETS)
    + expand(BOUNDS_NEXT, testset=POOLED_SETS)
    + (
        expand(BOUNDS_SIMULATION_SUMMARY, testset=POOLED_SETS)
        if config["bounds"]["simulation"]
        else []
    )
    if config["bounds"]["enabled"]
    else []
)
