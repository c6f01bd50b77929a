"""Deployment settings for running unattended: the nightly schedule, the sensors' cadence, the
notification channels and how the model's calls are made. One YAML file (`deploy/automation.yaml` by default),
validated on load.

Secrets are never written in the file: a secret field holds `{env: NAME}`, which the wiring turns into a
`dagster.EnvVar` so that Dagster reads the variable when a run starts (never at import).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Annotated, Any, cast, get_args

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

from opportunity_assets.criteria import yaml_problem
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
    raw = _read(file)
    if isinstance(raw, dict) and {"domain", "source"} <= set(raw):
        # a criteria pack given here was told "domain: unknown key; expected `schedule`, ..." once per pack key,
        # a line of 800 characters (trial 105)
        raise SettingsError(f"{file}: got a criteria pack (its keys `domain`, `source`, ...): {_EXPECTED}, whose "
                            f"keys are {', '.join(f'`{k}`' for k in AutomationSettings.model_fields)}; a pack goes "
                            "to `--criteria`")
    try:
        return AutomationSettings.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {_problem(e)}" for e in exc.errors())
        raise SettingsError(f"{file}: {problems}") from exc


_EXPECTED = "expected the automation settings' YAML file (`--settings`, or $OPPORTUNITY_AUTOMATION)"


def _read(file: Path) -> Any:
    """The file's YAML, or one line naming the file and what to fix: it was Python's "[Errno 2] No such file or
    directory" or PyYAML's seven lines of context (trial 68). Empty, or only comments: every default."""
    if file.is_dir():
        raise SettingsError(f"{file}: a folder; {_EXPECTED}")
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SettingsError(f"{file}: not found; {_EXPECTED}") from None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{file}: not UTF-8 text (byte {exc.start}); {_EXPECTED}") from None
    except OSError as exc:
        raise SettingsError(f"{file}: cannot be read ({(exc.strerror or 'unreadable').lower()}); {_EXPECTED}") \
            from None
    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise SettingsError(f"{file}: not valid YAML ({yaml_problem(exc)})") from None


def _problem(error: Any) -> str:
    """A validation error in words: an unknown key with the key it may have meant (pydantic's "Extra inputs are
    not permitted" named no key to write instead, trial 68); else pydantic's message."""
    if error["type"] != "extra_forbidden":
        return str(error["msg"])
    keys = _keys_at(tuple(error["loc"][:-1]))
    close = difflib.get_close_matches(str(error["loc"][-1]), keys, n=1)
    if close:
        return f"unknown key (did you mean `{close[0]}`?)"
    return "unknown key; expected " + (", ".join(f"`{k}`" for k in keys) if keys else "no key there")


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the settings take at `loc` (a section's path), or none where no section is."""
    model: Any = AutomationSettings
    for part in loc:
        field = model.model_fields.get(str(part)) if isinstance(model, type) and issubclass(model, BaseModel) \
            else None
        if field is None:
            return []
        model = next((t for t in (field.annotation, *get_args(field.annotation))
                      if isinstance(t, type) and issubclass(t, BaseModel)), None)
    return list(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else []


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
