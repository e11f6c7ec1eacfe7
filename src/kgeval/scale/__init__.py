"""kgeval at millions of entities (issue 53): a stage of its own, beside the study, whose outputs it leaves alone.

- :mod:`.scorers`: block scorers, models whose scores can be computed for a slice of the entities at a time;
- :mod:`.engine`: exact filtered ranking over entity blocks, never the full score matrix;
- :mod:`.synth`: synthetic graphs of Wikidata5M's and ogbl-wikikg2's shapes, with systems of graded quality;
- :mod:`.readers`: ogbl-wikikg2's and Wikidata5M's file layouts, read into integer triples;
- :mod:`.own`: a real graph's files as a graph file, and the user's trained models (.npz) as block scorers;
- :mod:`.estimate`: question-sampled MRR / Hits@k with 95 % intervals, paired differences, sample sizes;
- :mod:`.negatives`: the sampled-negatives protocol (OGB) beside full ranking, and Kendall's tau between them;
- :mod:`.shards`: exact ranking split into question shards (separate jobs) and gathered;
- :mod:`.steps`: the workflow's steps (workflow/rules/scale.smk).
"""
