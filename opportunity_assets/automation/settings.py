"""Deployment settings for running unattended: the nightly schedule, the sensors' cadence, the
notification channels and how the model's calls are made. One YAML file (`deploy/automation.yaml` by default),
validated on load.

Secrets are never written in the file: a secret field holds `{env: NAME}`, which the wiring turns into a
`dagster.EnvVar` so that Dagster reads the variable when a run starts (never at import).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Annotated, Any, cast

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from resources.model import AnthropicModel

DEFAULT_SETTINGS = Path(__file__).resolve().parent.parent.parent / "deploy" / "automation.yaml"


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _empty_sections(cls, data: Any) -> Any:
        """A section written with nothing under it (`model:`, every key commented out) is its defaults, not "no
        dictionary": YAML reads it as null."""
        if not isinstance(data, dict):
            return data
        sections = {name for name, field in cls.model_fields.items() if isinstance(field.default, _Settings)}
        return {key: value for key, value in data.items() if not (value is None and key in sections)}


class EnvRef(_Settings):
    """A value read from an environment variable when the run (or sensor tick) needs it."""

    env: str = Field(min_length=1)
    """Name of the environment variable."""


Secret = str | EnvRef
"""A literal (fine for local receivers in tests) or `{env: NAME}` (everything real)."""


class ScheduleSettings(_Settings):
    enabled: bool = True
    """When false the schedule is defined but stopped until someone starts it in the UI."""
    hour: int = Field(default=2, ge=0, le=23)
    """Local hour of the nightly scan."""
    minute: int = Field(default=0, ge=0, le=59)
    timezone: str = "UTC"
    """IANA zone the hour is in; the scan targets the previous calendar day in this zone."""


class SensorSettings(_Settings):
    enabled: bool = True
    """When false the sensors are defined but stopped until someone starts them in the UI."""
    minimum_interval_seconds: int = Field(default=30, ge=1)
    """How often the daemon evaluates each sensor of the chain."""


class SlackSettings(_Settings):
    webhook_url: Secret
    """Slack incoming-webhook URL."""


class WebhookSettings(_Settings):
    url: Secret
    """Receiver of the JSON payload (POST)."""
    bearer_token: Secret | None = None
    """Sent as `Authorization: Bearer …` when set."""


class EmailSettings(_Settings):
    host: str
    port: int = Field(default=587, ge=1, le=65535)
    sender: str
    recipients: list[str] = Field(min_length=1)
    username: Secret | None = None
    password: Secret | None = None
    starttls: bool = True
    """Upgrade the connection with STARTTLS before logging in (off only for a local relay)."""


class ChannelSettings(_Settings):
    slack: SlackSettings | None = None
    webhook: WebhookSettings | None = None
    email: EmailSettings | None = None


class NotificationSettings(_Settings):
    outbox: str | None = None
    """JSON-lines file every message is appended to (always written); default `outbox.jsonl` beside the store."""
    ui_base_url: str | None = None
    """Dagster UI address, e.g. `http://scanner.internal:3000`: messages then link to the night's brief."""
    attempts: int = Field(default=3, ge=1, le=10)
    """Tries per channel and message before it is recorded as failed."""
    backoff_seconds: float = Field(default=2.0, ge=0)
    """Wait before the second try; doubled before each later one (capped at 60 s)."""
    timeout_seconds: float = Field(default=10.0, gt=0)
    """Per HTTP request or SMTP session."""
    still_strong_within_days: int = Field(default=45, ge=1)
    """A candidate to act on, with the same verdict, on the night before (the latest earlier night the store has
    routed, if at most this many days earlier) is marked "still strong" instead of new (45: nightly and
    month-end cadences; a pack of a longer grain widens it to its longest period and two weeks,
    `history.last_night_within`)."""
    earlier_night_wait_seconds: int = Field(default=300, ge=0, le=3600)
    """A night's notification waits at most this long for an earlier night in that window still running (not yet
    routed, with a run in flight or scanned in the last 2 minutes), so that nights run in parallel mark "still
    strong" as nights run in order would; after it, the night is decided without that one (the notification's
    metadata says so)."""
    claim_expiry_seconds: int = Field(default=900, ge=60)
    """A message claimed by a run that died before recording the outcome may be sent again after this long."""
    channels: ChannelSettings = ChannelSettings()


class ModelSettings(_Settings):
    """How the model's calls are made, where a model is configured (`ANTHROPIC_API_KEY` or `ANTHROPIC_BASE_URL`):
    a deployment's choice, not a pack's. A key left out keeps the resource's default (`resources.model.AnthropicModel`,
    whose bounds each key is held to here, so that a wrong value is named before any night)."""

    batch: bool | None = None
    """Send the calls a night makes together through the Message Batches API: half price, answers within hours."""
    timeout_s: float | None = None
    """Longest wait for one whole response (default 60)."""
    max_retries: int | None = None
    """Retries of a transient HTTP error (default 2)."""
    max_retry_after_s: float | None = None
    """Cap on a server's `retry-after` wait (default 10)."""
    knowledge_cutoff_date: date | None = None
    """Nights before it are blinded in prompts: no names, no dates (default 2025-06-01)."""
    batch_window_s: float | None = None
    batch_poll_s: float | None = None
    batch_timeout_s: float | None = None

    @field_validator("*")
    @classmethod
    def _within_the_resources_bounds(cls, value: Any, info: ValidationInfo) -> Any:
        """A value the resource's own field would refuse (`max_retries: 9`), refused here with its key: the
        bounds are the resource's, written once."""
        field = AnthropicModel.model_fields[str(info.field_name)]
        if value is not None and field.metadata:
            TypeAdapter(cast(Any, Annotated[field.annotation, *field.metadata])).validate_python(value)
        return value

    def given(self) -> dict[str, Any]:
        """The keys the file sets, as the resource takes them."""
        given = self.model_dump(exclude_none=True)
        if self.knowledge_cutoff_date is not None:
            given["knowledge_cutoff_date"] = self.knowledge_cutoff_date.isoformat()
        return given


class AutomationSettings(_Settings):
    schedule: ScheduleSettings = ScheduleSettings()
    sensors: SensorSettings = SensorSettings()
    notifications: NotificationSettings = NotificationSettings()
    model: ModelSettings = ModelSettings()


class SettingsError(ValueError):
    """The settings file is missing or invalid; the message names the file, the key and the problem."""


SETTINGS_ENV = "OPPORTUNITY_AUTOMATION"
"""Environment variable naming the automation settings file (schedule, sensors, channels), when no path is given."""


def settings_file(path: str | Path | None = None) -> Path:
    """The settings file: `path`, else $OPPORTUNITY_AUTOMATION, else deploy/automation.yaml."""
    chosen = path if path is not None else (os.environ.get(SETTINGS_ENV, "").strip() or None)
    return Path(chosen) if chosen is not None else DEFAULT_SETTINGS


def load_settings(path: str | Path | None = None) -> AutomationSettings:
    """The settings at `path`, else at $OPPORTUNITY_AUTOMATION, else deploy/automation.yaml."""
    file = settings_file(path)
    try:
        raw = yaml.safe_load(file.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise SettingsError(f"{file}: {exc}") from exc
    try:
        return AutomationSettings.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise SettingsError(f"{file}: {problems}") from exc


def unset_secrets(settings: AutomationSettings, environ: Mapping[str, str]) -> list[str]:
    """Each configured channel's `{env: NAME}` whose variable is unset or blank in `environ`, as `key: NAME`.

    Dagster resolves an `EnvVar` only when the notification run starts, after the night's scan and analyses are
    stored: a missing one stopped `opportunity run` there with Dagster's config traceback and no brief. Asked
    before the night instead, it is one line naming the key."""
    missing = []
    for channel, fields in settings.notifications.channels.model_dump(exclude_none=True).items():
        for key, value in fields.items():
            name = value.get("env") if isinstance(value, dict) else None
            if name is not None and not environ.get(name, "").strip():
                missing.append(f"notifications.channels.{channel}.{key}: {{env: {name}}}")
    return missing
