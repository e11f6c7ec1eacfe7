"""Evaluating systems kgeval did not train: TREC run files, PyKEEN models, kgeval and LibKGE checkpoints."""
