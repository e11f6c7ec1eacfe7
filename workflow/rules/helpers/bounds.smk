# Helpers of the rules in workflow/rules/bounds.smk, in a file of their own: snakemake --lint wants no function
# beside rules.


def get_bounded_study_set():
    """The study's completed test set when the bounds stage runs on it, else None."""
    name = STUDY.get("complete")
    return name if config["bounds"]["enabled"] and name in POOLED_SETS else None
