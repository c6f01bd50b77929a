"""The notification channels as a resource: which ones a deployment uses and how to reach them.

Built from the settings file by `notifier_from_settings`; secret fields are `dg.EnvVar`s there, so Dagster
resolves them when a run starts and shows only the variable's name in the UI.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field

from opportunity_assets.automation.settings import EnvRef, NotificationSettings, Secret
from opportunity_assets.notify import channels
from opportunity_assets.notify.logic import (
    OUTBOX,
    NightMessage,
    email_content,
    outbox_record,
    slack_payload,
    webhook_payload,
)


class SlackChannel(dg.Config):
    webhook_url: str = Field(description="Slack incoming-webhook URL (an EnvVar).")


class WebhookChannel(dg.Config):
    url: str = Field(description="Receiver of the JSON payload (POST).")
    bearer_token: str | None = Field(default=None, description="Sent as `Authorization: Bearer …` when set.")


class EmailChannel(dg.Config):
    host: str
    port: int = 587
    sender: str
    recipients: list[str]
    username: str | None = None
    password: str | None = None
    starttls: bool = True


class Notifier(dg.ConfigurableResource):
    """Channels of this deployment; the outbox file is always one of them."""

    outbox_path: str = Field(description="JSON-lines file every message is appended to.")
    ui_base_url: str | None = Field(default=None, description="Dagster UI address for links to the brief.")
    slack: SlackChannel | None = None
    webhook: WebhookChannel | None = None
    email: EmailChannel | None = None
    attempts: int = Field(default=3, ge=1, description="Tries per channel and message.")
    backoff_seconds: float = Field(default=2.0, ge=0, description="First wait between tries; doubles after.")
    timeout_seconds: float = Field(default=10.0, gt=0, description="Per HTTP request or SMTP session.")
    still_strong_within_days: int = Field(default=45, ge=1,
                                          description="Window for marking a candidate still strong.")
    earlier_night_wait_seconds: int = Field(default=300, ge=0, description="Longest wait for an earlier night "
                                            "still running before deciding new against still strong.")
    claim_expiry_seconds: int = Field(default=900, ge=1,
                                      description="After this long a claim by a run that died may be sent again.")

    def channel_names(self) -> list[str]:
        return channel_names_of(self.slack is not None, self.webhook is not None, self.email is not None)

    def deliver(self, channel: str, message: NightMessage, tries: channels.Tries | None = None) -> channels.Delivery:
        """Send `message` on `channel` with bounded retries; never raises but a stop (`tries`: how far it got)."""
        return channels.with_retries(channel, lambda: self._send(channel, message), attempts=self.attempts,
                                     backoff_seconds=self.backoff_seconds, tries=tries)

    def _send(self, channel: str, message: NightMessage) -> None:
        if channel == OUTBOX:
            channels.append_outbox(self.outbox_path, outbox_record(message))
        elif channel == "slack" and self.slack is not None:
            channels.post_json(self.slack.webhook_url, slack_payload(message), timeout=self.timeout_seconds)
        elif channel == "webhook" and self.webhook is not None:
            token = self.webhook.bearer_token
            channels.post_json(self.webhook.url, webhook_payload(message), timeout=self.timeout_seconds,
                               headers={"Authorization": f"Bearer {token}"} if token else None)
        elif channel == "email" and self.email is not None:
            subject, body = email_content(message)
            e = self.email
            channels.send_email(host=e.host, port=e.port, sender=e.sender, recipients=e.recipients, subject=subject,
                                body=body, timeout=self.timeout_seconds, starttls=e.starttls, username=e.username,
                                password=e.password, attachments=[Path(message.report)] if message.report else [])
        else:
            raise channels.DeliveryError(f"channel {channel!r} is not configured", retryable=False)


def channel_names_of(slack: bool, webhook: bool, email: bool) -> list[str]:
    """Configured channels in sending order; the outbox first, so a message is on disk whatever else fails."""
    return [OUTBOX, *(name for name, on in (("slack", slack), ("webhook", webhook), ("email", email)) if on)]


def _secret(value: Secret) -> str:
    """`{env: NAME}` → `dg.EnvVar(NAME)` (a str that Dagster resolves when the resource is initialized)."""
    return dg.EnvVar(value.env) if isinstance(value, EnvRef) else value


def _optional_secret(value: Secret | None) -> str | None:
    return None if value is None else _secret(value)


def notifier_from_settings(settings: NotificationSettings, store_path: str) -> Notifier:
    """The resource for these settings; the outbox defaults to `outbox.jsonl` beside the result store."""
    c = settings.channels
    return Notifier(
        outbox_path=settings.outbox or str(Path(store_path).parent / "outbox.jsonl"),
        ui_base_url=settings.ui_base_url,
        slack=SlackChannel(webhook_url=_secret(c.slack.webhook_url)) if c.slack else None,
        webhook=WebhookChannel(url=_secret(c.webhook.url),
                               bearer_token=_optional_secret(c.webhook.bearer_token)) if c.webhook else None,
        email=EmailChannel(host=c.email.host, port=c.email.port, sender=c.email.sender,
                           recipients=list(c.email.recipients), username=_optional_secret(c.email.username),
                           password=_optional_secret(c.email.password), starttls=c.email.starttls) if c.email else None,
        attempts=settings.attempts, backoff_seconds=settings.backoff_seconds, timeout_seconds=settings.timeout_seconds,
        still_strong_within_days=settings.still_strong_within_days,
        earlier_night_wait_seconds=settings.earlier_night_wait_seconds,
        claim_expiry_seconds=settings.claim_expiry_seconds,
    )
