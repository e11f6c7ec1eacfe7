"""A judging campaign in the browser (``kgeval campaign``; guide: docs/guide/campaign.md).

Two annotators judge each sampled triple, an adjudicator resolves their conflicts, and the comparisons the
judgments decide update as they go. One module per job:

* :mod:`.store`: the campaign's SQLite file (schema, versions, people, tokens);
* :mod:`.sheet`: its items from a sampling plan, next-judgments or annotation sheet, in serving order;
* :mod:`.protocol`: assignment, judgments, conflicts, adjudication, undo;
* :mod:`.comparisons`, :mod:`.live`: the comparisons' terms and the live estimates, κ and rates;
* :mod:`.exact`: the exact bounds of each comparison and the serving order by MTC's priority;
* :mod:`.server` (with ``templates/`` and ``static/``): the pages and the JSON API;
* :mod:`.export`, :mod:`.labelstudio`: the final labels out and in;
* :mod:`.simulate`: an oracle through the HTTP API against the offline simulation;
* :mod:`.build`, :mod:`.status`: ``create`` and ``status``.

The server's packages (Starlette, Jinja2, uvicorn, httpx) are the ``campaign`` extra; nothing here imports them
at module level except :mod:`.server`'s functions and :mod:`.simulate`'s HTTP run.
"""
