"""`opportunity check`, and every night before it reads: the pack held against its data. Each problem is one line
naming the pack key, the value and what was expected; warnings and facts beside them. `pack.py` runs the check
(the source read, a scan of the night); the others judge one concern each: how rows are dated (`periods.py`), bounds
and listed values (`values.py`), cells refused (`cells.py`), entities' ids and names (`entities.py`), what the
night's candidates show (`candidates.py`). Above the source layer (`sources/`) and the scan (`candidates/`)."""
