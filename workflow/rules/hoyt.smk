# Hoyt et al. (2022)'s case study (Figure 1, Table 3, the null moments of each metric) and the unified metric
# framework's property analyses (FOTR, size invariance, long tail). Logic: kgeval.analysis.case_study,
# kgeval.analysis.long_tail, kgeval.metrics.umf_properties, kgeval.analysis.metric_steps.


include: "helpers/hoyt.smk"


rule hoyt_ranks:
    input:
        model=MODEL,
        kg=KG,
    output:
        ranks=HOYT_RANKS,
    log:
        "logs/hoyt_ranks/{dataset}/{model}.log",
    benchmark:
        "logs/benchmarks/hoyt_ranks/{dataset}/{model}.tsv"
    wildcard_constraints:
        dataset=alternatives(HOYT_DATASETS),
        model=alternatives(HOYT_MODELS),
    conda:
        "../../envs/models.yaml"
    threads: 1  # fixed: torch's thread count changes float summation order
    script:
        "../scripts/hoyt_ranks.py"


rule hoyt_case_study:
    input:
        get_hoyt_inputs,
    output:
        long="results/analysis/hoyt_case_study.csv",
        table=report(
            HOYT_TABLE,
            caption="../report/hoyt_case_study_table.rst",
            category="7. Metric families",
        ),
        table_md="results/tables/hoyt_case_study.md",
        table_tex="results/tables/hoyt_case_study.tex",
        figure=report(
            "results/analysis/hoyt_case_study.png",
            caption="../report/hoyt_case_study.rst",
            category="7. Metric families",
        ),
        figure_pdf="results/analysis/hoyt_case_study.pdf",
        trend=report(
            HOYT_SIZE_TREND,
            caption="../report/hoyt_size_trend.rst",
            category="7. Metric families",
        ),
        trend_md="results/tables/hoyt_size_trend.md",
        trend_tex="results/tables/hoyt_size_trend.tex",
        moments=report(
            "results/tables/null_moments.csv",
            caption="../report/null_moments.rst",
            category="7. Metric families",
        ),
        moments_md="results/tables/null_moments.md",
        moments_tex="results/tables/null_moments.tex",
        aggregations=report(
            "results/tables/hoyt_aggregations.csv",
            caption="../report/hoyt_aggregations.rst",
            category="7. Metric families",
        ),
        aggregations_md="results/tables/hoyt_aggregations.md",
        aggregations_tex="results/tables/hoyt_aggregations.tex",
    log:
        "logs/hoyt_case_study.log",
    benchmark:
        "logs/benchmarks/hoyt_case_study.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        small=get_hoyt_small(),
        large=get_hoyt_large(),
        models=HOYT_MODELS,
        seed=config["analysis"]["seed"],
    script:
        "../scripts/hoyt_case_study.py"


rule umf_properties:
    input:
        per_answer=PER_ANSWER.format(testset=STUDY["original"]),
        kg=KG.format(dataset=testset_dataset(STUDY["original"])),
    output:
        fotr=report(
            "results/analysis/umf_fotr.png",
            caption="../report/umf_fotr.rst",
            category="7. Metric families",
        ),
        fotr_pdf="results/analysis/umf_fotr.pdf",
        fotr_table="results/tables/umf_fotr.csv",
        fotr_md="results/tables/umf_fotr.md",
        fotr_tex="results/tables/umf_fotr.tex",
        size=report(
            "results/analysis/umf_size_invariance.png",
            caption="../report/umf_size_invariance.rst",
            category="7. Metric families",
        ),
        size_pdf="results/analysis/umf_size_invariance.pdf",
        size_csv="results/analysis/umf_size_invariance.csv",
        size_table="results/tables/umf_size_invariance.csv",
        size_md="results/tables/umf_size_invariance.md",
        size_tex="results/tables/umf_size_invariance.tex",
        tail=report(
            "results/analysis/umf_long_tail.png",
            caption="../report/umf_long_tail.rst",
            category="7. Metric families",
        ),
        tail_pdf="results/analysis/umf_long_tail.pdf",
        tail_table=UMF_LONG_TAIL,
        tail_md="results/tables/umf_long_tail.md",
        tail_tex="results/tables/umf_long_tail.tex",
    log:
        "logs/umf_properties.log",
    benchmark:
        "logs/benchmarks/umf_properties.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        districts=HOYT["districts"],
    script:
        "../scripts/umf_properties.py"


# the case study only where the config names its datasets or test sets
add_final_outputs(
    [UMF_LONG_TAIL] + ([HOYT_TABLE] if HOYT_DATASETS or HOYT_TEST_SETS else [])
)
