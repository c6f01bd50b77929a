"""The morning report: the night's stored records as a dated, branded HTML or PDF document (`render.py`, pure),
read from the store by `step.py`."""
