"""kgeval: evaluate knowledge-graph-completion models the way information retrieval evaluates search engines."""

__version__ = "0.1.0"
