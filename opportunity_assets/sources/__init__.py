"""The source layer: reading any common file format into the rows the point-in-time query reads. Pure reading and
shaping code, tested without Dagster; `resources/source.py` is the thin resource over it."""
