"""Reproducibility of a run: its content manifest (:mod:`.manifest`, :mod:`.environment`) and the comparison of
two results folders or packs, bit for bit (:mod:`.compare`, :mod:`.report`; ``kgeval reproduce``)."""
