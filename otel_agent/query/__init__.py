"""Read-only SQL over a store: the statement guard, limits, and result shaping shared by CLI and API."""
