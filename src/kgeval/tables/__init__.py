"""Summary tables (workflow/rules/tables.smk): model quality, findings and run times."""
