"""Sub-commands of the later stages (evaluation, pools, analyses), registered with ``kgeval.cli.command``."""
