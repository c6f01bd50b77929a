"""The model, as one resource with two implementations chosen at wiring time (DESIGN §2, §8):

- `ModelOff`: deterministic mode (no API key, no base URL). Every model step is skipped; the brief says so.
- `AnthropicModel`: the real `anthropic` SDK (messages with a JSON-schema output config), pointed at
  `base_url` when given (an Anthropic-compatible gateway, or the tests' local server).

Code owns everything around the call: retries (the SDK's own are off: it honours `retry-after` without a
cap), at most one retry for a truncated, refused or malformed answer, usage and cost from the response with
prices from config, a per-night budget that stops calls before they start, and a store-backed replay cache
keyed by hash(model, prompt version, input, schema) that is also the audit log.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import dagster as dg
from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from opportunity_assets.cost import DEFAULT_PRICES, Prices, load_prices
from opportunity_assets.llm.roles import Prompt
from opportunity_assets.records import MODEL_STOPPED, MODEL_UNREACHABLE
from resources.store import ResultStore

if TYPE_CHECKING:
    import anthropic  # imported where a model is used: ~1 s that a deterministic night never pays

T = TypeVar("T", bound=BaseModel)

_TRANSIENT = (408, 409, 429, 500, 502, 503, 504, 529)
_STOPPING = {
    401: "the API refused the key: set a valid ANTHROPIC_API_KEY (or the key the gateway at the base URL expects)",
    403: "the key may not use this model: give the key access to it, or name another model in the pack's models",
    404: "the API serves no such model (or no Messages API at the base URL): name a served model in the pack's "
         "models, or fix the base URL",
}
"""Answers no retry and no other candidate can change: the first stops the night's calls to that model (a refused
key: to every model), with the fix (digit-free: every number in the brief must be a stored one). Calls already in
flight still get their own refusal (free, and at most one per worker): holding every call until a first one has
come back would add a call's latency to every healthy night."""
_INVALID = (400, 413, 422)
"""A request refused as invalid (too large, a parameter the model does not take): one candidate's request may be at
fault, so one refusal stops nothing; `INVALID_STOPPING` of a model's requests refused running, with no answer
between, stop its calls for the night as `_STOPPING` does (every candidate's request has the same shape)."""
INVALID_STOPPING = 3
_INVALID_STOP = ("the API refused this model's requests as invalid three times running, with no answer between: "
                 "fix the pack's models (max_tokens, max_input_tokens, the model's name) or the gateway at the base "
                 "URL")
"""Digit-free, as every `_STOPPING` fix is: every number in the brief must be a stored one."""
_BUSY_STOP = ("the server refused three of this model's calls running as busy or failing (rate limited, overloaded, "
              "a server error) after every retry, with no answer between: run the night again later (its answers "
              "are kept), or raise the gateway's rate limit")
"""A transient refusal that outlasted a call's retries may be that call's bad luck, but `INVALID_STOPPING` of a
model's calls so, running, are a server that is not answering tonight: every further call only adds its retries to
the load, and the brief said only how many calls failed (trial 81: a gateway that rate-limited every request).
Digit-free, as every `_STOPPING` fix is."""
_SILENT_STOP = ("the server answered none of three of this model's calls running within the timeout, after every "
                "retry: raise the settings' model timeout_s, or fix the gateway at the base URL")
"""As `_BUSY_STOP`, for calls whose answers were lost (timed out, the connection dropped mid-answer), each attempt
billed at its worst case (trial 81: a gateway that never answered in time, or dropped every connection mid-answer,
billed a night past a dollar for no answer, the brief saying only how many calls failed)."""
_DROPPED_STOP = ("the server dropped the connection mid-answer on three of this model's calls running, after every "
                 "retry: fix the gateway or the network at the base URL (a longer timeout will not help), or run the "
                 "night again later (its answers are kept)")
"""As `_SILENT_STOP`, for answers lost to a connection dropped rather than to the timeout (trial 99: a gateway that
closed every connection mid-body was told to raise timeout_s). Digit-free, as every `_STOPPING` fix is."""
_UNREAD_STOP = ("the server sent no answer to three of this model's calls running, each also after one retry (an API "
                "error sent as a success, a message with no text, or a body that is no message): run the night "
                "again later (its answers are kept), or fix the gateway at the base URL")
"""As `_BUSY_STOP`, for a gateway whose replies are no answer at all (trial 99: an `overloaded_error` sent with
status 200, or `content: []`, to every call: each of the night's calls was sent twice, the error one billed at its
worst case, $0.69 for a night of no answer, and the brief said only "every model call failed tonight (61 model
errors)", neither why nor what to do). A schema mismatch, a truncation or a refusal may be one candidate's and stops
nothing. Digit-free, as every `_STOPPING` fix is."""
NO_TEXT = "the message holds no answer (no content, or text of only whitespace)"
"""A message whose content blocks carry no text and no tool input: an empty answer, never "does not match the
schema" (trial 99: `content: []` was told so)."""
_EVERY_MODEL = ""
"""The `_stopped` key of a stop that holds for every model (the key was refused)."""
_UNFINISHED = {"max_tokens": "truncated", "model_context_window_exceeded": "truncated", "pause_turn": "unfinished"}
"""Stop reasons of a turn that did not finish: its text is an answer cut short (the output or the context ran out)
or not yet given (a server tool paused the turn), never the answer, however much of it parses."""
_SCHEMA_IN_PROMPT = ("Answer with exactly one JSON object and nothing else: no prose, no code fence. It must match "
                     "this JSON schema:\n")


@dataclass(frozen=True)
class _Attempted(Generic[T]):
    """What one call cost over all its attempts, and what came of it."""

    answer: T | None
    usage: tuple[int, ...]
    """input, output, cache write, cache read tokens."""
    usd: float
    attempts: int
    problem: str | None

    def plus_attempt(self, usage: tuple[int, ...] = (0, 0, 0, 0), usd: float = 0.0) -> _Attempted[T]:
        return _Attempted(self.answer, tuple(a + b for a, b in zip(self.usage, usage, strict=True)),
                          self.usd + usd, self.attempts + 1, self.problem)

    def answered(self, answer: T | None) -> _Attempted[T]:
        return dataclasses.replace(self, answer=answer, problem=None)

    def failed(self, problem: str) -> _Attempted[T]:
        return dataclasses.replace(self, answer=None, problem=problem)


class ModelCallFailed(RuntimeError):
    """The call failed after the allowed retries; the message says why (never contains the API key)."""


class BudgetExhausted(RuntimeError):
    """The night's model budget cannot cover this call's worst case; no request was sent."""


@dataclass(frozen=True)
class ModelReply:
    parsed: BaseModel
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    usd: float
    replayed: bool
    """True when answered from the store's cache: no request was sent, nothing was billed now."""
    key: str


@dataclass(frozen=True)
class CallSpec:
    """One call: who asks, for which night and candidate, with which limits."""

    role: str
    model: str
    prompt: Prompt
    payload: dict[str, Any]
    output_type: type[BaseModel]
    max_tokens: int
    max_input_tokens: int
    domain: str
    as_of: date
    candidate_id: str
    ceiling_usd: float


@dataclass(frozen=True)
class CallRecord:
    """One row of the store's `model_calls`: the audit log, and (with a response) the replay cache."""

    key: str
    domain: str
    as_of: date
    candidate_id: str
    role: str
    model: str
    prompt_version: str
    request: str
    response: str | None
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    usd: float
    attempts: int
    error: str | None


@dataclass(frozen=True)
class ModelUse:
    """Which call answered one role of one candidate (or the night's brief) when its record was last written: a
    row of the store's `model_uses`, from which a night's cost is billed-now apart from replayed."""

    domain: str
    as_of: date
    candidate_id: str
    role: str
    key: str
    """The `model_calls` row that answered (or the failed call's own row)."""
    replayed: bool
    """Answered from the store: billed when that call was first made, not again."""


@dataclass(frozen=True)
class ModelLog:
    """What a step's model calls left to write, in the step's own store transaction."""

    calls: list[CallRecord] = dataclasses.field(default_factory=list)
    """Calls sent now: the audit log and the replay cache."""
    uses: list[ModelUse] = dataclasses.field(default_factory=list)
    """Every answer the step took, sent now or replayed."""


class ModelResource(dg.ConfigurableResource):
    """The surface every implementation offers."""

    def enabled(self) -> bool:
        return False

    def mode_line(self) -> str:
        return "off (deterministic mode: every number, verdict, check and route is code)"

    def knowledge_cutoff(self) -> date:
        return date.max

    def complete(self, spec: CallSpec, output_type: type[T]) -> tuple[T, ModelReply]:
        raise ModelCallFailed("model checks are off")

    def drain(self) -> ModelLog:
        """Calls and uses not yet written to the store."""
        return ModelLog()


class ModelOff(ModelResource):
    """Deterministic mode."""


@functools.cache
def _answer_schema(output_type: type[BaseModel]) -> dict[str, Any]:
    """The answer's JSON schema, built once per type (pydantic's generation took the GIL on every call)."""
    import anthropic

    return anthropic.transform_schema(output_type)


def anthropic_types() -> Any:
    """`anthropic.types`, imported where a model is used."""
    import anthropic.types

    return anthropic.types


class _KeyTwice(ValueError):
    """A JSON object naming a key twice (`_once`)."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict, refusing a key named twice: a parser keeps the last value silently, and
    which of two contradicting values a model meant is no guess code makes."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _KeyTwice(key)
        seen.add(key)
    return dict(pairs)


def answer_json(text: str, output_type: type[T]) -> T | str:
    """The answer in a message's text, or why there is none. The API's JSON-schema output is the text itself;
    a gateway that ignores the output config may wrap it in prose or a ```json fence: then the one JSON object
    the text holds is the answer (two or more: none is guessed at). An object naming a key twice is no answer
    either (trial 93: `"effect": "note"` then `"effect": "reject"` in one finding was read as the second)."""
    try:
        json.loads(text, object_pairs_hook=_once)
    except _KeyTwice as exc:
        return f"answer names the key {str(exc)!r} twice in one object: neither value is guessed at"
    except ValueError:  # (no JSON: read below, as prose or objects within it)
        pass
    try:
        return output_type.model_validate_json(text)
    except ValidationError as exc:
        strict = f"answer does not match the schema ({exc.error_count()} error(s))"
    if text.strip() and "{" not in text:
        return PROSE
    try:
        objects = [o for o in _json_objects(text, _once) if isinstance(o, dict)]
    except _KeyTwice as exc:
        return f"answer names the key {str(exc)!r} twice in one object: neither value is guessed at"
    if len(objects) != 1:
        return strict
    try:
        return output_type.model_validate(objects[0])
    except ValidationError as exc:
        return f"answer does not match the schema ({exc.error_count()} error(s))"


PROSE = "answer is prose, no JSON"
"""What a server that ignores the output config sends back: the model wrote to the prompt alone."""


def _answer_in(content: object, output_type: type[T]) -> T | str:
    """The answer in a message's content blocks, or why there is none: the text blocks' text (`answer_json`), or
    else the input of its one `tool_use` block (a gateway that turns the output schema into a tool). The SDK builds
    a message without validating it, so content of another shape (a string, blocks without text) is read as what
    it holds, never trusted to have the declared attributes."""
    blocks = content if isinstance(content, list) else []
    text = "".join(b.text for b in blocks if getattr(b, "type", None) == "text" and isinstance(getattr(b, "text", None),
                                                                                              str))
    tools = [b.input for b in blocks if getattr(b, "type", None) == "tool_use" and isinstance(getattr(b, "input", None),
                                                                                               dict)]
    if not text.strip() and not tools:
        return NO_TEXT
    answer = answer_json(text, output_type)
    if not isinstance(answer, str) or len(tools) != 1:
        return answer
    try:
        return output_type.model_validate(tools[0])
    except ValidationError as exc:
        return f"answer does not match the schema ({exc.error_count()} error(s))"


def _streamed_message(body: object) -> Any:
    """The message an event stream carries, when a server streamed though no stream was asked for (the SDK then
    hands back the body's text); any other body as it is. The events are read as the Messages API streams them:
    the message's start, its content blocks in text and JSON pieces, then its stop reason and output usage. A
    stream that does not add up to a message stays text: no message."""
    if not isinstance(body, str) or "data:" not in body:
        return body
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    for line in body.splitlines():
        event: Any
        try:
            event = json.loads(line[5:]) if line.startswith("data:") else None
        except json.JSONDecodeError:
            continue
        kind, index = (event.get("type"), event.get("index")) if isinstance(event, dict) else (None, None)
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = dict(event["message"])
        elif kind == "content_block_start" and isinstance(index, int) and isinstance(event.get("content_block"), dict):
            blocks[index] = dict(event["content_block"])
        elif kind == "content_block_delta" and index in blocks:
            delta, block = event.get("delta"), blocks[index]
            for piece in ("text", "partial_json"):
                if isinstance(delta, dict) and isinstance(delta.get(piece), str):
                    block[piece] = str(block.get(piece) or "") + delta[piece]
        elif kind == "message_delta" and message is not None:
            delta = event.get("delta")
            message.update({k: v for k, v in (delta.items() if isinstance(delta, dict) else ())
                            if k in ("stop_reason", "stop_sequence")})
            if isinstance(event.get("usage"), dict) and isinstance(message.get("usage"), dict):
                message["usage"] = {**message["usage"], **event["usage"]}
    if message is None:
        return body
    for block in blocks.values():
        if block.get("type") == "tool_use" and "partial_json" in block:
            try:
                block["input"] = json.loads(block.pop("partial_json"))
            except json.JSONDecodeError:
                block.pop("input", None)
    try:
        return anthropic_types().Message.model_validate({**message, "content": [blocks[i] for i in sorted(blocks)]})
    except ValidationError:
        return body


def _unread(exc: Exception) -> str:
    """Why the SDK could not make a message of a 200's body, in a few words (never the body: it may echo the key)."""
    import anthropic
    import httpx2 as httpx

    if isinstance(exc, anthropic.APIResponseValidationError | json.JSONDecodeError):
        return "its body is not JSON"
    if isinstance(exc, UnicodeDecodeError):  # a proxy that compressed the body and did not say so (trial 81)
        return "its body is not text: compressed or binary, with no content-encoding saying so"
    if isinstance(exc, httpx.DecodingError):  # a proxy that marked a plain body gzip (trial 93)
        return "its body does not decode as its content-encoding says"
    return f"its body could not be read ({type(exc).__name__})"


def _body_kind(body: object) -> str:
    """What a 200's body that is no message holds, in words: the SDK hands back a body it could not make a message
    of as the decoded JSON or the text, whose Python type name ("a NoneType body", "a str body") was said until
    trial 81."""
    if isinstance(body, str) and not body.strip():  # (trial 93: an empty 200 was called a web page)
        return "its body is empty"
    if isinstance(body, str):
        return "its body is text, not JSON: a web page, or a proxy's or gateway's own reply"
    if body is None:
        return "its body is JSON null"
    kinds = {list: "a JSON array", bool: "a JSON true or false", int: "a JSON number", float: "a JSON number"}
    return f"its body is {kinds.get(type(body), 'JSON of another shape')}, not an object"


def _stored_answer(stored: dict[str, Any] | None, output_type: type[T]) -> T | None:
    """A stored answer to replay, if it still is one: an answer stored under an older, looser schema (a longer
    assumption than the schema now takes) is asked for again rather than raised out of the call."""
    try:
        return None if stored is None else output_type.model_validate_json(stored["response"])
    except ValidationError:
        return None


def _retryable(status: int, should_retry: str | None) -> bool:
    """Whether a refused request is worth sending again: as the server's `x-should-retry` header says, when it says
    (the API sends it where the status alone misleads: a 429 no wait will lift was sent three times), else when
    the status is a transient one (`_TRANSIENT`)."""
    if should_retry in ("true", "false"):
        return should_retry == "true"
    return status in _TRANSIENT


_LOST_ITEM = "batch item missing"
"""The outcome of an item an ended batch holds no readable result for: the server had it, and may have billed it."""


def _batch_results(decoder: Any) -> dict[str, Any]:
    """Each item's result in a batch's results file (the SDK's decoder of it), by custom id. A line that is no JSON
    object with a custom id (a gateway's hiccup in the file) leaves its own item unread, not the file: the decoder
    raised at it, the whole batch went again through the standard API, and every item the server had answered was
    paid twice, once unrecorded. A custom id the file answers twice has no result either: neither line is guessed at
    (the later one was taken, silently: trial 93's second lines turned the skeptic's notes into rejections)."""
    from anthropic.types.messages import MessageBatchIndividualResponse

    results: dict[str, Any] = {}
    try:
        for line in decoder.http_response.iter_lines():
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(item, dict) and isinstance(item.get("custom_id"), str):
                twice = item["custom_id"] in results
                results[item["custom_id"]] = None if twice else MessageBatchIndividualResponse.construct(**item).result
    finally:
        decoder.close()
    return results


def _batch_outcome(result: Any) -> Any:
    """An item's message from its batch result, or why there is none: errored, canceled and expired items are not
    billed; one without a result of a known shape is `_LOST_ITEM`."""
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        return getattr(result, "message", None)
    return f"batch item {kind}" if kind in ("errored", "canceled", "expired") else _LOST_ITEM


def _error_type(body: object) -> str:
    """The API error's `type` (" (authentication_error)"), or nothing: its free-text message is never kept (a
    gateway may echo the request, key included)."""
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return f" ({kind})" if isinstance(kind, str) and kind.replace("_", "").isalnum() and len(kind) <= 40 else ""


_MOST_TOKENS = 2_000_000
"""More input tokens than any model's context window holds: a reported count above it is no count."""


def _count(value: object, most: int) -> int | None:
    """A reported token count if it is one: a whole number from 0 to `most` (not a string, a bool or a float)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most else None


def _billed_usage(usage: object, worst: tuple[int, int]) -> tuple[int, int, int, int]:
    """(input, output, cache write, cache read) tokens to bill from a response's `usage`. A count that is missing
    or no count (negative, not a whole number, more input than any context, more output than `max_tokens`
    allows) is billed at the call's worst case (`worst`: input, output tokens): a server's odd report can neither
    make a call free or negative (which would free budget for more calls) nor bill the night thousands of dollars,
    nor crash the arithmetic. The cache counts may be absent (a server without prompt caching: nothing cached),
    but one reported that is no count leaves the input unknown, and so does an input of no tokens at all (every
    request holds a prompt): the input is then billed at the worst case, the cache as nothing, and an output of
    no tokens beside it at the worst case too (a usage of zeros billed a night's answered calls $0.0000)."""
    counts = [_count(getattr(usage, "input_tokens", None), _MOST_TOKENS),
              *(0 if getattr(usage, name, None) is None else _count(getattr(usage, name), _MOST_TOKENS)
                for name in ("cache_creation_input_tokens", "cache_read_input_tokens"))]
    inputs = [count for count in counts if count is not None]
    known = len(inputs) == 3 and sum(inputs) > 0
    output = _count(getattr(usage, "output_tokens", None), worst[1])
    if output is None or (output == 0 and not known):
        output = worst[1]
    return (inputs[0], output, inputs[1], inputs[2]) if known else (worst[0], output, 0, 0)


def _no_answer_at_all(problem: str) -> bool:
    """Whether a bad answer is a gateway's reply that holds none (`_UNREAD_STOP`), not a model's answer gone wrong."""
    return problem == NO_TEXT or problem.startswith(("an API error with status 200", "the response is not a message",
                                                     "the response could not be read"))


def _answer_lost(exc: BaseException) -> bool:
    """Whether a request that raised `exc` reached the server, which may have answered and billed it (a read that
    timed out, a connection dropped mid-answer), or never left (no connection made): the first is billed at the
    call's worst case, so a slow server cannot spend past the night's ceiling unseen."""
    import httpx2 as httpx

    return not isinstance(exc.__cause__, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout
                          | httpx.UnsupportedProtocol | httpx.TooManyRedirects)


def _undecodable(exc: BaseException) -> bool:
    """Whether a request that raised `exc` was answered with a body that does not decode as its content-encoding
    says (a proxy that marked a plain body gzip): an answer no one can read, not a connection lost."""
    import httpx2 as httpx

    return isinstance(exc.__cause__, httpx.DecodingError)


def _transport_problem(role: str, exc: BaseException, attempts: int, billed: bool) -> str:
    """A request that got no answer, in words rather than the SDK's class name: timed out, its connection lost
    mid-answer (either may have been answered and billed), or never sent (or sent round a redirect loop), with why
    and the fix (`MODEL_UNREACHABLE`)."""
    import anthropic
    import httpx2 as httpx

    lost = ", each answer lost billed at its worst case" if billed else ""
    if not _answer_lost(exc):
        why = re.sub(r"^\[Errno -?\d+\]\s*", "", str(exc.__cause__ or exc).strip()) or "no connection"
        if isinstance(exc.__cause__, httpx.TooManyRedirects):  # each hop answered "elsewhere": no model ran
            why = "redirected again and again: a redirect loop"
        return f"{role}: not sent after {attempts} attempt(s) ({why}){lost}; {MODEL_UNREACHABLE}"
    what = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "connection lost before the answer"
    return f"{role}: {what} after {attempts} attempt(s){lost}"


def _deadline_client(seconds: float) -> Any:
    """The SDK's HTTP client with every response's body bounded in time as a whole. httpx's read timeout bounds
    each read, so a server that drips a byte a second held a call (and the night) as long as it liked."""
    import anthropic
    import httpx2 as httpx  # the HTTP client this SDK is built on

    class Deadline(httpx.SyncByteStream):
        def __init__(self, body: httpx.SyncByteStream, until: float) -> None:
            self._body, self._until = body, until

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._body:
                if time.monotonic() > self._until:
                    raise httpx.ReadTimeout(f"the response took more than {seconds:g} s in all")
                yield chunk

        def close(self) -> None:
            self._body.close()

    class Bounded(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            until = time.monotonic() + seconds
            response = super().handle_request(request)
            assert isinstance(response.stream, httpx.SyncByteStream)
            response.stream = Deadline(response.stream, until)
            return response

    return anthropic.DefaultHttpxClient(transport=Bounded(limits=httpx.Limits(max_connections=1000,
                                                                              max_keepalive_connections=100)))


def _json_objects(text: str, pairs: Callable[[list[tuple[str, Any]]], Any] | None = None) -> list[Any]:
    """The top-level JSON values that start with `{` in `text`, left to right. A `{` that starts no JSON value
    opens prose in braces or a cut object: the search goes on after the brace that closes it, and ends at one that
    never closes, since every object after it lies inside it (a cut verifier answer's one whole finding was read as
    the answer: no findings, the skeptic's doubt lost)."""
    decoder, found, at = json.JSONDecoder(object_pairs_hook=pairs), [], text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            closed = _closing(text, at)
            if closed is None:
                break
            end = closed
        else:
            found.append(value)
        at = text.find("{", end)
    return found


def _closing(text: str, at: int) -> int | None:
    """The index just past the brace that closes the one at `at` (braces inside JSON strings not counted), or None
    when the text ends first."""
    depth, quoted, escaped = 0, False, False
    for index in range(at, len(text)):
        char = text[index]
        if escaped:
            escaped = False
        elif quoted:
            escaped, quoted = char == "\\", char != '"'
        elif char == '"':
            quoted = True
        elif char in "{}":
            depth += 1 if char == "{" else -1
            if depth == 0:
                return index + 1
    return None


class AnthropicModel(ModelResource):
    api_key: str | None = Field(default=None, repr=False,
                                description="Set from EnvVar('ANTHROPIC_API_KEY') at wiring time; never printed.")
    base_url: str | None = Field(default=None, description="Anthropic-compatible endpoint; default the SDK's.")
    timeout_s: float = Field(default=60.0, gt=0, description="Longest wait for any read, and for one whole "
                                                                 "response, first byte to last.")
    max_retries: int = Field(default=2, ge=0, le=5, description="Retries of transient HTTP errors (code-owned).")
    max_retry_after_s: float = Field(default=10.0, ge=0, description="Cap on any retry-after wait.")
    knowledge_cutoff_date: str = Field(default="2025-06-01",
                                       description="Nights before this are blinded: no names, no dates.")
    prices_path: str = Field(default=str(DEFAULT_PRICES))
    refresh: bool = Field(default=False, description="Ignore the replay cache and call again.")
    batch: bool = Field(default=False, description="Send calls made together through the Message Batches API "
                                                    "(half price, results within 24 h): for unattended nights.")
    batch_window_s: float = Field(default=0.5, ge=0, description="How long a batch waits for more calls to join.")
    batch_poll_s: float = Field(default=30.0, gt=0, description="Seconds between polls of a running batch.")
    batch_timeout_s: float = Field(default=24 * 3600.0, gt=0)
    store: ResultStore

    _client: anthropic.Anthropic | None = PrivateAttr(default=None)
    _prices: Prices | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _loaded: set[tuple[str, date]] = PrivateAttr(default_factory=set)
    _cache: dict[str, dict[str, Any]] = PrivateAttr(default_factory=dict)
    _spent: dict[tuple[str, date], float] = PrivateAttr(default_factory=dict)
    _reserved: dict[tuple[str, date], float] = PrivateAttr(default_factory=dict)
    _beyond: threading.local = PrivateAttr(default_factory=threading.local)
    """This thread's call's reservation past its worst case (`usd`): the retries of lost answers it was allowed."""
    _pending: list[CallRecord] = PrivateAttr(default_factory=list)
    _uses: list[ModelUse] = PrivateAttr(default_factory=list)
    _queue: list[tuple[CallSpec, Future[Any]]] = PrivateAttr(default_factory=list)
    _timer: threading.Timer | None = PrivateAttr(default=None)
    _batches_refused: str | None = PrivateAttr(default=None)
    """The API error type of a refused batch creation (a gateway that serves no Message Batches API): the rest of
    the night's calls go through the standard API, and the brief's mode line says so."""
    _stopped: dict[str, str] = PrivateAttr(default_factory=dict)
    """Model → why no more calls to it are sent tonight (`_STOPPING`)."""
    _invalid: dict[str, int] = PrivateAttr(default_factory=dict)
    """Per model, its requests refused as invalid since its last answer (`_INVALID`)."""
    _busy: dict[str, int] = PrivateAttr(default_factory=dict)
    """Per model, its calls refused as busy after every retry since its last answer (`_BUSY_STOP`)."""
    _schema_config: bool | None = PrivateAttr(default=None)
    """Whether the server takes the JSON-schema output config: None until a call tells; False after it refused it
    (a 400) and answered with the schema in the prompt instead."""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        import anthropic

        self._client = anthropic.Anthropic(api_key=self.api_key or "no-key-needed-by-this-gateway",
                                           base_url=self.base_url, timeout=self.timeout_s, max_retries=0,
                                           http_client=_deadline_client(self.timeout_s))
        self._prices = load_prices(self.prices_path)

    def enabled(self) -> bool:
        return True

    def mode_line(self) -> str:
        line = "on (model judgment on assumptions, red flags and wording; numbers, verdicts and routes are code)"
        if self._schema_config is False:
            line += ("; the server refused or ignored the JSON-schema output config, so the schema was asked in the "
                     "prompt and code validated every answer against it")
        if self._batches_refused is not None:
            line += (f"; the server refused the Message Batches API{self._batches_refused}, so the calls went through "
                     "the standard API at its full price: set the settings' model batch to false, or use a gateway "
                     "that serves batches")
        return line

    def knowledge_cutoff(self) -> date:
        return date.fromisoformat(self.knowledge_cutoff_date)

    # ---- cost --------------------------------------------------------------------------------------------
    def usd(self, model: str, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float:
        prices = self._prices or load_prices(self.prices_path)
        if model not in prices.models:
            raise ModelCallFailed(f"no price for model {model!r} in {self.prices_path}")
        return prices.usd(model, input_tokens, output_tokens, cache_write, cache_read)

    def worst_case_usd(self, spec: CallSpec) -> float:
        return self.usd(spec.model, spec.max_input_tokens, spec.max_tokens, 0, 0) * 2  # one retry of bad output

    def _affords_another(self, spec: CallSpec, billed: float) -> bool:
        """Whether one more attempt at its worst case keeps the night within its ceiling, for a call that has billed
        `billed` so far: what passes the call's reservation so far must fit beside the night's spending and the
        other calls' reservations, and is then reserved too (`_beyond`, released with the call's spending): calls
        retrying at the same moment each saw room for the same last attempt (trial 93: $1.04 billed against a
        ceiling of $0.75)."""
        attempt = self.usd(spec.model, spec.max_input_tokens, spec.max_tokens, 0, 0)
        held = getattr(self._beyond, "usd", 0.0)
        more = max(0.0, billed + attempt - self.worst_case_usd(spec) - held)
        night = (spec.domain, spec.as_of)
        with self._lock:
            if self._spent.get(night, 0.0) + self._reserved.get(night, 0.0) + more > spec.ceiling_usd:
                return False
            self._reserved[night] = self._reserved.get(night, 0.0) + more
        self._beyond.usd = held + more
        return True

    # ---- the call ----------------------------------------------------------------------------------------
    @staticmethod
    def cache_key(spec: CallSpec) -> str:
        canonical = json.dumps({"model": spec.model, "prompt": spec.prompt.version, "payload": spec.payload,
                                "schema": spec.output_type.__name__}, sort_keys=True, default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def _night(self, domain: str, as_of: date) -> None:
        """Load the night's stored answers (the replay cache) and spend once, in one store query."""
        with self._lock:
            if (domain, as_of) in self._loaded:
                return
            rows = self.store.model_calls_of(domain, as_of)
            self._spent[(domain, as_of)] = sum(float(r["usd"] or 0.0) for r in rows)
            self._cache.update({r["key"]: r for r in rows if r["response"] is not None})
            self._loaded.add((domain, as_of))

    def complete(self, spec: CallSpec, output_type: type[T]) -> tuple[T, ModelReply]:
        key = self.cache_key(spec)
        night = (spec.domain, spec.as_of)
        self._night(*night)
        stored = None if self.refresh else self._cache.get(key)
        replayed = _stored_answer(stored, output_type)
        if stored is not None and replayed is not None:
            with self._lock:
                self._uses.append(ModelUse(spec.domain, spec.as_of, spec.candidate_id, spec.role, key, True))
            return replayed, ModelReply(replayed, stored["input_tokens"], stored["output_tokens"],
                                        stored["cache_write_tokens"], stored["cache_read_tokens"], 0.0, True, key)
        stopped = self._stopped.get(_EVERY_MODEL) or self._stopped.get(spec.model)
        if stopped is not None:
            raise ModelCallFailed(f"{spec.role}: not sent; {MODEL_STOPPED}{stopped}")
        worst = self.worst_case_usd(spec)
        with self._lock:  # reserve the call's worst case: concurrent calls cannot overshoot the ceiling together
            committed = self._spent[night] + self._reserved.get(night, 0.0)
            if committed + worst > spec.ceiling_usd:
                raise BudgetExhausted(f"budget_exhausted: ${committed:.4f} spent or reserved tonight + worst "
                                      f"case ${worst:.4f} > ceiling ${spec.ceiling_usd:.2f}")
            self._reserved[night] = self._reserved.get(night, 0.0) + worst
        self._beyond.usd = 0.0
        try:
            batched = self.batch and self._batches_refused is None
            done = self._via_batch(spec, output_type) if batched else self._call(spec, output_type)
        except BaseException:
            with self._lock:
                self._reserved[night] -= worst + self._beyond.usd
            raise
        answer, usage, usd = done.answer, done.usage, done.usd
        # Failed calls are recorded too (no response, so never replayed): their tokens were billed.
        record = CallRecord(key=key if answer else f"{key}:failed:{time.time_ns()}", domain=spec.domain,
                            as_of=spec.as_of, candidate_id=spec.candidate_id, role=spec.role, model=spec.model,
                            prompt_version=spec.prompt.version, request=json.dumps(spec.payload, default=str),
                            response=answer.model_dump_json() if answer else None, input_tokens=usage[0],
                            output_tokens=usage[1], cache_write_tokens=usage[2], cache_read_tokens=usage[3],
                            usd=usd, attempts=done.attempts, error=done.problem)
        with self._lock:  # the reservation becomes the spending at once: no other call sees the room between
            self._reserved[night] -= worst + self._beyond.usd
            self._spent[night] += usd
            self._pending.append(record)
            self._uses.append(ModelUse(spec.domain, spec.as_of, spec.candidate_id, spec.role, record.key, False))
            if answer is not None:
                self._cache[key] = dataclasses.asdict(record)
        if answer is None:
            raise ModelCallFailed(done.problem or f"{spec.role}: no answer")
        return answer, ModelReply(answer, usage[0], usage[1], usage[2], usage[3], usd, False, key)

    def drain(self) -> ModelLog:
        """Call records and uses not yet written to the store; the asset writes them in its own transaction."""
        with self._lock:
            log = ModelLog(self._pending, self._uses)
            self._pending, self._uses = [], []
        return log

    @staticmethod
    def _params(spec: CallSpec, schema_in_prompt: bool = False) -> dict[str, Any]:
        """One Messages request: the shared system prompt cached, the payload as JSON, a JSON-schema answer. For a
        server that refuses the output config, the schema is asked for in a second system block instead: the
        answer is validated against it by code either way (`answer_json`)."""
        schema = _answer_schema(spec.output_type)
        system = [{"type": "text", "text": spec.prompt.text, "cache_control": {"type": "ephemeral"}}]
        request = {"model": spec.model, "max_tokens": spec.max_tokens, "system": system,
                   "messages": [{"role": "user", "content": json.dumps(spec.payload, default=str)}]}
        if schema_in_prompt:
            return {**request, "system": [*system, {"type": "text", "text": _SCHEMA_IN_PROMPT + json.dumps(schema)}]}
        return {**request, "output_config": {"format": {"type": "json_schema", "schema": schema}}}

    def _refused(self, spec: CallSpec, exc: anthropic.APIStatusError, attempts: int, fell_back: bool) -> str:
        """The problem line of a request the API refused (`fell_back`: also once asked with the schema in the
        prompt); a refusal no retry can change (`_STOPPING`, or the model's third request refused as invalid
        running: `_INVALID`, or its third call refused as busy after every retry running: `_BUSY_STOP`) also stops
        the night's calls to that model, so the other candidates' calls fail at once with the same fix."""
        problem = f"{spec.role}: HTTP {exc.status_code}{_error_type(exc.body)} after {attempts} attempt(s)"
        if exc.status_code == 400 and fell_back:
            problem += ", also with the schema in the prompt instead of the output config"
        stop = _STOPPING.get(exc.status_code)
        if exc.status_code in _INVALID:
            with self._lock:
                self._invalid[spec.model] = self._invalid.get(spec.model, 0) + 1
                stop = _INVALID_STOP if self._invalid[spec.model] >= INVALID_STOPPING else None
        elif exc.status_code in _TRANSIENT:
            stop = self._unanswered(spec, _BUSY_STOP)
        if stop is not None:
            with self._lock:
                self._stopped.setdefault(_EVERY_MODEL if exc.status_code == 401 else spec.model, stop)
            problem += f"; {MODEL_STOPPED}{stop}"
        return problem

    def _unanswered(self, spec: CallSpec, stop: str) -> str | None:
        """Count a call of the model that got no answer after every retry (busy, or lost); the `INVALID_STOPPING`th
        running, with no answer between, stops the night's calls to it (`stop`, which is returned)."""
        with self._lock:
            self._busy[spec.model] = self._busy.get(spec.model, 0) + 1
            if self._busy[spec.model] < INVALID_STOPPING:
                return None
            return self._stopped.setdefault(spec.model, stop)

    def _halted(self, spec: CallSpec) -> bool:
        """Whether the night stopped calling this call's model while the call waited to retry."""
        with self._lock:
            return _EVERY_MODEL in self._stopped or spec.model in self._stopped

    @staticmethod
    def _read(message: Any, output_type: type[T], worst: tuple[int, int]
              ) -> tuple[T | None, tuple[int, int, int, int], str | None]:
        """(answer, usage, problem) from one response: truncation, refusal, a schema mismatch, or a response that
        is no message (a gateway's page) is a problem. Usage the response does not report is billed at the
        call's worst case (`worst`: input, output tokens), so the night's budget never counts it as free."""
        if not isinstance(message, anthropic_types().Message):
            body = _unread(message) if isinstance(message, Exception) else _body_kind(message)
            return None, (*worst, 0, 0), f"the response is not a message ({body})"
        usage = _billed_usage(message.usage, worst)
        if message.type == "error":  # the SDK makes a "message" of any JSON object, an API error too
            return None, usage, f"an API error with status 200{_error_type({'error': getattr(message, 'error', None)})}"
        unfinished = _UNFINISHED.get(message.stop_reason) if isinstance(message.stop_reason, str) else None
        if unfinished is not None:
            return None, usage, f"{unfinished} answer (stop_reason {message.stop_reason})"
        if message.stop_reason == "refusal":
            return None, usage, "refusal"
        answer = _answer_in(message.content, output_type)
        if isinstance(answer, str):
            return None, usage, answer
        return answer, usage, None

    @classmethod
    def _read_safely(cls, message: Any, output_type: type[T], worst: tuple[int, int]
                     ) -> tuple[T | None, tuple[int, int, int, int], str | None]:
        """`_read`, and a response it could not read (a field of a type no API sends) is a bad answer billed at the
        worst case: what a server answers never raises past the call."""
        try:
            return cls._read(message, output_type, worst)
        except Exception as exc:
            return None, (*worst, 0, 0), f"the response could not be read ({type(exc).__name__})"

    def _sent(self, params: dict[str, Any]) -> Any:
        """The response to one request; one whose body does not decode as its content-encoding says is returned as
        that error, an answer no one can read (`_unread`), never raised as a connection lost: it was billed at its
        worst case, retried as lost, and three such stopped the night with "raise timeout_s" (trial 93)."""
        import anthropic

        assert self._client is not None, "setup_for_execution was not run"
        try:
            return self._client.messages.create(**params)
        except anthropic.APIConnectionError as exc:
            if _undecodable(exc):
                return exc.__cause__
            raise

    def _call(self, spec: CallSpec, output_type: type[T], bad_output_retries: int = 1) -> _Attempted[T]:
        """The standard API, with code-owned retries: transient errors up to `max_retries`, a bad answer up to
        `bad_output_retries` times."""
        import anthropic

        assert self._client is not None, "setup_for_execution was not run"
        total = _Attempted[T](None, (0, 0, 0, 0), 0.0, 0, None)
        transient = 0
        in_prompt, fell_back = self._schema_config is False, False
        while True:
            try:
                message: Any = self._sent(self._params(spec, in_prompt))
            except (anthropic.APIResponseValidationError, json.JSONDecodeError) as exc:  # a 200 whose body is no JSON
                message = exc
            except anthropic.APIStatusError as exc:
                total = total.plus_attempt()
                if exc.status_code == 400 and not in_prompt and self._schema_config is not True:
                    in_prompt = fell_back = True  # a server that refuses the output config: the schema in the prompt
                    continue
                if _retryable(exc.status_code, exc.response.headers.get("x-should-retry")) \
                        and transient < self.max_retries and not self._halted(spec):
                    transient += 1
                    time.sleep(self._wait(exc.response.headers.get("retry-after"), transient))
                    continue
                return total.failed(self._refused(spec, exc, total.attempts, fell_back))
            except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
                lost = _answer_lost(exc)
                usage = (spec.max_input_tokens, spec.max_tokens, 0, 0) if lost else (0, 0, 0, 0)
                total = total.plus_attempt(usage, self.usd(spec.model, *usage))
                if transient < self.max_retries and self._affords_another(spec, total.usd) and not self._halted(spec):
                    transient += 1
                    time.sleep(self._wait(None, transient))
                    continue
                timed_out = isinstance(exc, anthropic.APITimeoutError)
                stop = self._unanswered(spec, _SILENT_STOP if timed_out else _DROPPED_STOP) if lost else None
                return total.failed(_transport_problem(spec.role, exc, total.attempts, bool(total.usd))
                                    + (f"; {MODEL_STOPPED}{stop}" if stop else ""))
            except Exception as exc:  # the SDK could not read a 200's body (nested past the recursion limit, ...)
                message = exc
            message = _streamed_message(message)
            answer, usage, problem = self._read_safely(message, output_type, (spec.max_input_tokens, spec.max_tokens))
            total = total.plus_attempt(usage, self.usd(spec.model, *usage))
            if problem is None:
                if self._schema_config is None:  # the server answered: it takes the output config, or not
                    self._schema_config = not in_prompt
                with self._lock:
                    self._invalid.pop(spec.model, None)
                    self._busy.pop(spec.model, None)
                return total.answered(answer)
            if bad_output_retries <= 0 or self._halted(spec):
                stop = self._unanswered(spec, _UNREAD_STOP) if _no_answer_at_all(problem) else None
                return total.failed(f"{spec.role}: {problem}" + (", also after one retry" if total.attempts > 1
                                                                  else "") + (f"; {MODEL_STOPPED}{stop}" if stop
                                                                              else ""))
            bad_output_retries -= 1
            if problem == PROSE and not in_prompt and self._schema_config is not True:
                in_prompt = True  # a server that ignores the output config: the retry asks for the schema in the prompt

    # ---- the Message Batches API: calls made at the same moment go out as one batch, at the batch price ------
    def _via_batch(self, spec: CallSpec, output_type: type[T]) -> _Attempted[T]:
        waiting: Future[Any] = Future()
        with self._lock:
            self._queue.append((spec, waiting))
            if self._timer is None:
                self._timer = threading.Timer(self.batch_window_s, self._flush_batch)
                self._timer.daemon = True
                self._timer.start()
        outcome = waiting.result()
        prices = self._prices or load_prices(self.prices_path)
        if isinstance(outcome, str) and outcome != _LOST_ITEM:  # the batch or this item failed, unbilled: one try
            return self._call(spec, output_type, bad_output_retries=0)  # through the standard API
        # An ended batch's item without a readable result was answered, as far as anyone knows: its worst case.
        answer: T | None = None
        problem: str | None = "its result lost, billed at its worst case"
        usage = (spec.max_input_tokens, spec.max_tokens, 0, 0)
        if not isinstance(outcome, str):
            answer, usage, problem = self._read_safely(outcome, output_type, (spec.max_input_tokens, spec.max_tokens))
        batched = _Attempted[T](None, usage, self.usd(spec.model, *usage) * (1 - prices.batch_discount), 1, None)
        if problem is None:
            return batched.answered(answer)
        retried = self._call(spec, output_type, bad_output_retries=0)  # one retry of a bad or lost answer
        return _Attempted(retried.answer, tuple(a + b for a, b in zip(batched.usage, retried.usage, strict=True)),
                          batched.usd + retried.usd, 1 + retried.attempts,
                          None if retried.answer else f"{retried.problem}, after a bad batch answer ({problem})")

    def _flush_batch(self) -> None:
        with self._lock:
            items, self._queue, self._timer = self._queue, [], None
        assert self._client is not None
        ended = created = False
        try:
            batch = self._client.messages.batches.create(
                requests=[{"custom_id": f"c{i}", "params": self._params(spec, self._schema_config is False)}  # type: ignore[typeddict-item]
                          for i, (spec, _) in enumerate(items)])
            created = True
            deadline = time.monotonic() + self.batch_timeout_s
            while batch.processing_status != "ended":
                if time.monotonic() > deadline:
                    raise TimeoutError(f"batch {batch.id} not ended after {self.batch_timeout_s:.0f} s")
                time.sleep(self.batch_poll_s)
                batch = self._polled(batch)
            ended = True
            results = self._results(batch.id)
            for i, (_, waiting) in enumerate(items):
                waiting.set_result(_batch_outcome(results.get(f"c{i}")))
        except Exception as exc:
            import anthropic

            if not created and isinstance(exc, anthropic.APIStatusError) and exc.status_code in (403, 404, 405):
                # the creation itself refused: no Message Batches API at this base URL (trial 99: three batches a
                # night refused, every call then sent at full price, and nothing said so)
                self._batches_refused = _error_type(exc.body) or f" ({type(exc).__name__})"
            for _, waiting in items:
                if not waiting.done():  # once the batch ended, its items were answered: their results lost
                    waiting.set_result(_LOST_ITEM if ended else f"batch failed: {type(exc).__name__}")

    def _polled(self, batch: Any) -> Any:
        """The batch as the API says it is now, or as it was when a poll fails in a way a later poll may not (a 529,
        a dropped connection): the batch runs on at the server, and giving it up at one failed poll sent every item
        again through the standard API while the server answered and billed the batch too."""
        import anthropic

        assert self._client is not None
        try:
            return self._client.messages.batches.retrieve(batch.id)
        except anthropic.APIStatusError as exc:
            if _retryable(exc.status_code, exc.response.headers.get("x-should-retry")):
                return batch
            raise
        except anthropic.APIConnectionError:  # a timeout too
            return batch

    def _results(self, batch_id: str) -> dict[str, Any]:
        """The ended batch's results (`_batch_results`), fetched again up to `max_retries` times when the fetch fails
        in a way a later one may not: every item of an ended batch was answered, and a fetch given up bills each at
        its worst case and sends it again through the standard API."""
        import anthropic
        import httpx2 as httpx

        assert self._client is not None
        retry = 0
        while True:
            try:
                return _batch_results(self._client.messages.batches.results(batch_id))
            except anthropic.APIStatusError as exc:
                after = exc.response.headers.get("retry-after")
                if retry >= self.max_retries or not _retryable(exc.status_code,
                                                               exc.response.headers.get("x-should-retry")):
                    raise
            except (anthropic.APIConnectionError, httpx.TransportError):  # before or while the file is read
                after = None
                if retry >= self.max_retries:
                    raise
            retry += 1
            time.sleep(self._wait(after, retry))

    def _wait(self, retry_after: str | None, retry: int) -> float:
        """Seconds before a retry: the server's `retry-after` when it is a number of seconds (not an HTTP date,
        not NaN, which time.sleep refuses with a ValueError that escaped the call), else exponential backoff;
        either way from 0 to `max_retry_after_s`."""
        try:
            asked = float(retry_after) if retry_after is not None else math.nan
        except ValueError:
            asked = math.nan
        if math.isnan(asked):
            asked = 0.5 * 2 ** (retry - 1)
        return min(max(asked, 0.0), self.max_retry_after_s)
