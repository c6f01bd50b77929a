"""A local Anthropic-compatible Messages API for tests and benchmarks: stdlib only, 127.0.0.1, random port.

The real `anthropic` SDK is pointed at it with `base_url`. It answers `POST /v1/messages` with valid
structured JSON for the requested schema (recognised by the schema's title), records every request, and
can be scripted: per request, a queue of faults or answers, or a function of the request.

    with FakeAnthropic(latency=0.0) as server:
        server.script("429", "ok")            # the next two requests: a 429 with retry-after, then normal
        server.answer_with(lambda request: {...})  # default answer for a schema title
        client = anthropic.Anthropic(api_key="test", base_url=server.url)
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = Callable[[dict[str, Any]], dict[str, Any]]

_WIRE = ("close", "drip", "gzip", "chunked", "sse", "redirect")
"""Actions about the wire, not the message: closed without a response, a drip, gzip, chunked, an SSE body, a 308 to
the same path (a redirect loop)."""

RAW = "__raw_body"
"""A payload holding this key is sent as its text as it is, not as JSON (a body that is no message)."""


def estimate_tokens(text: str) -> int:
    return max(1, round(len(text) / 3.5))


def _schema_title(request: dict[str, Any]) -> str:
    """The answer schema's title: from the output config, or else from a schema the system prompt holds."""
    fmt = (request.get("output_config") or {}).get("format") or {}
    if fmt:
        return str((fmt.get("schema") or {}).get("title", ""))
    system = request.get("system") or []
    last = system if isinstance(system, str) else (system[-1].get("text", "") if system else "")
    try:
        schema, _ = json.JSONDecoder().raw_decode(last[last.find('{"'):])
    except json.JSONDecodeError:
        return ""
    return str(schema.get("title", "")) if isinstance(schema, dict) else ""


def default_answer(request: dict[str, Any]) -> dict[str, Any]:
    """A plausible, schema-valid answer for each of the product's roles."""
    title = _schema_title(request)
    prompt = json.dumps(request.get("messages", []))
    if title == "AnalyzerJudgment":
        return {"assumptions": ["Rental demand follows sales demand in this market.",
                                "No large new-build supply arrives within the holding horizon."],
                "red_flags": [], "reasoning": "The score rests mostly on tightening inventory."}
    if title == "VerifierJudgment":
        return {"findings": [{"check": "assumptions", "cites": "numbers.inventory_3m",
                              "finding": "Inventory is averaged over only three months; seasonality could "
                                         "explain part of the drop.", "effect": "note"}],
                "fatal_assumption": None}
    if title == "BriefWording":
        ids = [c for c in json.loads(request["messages"][0]["content"]).get("candidates", [])]
        return {"lines": [{"candidate_id": c["candidate_id"],
                           "text": "Call two local property managers about rents this week."} for c in ids]}
    return {"note": f"unknown schema {title!r} in {prompt[:40]}"}


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


@dataclass
class _State:
    latency: float = 0.0
    token_multiplier: int = 1
    scripted: list[str | dict[str, Any]] = field(default_factory=list)
    answers: dict[str, Answer] = field(default_factory=dict)
    rules: list[tuple[Callable[[dict[str, Any]], bool], str]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    cached_systems: set[str] = field(default_factory=set)
    poll_faults: list[int] = field(default_factory=list)
    """Statuses the next polls of a batch get (`fail_polls`), in order."""
    results_faults: list[int] = field(default_factory=list)
    """Statuses the next fetches of a batch's results get (`fail_polls(..., results=True)`), in order."""
    lock: threading.Lock = field(default_factory=threading.Lock)


def _respond(state: _State, action: str | dict[str, Any], body: dict[str, Any]
             ) -> tuple[int, dict[str, Any], dict[str, str], float]:
    """(status, payload, headers, seconds to wait before answering) for one Messages request."""

    def error(status: int, kind: str, headers: dict[str, str] | None = None, wait: float = 0.0):
        return status, {"type": "error", "error": {"type": kind, "message": f"scripted {status}"}}, headers or {}, wait

    def message(text: str, stop_reason: str = "end_turn", wait: float = 0.0):
        system = body.get("system") or []
        system_text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
        cached = not isinstance(system, str) and any(b.get("cache_control") for b in system)
        prompt_tokens = estimate_tokens(json.dumps(body.get("messages", [])))
        system_tokens = estimate_tokens(system_text)
        scale = state.token_multiplier
        usage = {"input_tokens": (prompt_tokens + (0 if cached else system_tokens)) * scale,
                 "output_tokens": estimate_tokens(text) * scale,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if cached:
            with state.lock:
                hit = system_text in state.cached_systems
                state.cached_systems.add(system_text)
            usage["cache_read_input_tokens" if hit else "cache_creation_input_tokens"] = system_tokens
        return 200, {"id": f"msg_{len(state.requests)}", "type": "message", "role": "assistant",
                     "model": body.get("model"), "content": [{"type": "text", "text": text}],
                     "stop_reason": stop_reason, "stop_sequence": None, "usage": usage}, {}, wait

    def answer() -> str:
        return json.dumps(state.answers.get(_schema_title(body), default_answer)(body))

    if isinstance(action, dict):  # a literal JSON answer
        return message(json.dumps(action), wait=state.latency)
    kind, _, arg = action.partition(":")
    if kind == "429":
        return error(429, "rate_limit_error", {"retry-after": arg or "0"})
    if kind == "529":
        return error(529, "overloaded_error")
    if kind == "500":
        return error(500, "api_error")
    if kind == "noretry":  # a transient status the server says no retry will lift ("noretry:429")
        kinds = {"429": "rate_limit_error", "500": "api_error", "529": "overloaded_error"}
        return error(int(arg), kinds.get(arg, "api_error"), {"x-should-retry": "false", "retry-after": "0"})
    if kind == "hang":  # read timeout: answer long after the client gave up
        return error(500, "api_error", wait=float(arg or 5))
    if kind == "slow":
        return message(answer(), wait=float(arg or 1))
    if kind == "truncate":
        return message(answer()[:25], stop_reason="max_tokens")
    if kind == "prose":  # a server that ignores the output config: the model answers the prompt in prose
        return message("The market looks tight; I would check rents before acting.")
    if kind == "refuse":
        return message("I can't help with that.", stop_reason="refusal")
    if kind == "malformed":
        return message('{"assumptions": ["unterminated')
    if kind == "twice":  # the answer's first key written twice in its object, the first value a contradiction
        text = answer()
        key = next(iter(json.loads(text)))
        return message('{' + f'"{key}": "the other value", ' + text[1:])
    if kind == "fenced":  # a gateway that ignores the JSON-schema output config: prose around a fenced answer
        return message(f"Here is my review.\n```json\n{answer()}\n```\nLet me know if you need more.")
    if kind == "thinking":  # a thinking block before the answer's text block
        status, payload, headers, wait = message(answer())
        payload["content"].insert(0, {"type": "thinking", "thinking": "Weighing {the inputs}.", "signature": "s"})
        return status, payload, headers, wait
    if kind in ("nousage", "nullusage", "nocontent"):  # a 200 message missing what the API always sends
        status, payload, headers, wait = message(answer())
        if kind == "nousage":
            del payload["usage"]
        elif kind == "nullusage":
            payload["usage"] = {"input_tokens": None, "output_tokens": None}
        else:
            payload["content"] = None
        return status, payload, headers, wait
    if kind in ("400", "401", "403", "404"):  # the request itself is refused: a retry gets the same answer
        return error(int(kind), {"400": "invalid_request_error", "401": "authentication_error",
                                 "403": "permission_error", "404": "not_found_error"}[kind])
    if kind == "stop":  # any stop_reason, known or not ("stop:pause_turn")
        return message(answer(), stop_reason=arg)
    if kind == "cut":  # the answer cut before its last brace, with any stop_reason ("cut:end_turn"): whole inner
        return message(answer()[:answer().rindex("}")], stop_reason=arg or "max_tokens")  # objects, no outer one
    if kind in ("tooluse", "split", "unknownblock"):  # the answer's JSON in other content blocks
        status, payload, headers, wait = message(answer())
        text = payload["content"][0]["text"]
        payload["content"] = {
            "tooluse": [{"type": "tool_use", "id": "toolu_1", "name": "answer", "input": json.loads(text)}],
            "split": [{"type": "text", "text": text[:10]}, {"type": "text", "text": text[10:]}],
            "unknownblock": [{"type": "citations_delta_v9", "data": {"x": 1}}, {"type": "text", "text": text}],
        }[kind]
        return status, payload, headers, wait
    if kind == "content":  # the message's content as scripted JSON ("content:[{\"type\": \"text\"}]")
        status, payload, headers, wait = message(answer())
        payload["content"] = json.loads(arg)
        return status, payload, headers, wait
    if kind == "usage":  # reported usage as scripted: "usage:-5000", "usage:99999999999", "usage:abc" (input and
        # output), or "usage:<input>,<output>,<cache write>,<cache read>"
        status, payload, headers, wait = message(answer())
        values: list[Any] = [int(v) if v.lstrip("-").isdigit() else v for v in arg.split(",")]
        counts = dict(zip(("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
                          values * 2 if len(values) == 1 else values, strict=False))
        payload["usage"] = {**counts, "server_tool_use": {"web": 1}, "service_tier": "standard",
                            "brand_new_counter": 7}
        return status, payload, headers, wait
    if kind == "raw":  # any status, content type and body: "raw:200|application/json|null"
        status_text, content_type, raw_body = arg.split("|", 2)
        return int(status_text), {RAW: raw_body}, {"content-type": content_type} if content_type else {}, 0.0
    if kind in ("html", "notjson", "array"):  # a 200 that is no message at all (a proxy's page, a cut body)
        raw = {"html": "<html><body>502 Bad Gateway</body></html>", "notjson": '{"id": "msg_1", "type": "mess',
               "array": "[]"}[kind]
        return 200, {RAW: raw}, {"content-type": "text/html" if kind == "html" else "application/json"}, 0.0
    return message(answer(), wait=state.latency)


def _event_stream(message: dict[str, Any]) -> str:
    """A message as the Messages API streams it: start, one text block in pieces, the stop reason and usage."""
    text = message["content"][0]["text"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[at:at + 40]}}
          for at in range(0, len(text), 40)),
        {"type": "content_block_stop", "index": 0}, {"type": "ping"},
        {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
         "usage": {"output_tokens": message["usage"]["output_tokens"]}},
        {"type": "message_stop"}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    """socketserver's default listen backlog is 5: a night's 30 simultaneous connections overflowed it and the
    dropped ones waited for the client's 1 s SYN retry, a delay the real API does not add."""


class FakeAnthropic:
    """Start with `with FakeAnthropic() as server:`; `server.url` is the base URL for the SDK.

    Also the Message Batches API: `POST /v1/messages/batches` answers every request as above, the batch ends
    `batch_delay` seconds later (`GET /v1/messages/batches/{id}`), and its results are JSONL at
    `/v1/messages/batches/{id}/results`."""

    def __init__(self, latency: float = 0.0, token_multiplier: int = 1, batch_delay: float = 0.0) -> None:
        """`token_multiplier` inflates reported usage (a bill bigger than the estimate, for budget tests)."""
        self._state = _State(latency=latency, token_multiplier=token_multiplier)
        state = self._state
        batches: dict[str, dict[str, Any]] = {}

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: Nagle + delayed ACK added 40 ms a call

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def _record(self, body: dict[str, Any]) -> str | dict[str, Any]:
                with state.lock:
                    rule = next((action for when, action in state.rules if when(body)), None)
                    state.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                                   time.time()))
                    return rule or (state.scripted.pop(0) if state.scripted else "ok")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0].rstrip("/")
                if path == "/v1/messages":
                    action = self._record(body)
                    if isinstance(action, str) and action.partition(":")[0] in _WIRE:
                        self._wire(action, body)
                        return
                    status, payload, headers, wait = _respond(state, action, body)
                    time.sleep(wait)
                    self._send(status, payload, headers)
                elif path == "/v1/messages/batches":
                    results: list[dict[str, Any]] = []
                    for item in body.get("requests", []):
                        action = self._record(item["params"])
                        if action == "unreadable":  # the item's line in the results file is no JSON (a hiccup)
                            results.append({RAW: "<html><body>502 Bad Gateway</body></html>"})
                            continue
                        status, payload, _, _ = _respond(state, action, item["params"])
                        result = {"type": "succeeded", "message": payload} if status == 200 else \
                            {"type": "errored", "error": payload}
                        results.append({"custom_id": item["custom_id"], "result": result})
                    batch_id = f"msgbatch_{len(batches) + 1}"
                    batches[batch_id] = {"results": results, "ends_at": time.time() + batch_delay}
                    self._send(200, self._batch(batch_id))
                else:
                    self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].rstrip("/").split("/")
                if len(parts) >= 5 and parts[1:4] == ["v1", "messages", "batches"] and parts[4] in batches:
                    results = len(parts) == 6 and parts[5] == "results"
                    with state.lock:
                        faults = state.results_faults if results else state.poll_faults
                        fault = faults.pop(0) if faults else None
                    if fault is not None:
                        self._send(fault, {"type": "error", "error": {"type": "overloaded_error" if fault == 529
                                                                      else "api_error", "message": "scripted"}})
                        return
                    if results:
                        lines = "\n".join(r[RAW] if RAW in r else json.dumps(r)
                                           for r in batches[parts[4]]["results"]).encode()
                        self._write(200, lines, {"content-type": "application/binary"})
                        return
                    self._send(200, self._batch(parts[4]))
                    return
                self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

            def _wire(self, action: str, body: dict[str, Any]) -> None:
                """A normal answer sent in an unusual way on the wire (see `_WIRE`)."""
                kind, _, arg = action.partition(":")
                if kind == "close":  # the connection closed with no response at all
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if kind == "redirect":  # a gateway sending every request back where it came from
                    self.send_response(308)
                    self.send_header("location", self.path)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                _, payload, _, _ = _respond(state, "ok", body)
                data = json.dumps(payload).encode()
                self.send_response(200)
                if kind == "gzip":  # "gzip:bare": compressed with no content-encoding saying so (a proxy's slip);
                    data = data if arg == "lie" else gzip.compress(data)  # "gzip:lie": said so, not compressed
                    if arg != "bare":
                        self.send_header("content-encoding", "gzip")
                if kind == "sse":  # the answer as a stream nobody asked for
                    data = _event_stream(payload).encode()
                    self.send_header("content-type", "text/event-stream")
                else:
                    self.send_header("content-type", "application/json")
                if kind == "chunked":
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for at in range(0, len(data), 50):
                        piece = data[at:at + 50]
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    if kind == "drip":  # one byte every `arg` seconds: each read is quick, the whole is not
                        for byte in data:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(float(arg or 0.1))
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def _batch(self, batch_id: str) -> dict[str, Any]:
                batch = batches[batch_id]
                ended = time.time() >= batch["ends_at"]
                ok = sum(1 for r in batch["results"] if r.get("result", {}).get("type") == "succeeded")
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                return {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else
                        "in_progress", "created_at": now, "expires_at": now, "ended_at": now if ended else None,
                        "request_counts": {"processing": 0 if ended else len(batch["results"]),
                                           "succeeded": ok if ended else 0,
                                           "errored": len(batch["results"]) - ok if ended else 0,
                                           "canceled": 0, "expired": 0},
                        "results_url": f"{server_url()}/v1/messages/batches/{batch_id}/results" if ended else None}

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = payload[RAW] if RAW in payload else json.dumps(payload)
                try:
                    self._write(status, data.encode(), headers)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up first (a scripted timeout): nothing to answer

            def _write(self, status: int, data: bytes, headers: dict[str, str] | None) -> None:
                self.send_response(status)
                headers = {"content-type": "application/json", **(headers or {})}
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{len(state.requests)}")
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        def server_url() -> str:
            return self.url

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ---- control ---------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def script(self, *actions: str | dict[str, Any]) -> None:
        """Queue what the next requests get: "ok", "429:<retry-after s>", "529", "500", "noretry:<status>",
        "hang:<s>", "slow:<s>", "truncate", "refuse", "malformed", "fenced", "thinking", "nousage", "nullusage",
        "nocontent", "html", "notjson", "array", "400", "401", "403", "404", "prose", "twice", "stop:<stop_reason>",
        "cut:<stop_reason>", "tooluse", "split", "unknownblock", "content:<JSON>", "raw:<status>|<content type>|<body>",
        "usage:<count>", or on the wire "close", "drip:<s a byte>", "gzip", "gzip:bare", "gzip:lie", "chunked", "sse",
        "redirect", or for a batch item "unreadable" (its line in the results file is no JSON); or a dict answered as
        the JSON text."""
        with self._state.lock:
            self._state.scripted.extend(actions)

    def fail_polls(self, *statuses: int, results: bool = False) -> None:
        """The next polls of any batch (`GET /v1/messages/batches/{id}`), or with `results` the next fetches of its
        results, get these error statuses, in order."""
        with self._state.lock:
            (self._state.results_faults if results else self._state.poll_faults).extend(statuses)

    def fail_when(self, when: Callable[[dict[str, Any]], bool], action: str) -> None:
        """Every request for which `when(body)` holds gets `action` (see `script`), for as long as the server runs.
        `when` runs under the server's lock: it must not call back into the server."""
        with self._state.lock:
            self._state.rules.append((when, action))

    def answer_with(self, schema_title: str, answer: Answer) -> None:
        self._state.answers[schema_title] = answer

    @property
    def requests(self) -> list[Recorded]:
        with self._state.lock:
            return list(self._state.requests)

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def main() -> None:
    """`python -m tests.fake_anthropic --latency 2 --record requests.jsonl`: the server in a process of its own,
    for benchmarks (in the measured process it would compete with the night for the GIL, which the real API
    does not). Prints its URL, serves until stdin closes, then writes the recorded requests as JSON lines."""
    import argparse
    import sys

    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--record", default=None, help="JSON-lines file for the recorded requests")
    args = parser.parse_args()
    with FakeAnthropic(latency=args.latency) as server:
        print(server.url, flush=True)
        sys.stdin.read()
        if args.record:
            with open(args.record, "w") as out:
                for r in server.requests:
                    out.write(json.dumps({"path": r.path, "body": r.body, "at": r.at}) + "\n")


if __name__ == "__main__":
    main()
