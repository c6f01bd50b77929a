"""Senders for each channel, and bounded retries with exponential backoff around any of them.

A sender raises `DeliveryError` when the receiver did not take the message; `retryable` says whether
trying again can help (a timeout, a refused connection, HTTP 5xx/408/429, any SMTP refusal) or not
(another HTTP 4xx: the request itself is wrong). Secrets arrive as plain arguments: the resource resolved
them from `EnvVar`s when the run started.
"""

from __future__ import annotations

import json
import mimetypes
import smtplib
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from filelock import FileLock

MAX_BACKOFF_SECONDS = 60.0
RETRYABLE_HTTP = frozenset({408, 429})


class DeliveryError(Exception):
    """The receiver did not take the message."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class Delivery:
    """How one channel's message went."""

    channel: str
    delivered: bool
    """True when a try succeeded."""
    attempts: int
    """Tries made, the successful one included."""
    error: str | None
    """The last try's error when not delivered."""


@dataclass
class Tries:
    """How far a delivery got, read when a stop (Ctrl-C, SIGTERM) cuts it short: the tries begun, and whether one
    was in flight then (its message may have arrived) or none was (between tries, or before the first)."""

    begun: int = 0
    in_flight: bool = False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not a delivery: urllib would follow a 301/302/303 to a POST with a GET that has no
    body, whose 200 would read as delivered though the message went nowhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def post_json(url: str, payload: Mapping[str, Any], *, timeout: float,
              headers: Mapping[str, str] | None = None) -> None:
    """POST a JSON body; any 2xx is delivery, a redirect is not (its target is not printed: a webhook's address
    may hold its secret)."""
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            raise DeliveryError(f"HTTP {exc.code} {exc.reason}: the receiver redirects, and a POST is not "
                                "followed; set the channel's URL to the address it moved to", retryable=False) from exc
        raise DeliveryError(f"HTTP {exc.code} {exc.reason}",
                            retryable=exc.code >= 500 or exc.code in RETRYABLE_HTTP) from exc
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise DeliveryError(f"{type(exc).__name__}: {reason}", retryable=True) from exc


def send_email(*, host: str, port: int, sender: str, recipients: list[str], subject: str, body: str,
               timeout: float, starttls: bool, username: str | None, password: str | None,
               attachments: Sequence[Path] = ()) -> None:
    """One SMTP session: STARTTLS and login when configured, then the message (and its attached files) to every
    recipient."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, ", ".join(recipients), subject
    message.set_content(body)
    for path in attachments:
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        maintype, subtype = kind.split("/", 1)
        message.add_attachment(path.read_bytes(), maintype=maintype, subtype=subtype, filename=path.name)
    try:
        with smtplib.SMTP(host, port, timeout=timeout) as smtp:
            if starttls:
                smtp.starttls()
            if username:
                smtp.login(username, password or "")
            refused = smtp.send_message(message, from_addr=sender, to_addrs=recipients)
    except smtplib.SMTPException as exc:
        raise DeliveryError(f"SMTP {type(exc).__name__}: {exc}", retryable=True) from exc
    except OSError as exc:
        raise DeliveryError(f"SMTP {type(exc).__name__}: {exc}", retryable=True) from exc
    if refused:
        raise DeliveryError(f"SMTP refused recipients: {sorted(refused)}", retryable=True)


def append_outbox(path: str | Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line; a file lock keeps lines whole when runs write at the same time."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(file) + ".lock", timeout=60), file.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


def with_retries(channel: str, send: Callable[[], None], *, attempts: int, backoff_seconds: float,
                 sleep: Callable[[float], None] = time.sleep, tries: Tries | None = None) -> Delivery:
    """Up to `attempts` tries, waiting backoff, 2×backoff, … (capped) between them; never raises but a stop, which
    finds in `tries` how far it got."""
    error = ""
    tries = tries if tries is not None else Tries()
    for attempt in range(1, attempts + 1):
        try:
            tries.begun, tries.in_flight = attempt, True
            send()
            tries.in_flight = False
            return Delivery(channel=channel, delivered=True, attempts=attempt, error=None)
        except DeliveryError as exc:
            tries.in_flight = False
            error = str(exc)
            if not exc.retryable:
                return Delivery(channel=channel, delivered=False, attempts=attempt, error=error)
        except Exception as exc:  # a channel's failure is data: the other channels still deliver
            tries.in_flight = False
            error = f"{type(exc).__name__}: {exc}"
        if attempt < attempts:
            sleep(min(backoff_seconds * 2 ** (attempt - 1), MAX_BACKOFF_SECONDS))
    return Delivery(channel=channel, delivered=False, attempts=attempts, error=error)
