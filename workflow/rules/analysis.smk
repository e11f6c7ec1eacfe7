# Analysis stage: Kendall's tau between system rankings (Figures 2-6, Tables 2-4), stability under
# subsampling (Figure 7) and discriminative power (Figure 8), from the metric tables and per-item scores.


rule analysis_rankings:
    input:
        get_analysis_inputs(["original", "sample", "complete"]),
    output:
        figure3=report(
            "results/analysis/figure3.png",
            caption="../report/figure3.rst",
            category="4. Label sparsity",
        ),
        figure3_pdf="results/analysis/figure3.pdf",
        figure3_csv="results/analysis/figure3.csv",
        codes="results/analysis/system_codes.csv",
        figure4=report(
            "results/analysis/figure4.png",
            caption="../report/figure4.rst",
            category="4. Label sparsity",
        ),
        figure4_pdf="results/analysis/figure4.pdf",
        figure4_csv="results/analysis/figure4.csv",
        figure5=report(
            "results/analysis/figure5.png",
            caption="../report/figure5.rst",
            category="4. Label sparsity",
        ),
        figure5_pdf="results/analysis/figure5.pdf",
        figure5_csv="results/analysis/figure5.csv",
        table3=report(
            "results/tables/table3.csv",
            caption="../report/table3.rst",
            category="4. Label sparsity",
        ),
        table3_md="results/tables/table3.md",
        table3_tex="results/tables/table3.tex",
        table3_long="results/analysis/table3_long.csv",
        table4=report(
            "results/tables/table4.csv",
            caption="../report/table4.rst",
            category="4. Label sparsity",
        ),
        table4_md="results/tables/table4.md",
        table4_tex="results/tables/table4.tex",
        figure2=report(
            "results/analysis/figure2.png",
            caption="../report/figure2.rst",
            category="1. Data",
        ),
        figure2_pdf="results/analysis/figure2.pdf",
        figure2_dist="results/analysis/figure2_distribution.csv",
        figure2_kl=report(
            "results/analysis/figure2_kl.csv",
            caption="../report/figure2_kl.rst",
            category="1. Data",
        ),
        figure6=report(
            "results/analysis/figure6.png",
            caption="../report/figure6.rst",
            category="4. Label sparsity",
        ),
        figure6_pdf="results/analysis/figure6.pdf",
        figure6_csv="results/analysis/figure6.csv",
        table2=report(
            "results/tables/table2.csv",
            caption="../report/table2.rst",
            category="1. Data",
        ),
        table2_md="results/tables/table2.md",
        table2_tex="results/tables/table2.tex",
        incomplete=report(
            "results/analysis/incomplete_judgments.csv",
            caption="../report/incomplete.rst",
            category="6. Beyond the paper",
        ),
        incomplete_tau="results/analysis/incomplete_judgments_tau.csv",
    log:
        "logs/analysis_rankings.log",
    benchmark:
        "logs/benchmarks/analysis_rankings.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        roles=lambda wildcards: {
            role: analysis_files(role) for role in ("original", "sample", "complete")
        },
        settings=config["analysis"],
    script:
        "../scripts/analysis_rankings.py"


rule analysis_stability:
    input:
        get_analysis_inputs(["original", "second", "complete"]),
    output:
        figure=report(
            "results/analysis/figure7.png",
            caption="../report/figure7.rst",
            category="5. Metrics: stability and discriminative power",
        ),
        pdf="results/analysis/figure7.pdf",
        taus="results/analysis/figure7_taus.csv",
        summary=report(
            "results/analysis/figure7_summary.csv",
            caption="../report/figure7_summary.rst",
            category="5. Metrics: stability and discriminative power",
        ),
    log:
        "logs/analysis_stability.log",
    benchmark:
        "logs/benchmarks/analysis_stability.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        test_sets=lambda wildcards: [
            analysis_files(r)
            for r in ("original", "second", "complete")
            if STUDY.get(r)
        ],
        settings=config["analysis"],
    script:
        "../scripts/analysis_stability.py"


rule analysis_discrimination:
    input:
        get_analysis_inputs(["original", "second", "complete"]),
    output:
        figure=report(
            "results/analysis/figure8.png",
            caption="../report/figure8.rst",
            category="5. Metrics: stability and discriminative power",
        ),
        pdf="results/analysis/figure8.pdf",
        pvalues="results/analysis/figure8_pvalues.csv",
        summary=report(
            "results/analysis/figure8_summary.csv",
            caption="../report/figure8_summary.rst",
            category="5. Metrics: stability and discriminative power",
        ),
    log:
        "logs/analysis_discrimination.log",
    benchmark:
        "logs/benchmarks/analysis_discrimination.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        test_sets=lambda wildcards: [
            analysis_files(r)
            for r in ("original", "second", "complete")
            if STUDY.get(r)
        ],
        settings=config["analysis"],
    script:
        "../scripts/analysis_discrimination.py"
