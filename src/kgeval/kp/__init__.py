"""Knowledge Persistence (workflow/rules/kp.smk): the metric, the energy measurement and the steps of the KP rules."""
