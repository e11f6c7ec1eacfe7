"""Data layer: the resource manifest, downloads with a mirror fallback, safe extraction, the knowledge graph,
test sets and judgments."""
