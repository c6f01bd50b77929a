"""The source layer: reading any common file format into the rows the point-in-time query reads. Pure reading and
shaping code, tested without Dagster; `snapshot.py` is the night's read, `facts.py` and `probes.py` the check's
queries, `connection.py` the typed rows they run on; `resources/source.py` is the thin resource over them."""
