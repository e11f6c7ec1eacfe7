# Helpers of the rules in workflow/rules/training.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

from kgeval.training.cost import expected_train_seconds


def get_train_priority(wildcards):
    """A training job's expected seconds: Snakemake starts the ready jobs of highest priority first."""
    return expected_train_seconds(
        wildcards.model, get_model_settings(wildcards)["train"]
    )


def get_train_threads(wildcards):
    """A training job's threads: its train.threads setting."""
    return get_model_settings(wildcards)["train"]["threads"]


def get_checkpoint_dir(wildcards):
    return f"resources/checkpoints/{wildcards.dataset}/{wildcards.model}"


def get_snapshot_dir(wildcards):
    snapshots = SNAPSHOTS.format(dataset=wildcards.dataset, model=wildcards.model)
    return f"{snapshots}/seed{wildcards.seed}"


def get_libkge_spec(wildcards):
    return config["models"][wildcards.model]["libkge"][wildcards.dataset]


def get_libkge_sha256(wildcards):
    return get_libkge_spec(wildcards)["sha256"]
