# Helpers of the rules in workflow/rules/external.smk, in a file of their own: snakemake --lint wants no function
# beside rules.


def get_external_system_files(wildcards):
    """What an outside system is read from on one test set: its run file, or its model (checkpoint or folder)."""
    spec = get_external_spec(wildcards)
    if "runs" in spec:
        return {"system": spec["runs"][wildcards.testset]}
    return {"system": spec["system"]}


def get_external_spec(wildcards):
    return config["external_systems"][wildcards.model]
