# Helpers of the rules in workflow/rules/pools.smk, in a file of their own: snakemake --lint wants no function
# beside rules.


def get_pool_runs(wildcards):
    """The pooling systems' score dumps on the test set the pooled test set was drawn from."""
    seed = testset_spec(wildcards.testset)["seed_set"]
    return {
        f"run_{system}": SCORES.format(testset=seed, model=system)
        for system in config["pooling"]["systems"]
    }


def get_pool_depths(wildcards):
    return role_path(testset_dataset(wildcards.testset), "pooling_depth")


def get_annotation_batch_name(wildcards):
    return f"{wildcards.testset}-rebuilt"
