"""What either backend of the result store says when it cannot be opened (`store.py` chooses the backend)."""

STORE_URL_VARIABLE = "OPPORTUNITY_STORE_URL"
"""The environment variable whose PostgreSQL URL puts the store on that server (unset or blank: the DuckDB file)."""


class StoreError(ValueError):
    """The store cannot be opened (a wrong or unreachable URL): one line naming the setting and the problem."""
