# Helpers of the rules in workflow/rules/scores.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

from kgeval.config import run_depth


def get_dump_model(wildcards):
    return MODEL.format(
        dataset=testset_dataset(wildcards.testset), model=wildcards.model
    )


def get_run_depth(wildcards):
    """How many answers a score dump keeps per question on the test set."""
    return run_depth(config, wildcards.testset)


def get_keep_scores(wildcards):
    return wildcards.testset in config["evaluation"]["full_scores"]
