"""Notifications of a night's act-on-these candidates: Slack, JSON webhook, email, and a local outbox file."""
