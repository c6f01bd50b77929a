"""`opportunity check`, and every night before it reads: the pack held against its data. Each problem is one line
naming the pack key, the value and what was expected; warnings and facts beside them. `pack.py` runs the check
(the source read, a scan of the night) and says each cause once (`causes.py`); the others judge one concern each:
a source that does not read as its pack says (`reading.py`), how rows are dated (`periods.py`) and a few written
otherwise (`written.py`), how far the history reaches (`reach.py`), keys shared by several rows (`keys.py`), the
joined tables (`joins.py`), a file cut short (`cut_short.py`), bounds and listed values (`values.py`), cells refused
(`cells.py`), entities' ids and names (`entities.py`), what the night's candidates show (`candidates.py`), and the
facts a new user wants first (`facts.py`). Above the source layer (`sources/`) and the scan (`candidates/`)."""
