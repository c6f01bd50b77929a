"""`opportunity check`, and every night before it reads: the pack held against its data. Each problem is one line
naming the pack key, the value and what was expected; warnings and facts beside them. `pack.py` runs the check
(the source read, a scan of the night) and says each cause once (`causes.py`); the others judge one concern each:
- the read: a source that does not read as its pack says (`reading.py`), a file cut short (`cut_short.py`);
- the periods: keys that do not read the rows (`periods.py`) and the patterns that would (`patterns.py`), a few
  rows written otherwise (`written.py`), the grain against the rows (`grains.py`), the latest periods against the
  night (`latest.py`), how far the history reaches (`reach.py`);
- the keys and values: keys shared by several rows (`keys.py`), the joined tables (`joins.py`), bounds and listed
  values (`values.py`), cells refused (`cells.py`), entities' ids and names (`entities.py`);
- the scan: what the night's candidates show (`candidates.py`), the facts a new user wants first (`facts.py`).
Above the source layer (`sources/`) and the scan (`candidates/`)."""
