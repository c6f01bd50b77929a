"""Per-candidate work of a night: analyses and verifications, one dynamic partition per candidate."""
