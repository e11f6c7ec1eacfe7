"""kgeval inside the tools KGC and IR researchers already use: PyKEEN (:mod:`.pykeen`), ir_datasets
(:mod:`.ir_datasets`); ranx through :meth:`kgeval.api.TestCollection.to_ranx` and :meth:`kgeval.api.Result.to_ranx`.
Each module imports its tool only when it is used."""
