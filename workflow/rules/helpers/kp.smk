# Helpers of the rules in workflow/rules/kp.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

from kgeval.kp.settings import (
    graph_kernel_params,
    kp_datasets,
    kp_early_stopping_models,
    kp_params,
    kp_settings,
    kp_timing_models,
    kp_testset,
    variants_settings,
)

# the kp block with its defaults; KP_PARAMS (sample size, projections, seed, p, batch size) is the same for
# every KP computation
KP = kp_settings(config)
KP_PARAMS = kp_params(config)
KP_GRAPH_KERNEL = graph_kernel_params(config)
KP_VARIANTS_SETTINGS = variants_settings(config)
KP_DATASETS = kp_datasets(config)
KP_ES_MODELS = sorted(
    {m for d in KP_DATASETS for m in kp_early_stopping_models(config, d)}
)


def get_kp_records(wildcards):
    return {
        f"kp_{m}": KP_RECORD.format(dataset=wildcards.dataset, model=m) for m in SYSTEMS
    }


def get_kp_evaluation(wildcards):
    """The evaluation table of the test set KP is correlated with on the dataset."""
    return EVALUATION.format(testset=kp_testset(config, wildcards.dataset))


def get_snapshot_root(wildcards):
    return SNAPSHOTS.format(dataset=wildcards.dataset, model=wildcards.model)


def get_early_stopping_records(wildcards):
    return {
        f"es_{m}": KP_EARLY_STOPPING_RECORD.format(dataset=wildcards.dataset, model=m)
        for m in kp_early_stopping_models(config, wildcards.dataset)
    }


def get_timing_records(wildcards):
    return {
        f"timing_{m}": KP_TIMING_RECORD.format(dataset=wildcards.dataset, model=m)
        for m in kp_timing_models(config)
    }


def get_variants_records(wildcards):
    return {
        f"var_{m}": KP_VARIANTS_RECORD.format(dataset=wildcards.dataset, model=m)
        for m in SYSTEMS
    }
