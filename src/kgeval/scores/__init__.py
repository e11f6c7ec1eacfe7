"""Score dumps (workflow/rules/scores.smk): the ranking engine, the dump format and the dump step."""
