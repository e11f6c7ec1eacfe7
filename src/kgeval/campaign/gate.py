"""The gate in front of every route of the campaign's server, and the one place a request body is checked.

:class:`Gate` is ASGI middleware: it refuses more than 100 headers or 16 kB of them (431), an unknown token in the path (403) *before* reading a byte of the
body, then reads the body in chunks and stops at :data:`LIMIT` (413), whether or not the request announced a
``Content-Length`` (a chunked body announces none). A route behind it so receives at most ``LIMIT`` bytes from
a person the campaign knows: a forged token cannot make the server hold a large body in memory.
:func:`parse_body` and :func:`judgment` turn those bytes into checked values (type, range, length of every
field), so that no request reaches SQLite or ``float()`` with a value that raises there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from .protocol import LABELS, ProtocolError

LIMIT = 20_000  # bytes: a judgment with a 2000-character link and a 5000-character note is well below
MAX_ITEM = 2**62  # SQLite's INTEGER is 64-bit signed: a larger number raises inside the driver
MAX_SECONDS = 1e7
MAX_HEADERS, MAX_HEADER_BYTES = 100, 16_000  # a browser sends about 15 headers, a few hundred bytes each
FIELDS = ("item", "label", "source", "note", "seconds", "next")  # next: the reply brings the next item too


async def _respond(send, status: int, message: str, headers: dict[str, str]) -> None:
    body = json.dumps({"error": message}).encode()
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    # the unread rest of a refused body is never read: the connection is closed, not reused
    raw += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class Gate:
    """ASGI middleware: the token first, then a body of at most ``limit`` bytes, replayed to ``app``.
    ``known(token)``: whether a token belongs to a person (run in a thread: it reads SQLite);
    ``prefixes``: the first path segments whose second segment is a token (``/api/{token}/…``)."""

    def __init__(self, app, known: Callable[[str], bool], prefixes: set[str], headers: dict[str, str],
                 limit: int = LIMIT):
        self.app, self.known, self.prefixes, self.headers, self.limit = app, known, prefixes, headers, limit
        # tokens found once stay valid (no command removes a person): the common request skips SQLite and the
        # thread pool; an unknown one is looked up every time, since add-person may register it meanwhile
        self.seen: set[str] = set()

    def token(self, path: str) -> str | None:
        parts = path.split("/")
        return parts[2] if len(parts) > 2 and parts[1] in self.prefixes else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from starlette.concurrency import run_in_threadpool

        headers = scope["headers"]
        if len(headers) > MAX_HEADERS or sum(len(k) + len(v) for k, v in headers) > MAX_HEADER_BYTES:
            return await _respond(send, 431, f"request headers over {MAX_HEADERS} or {MAX_HEADER_BYTES // 1000} kB",
                                  self.headers)
        token = self.token(scope["path"])
        if token is not None and token not in self.seen:
            if len(token) > 200 or not await run_in_threadpool(self.known, token):
                return await _respond(send, 403, "unknown token: ask the curator for your link", self.headers)
            self.seen.add(token)
        length = dict(headers).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await _respond(send, 413, f"request body over {self.limit // 1000} kB", self.headers)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:  # stop reading here: the rest never enters memory
                return await _respond(send, 413, f"request body over {self.limit // 1000} kB", self.headers)
            chunks.append(chunk)
            more = message.get("more_body", False)
        replayed = [False]

        async def replay():
            if not replayed[0]:
                replayed[0] = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


def parse_body(raw: bytes) -> dict:
    """The JSON object of a request body (empty: ``{}``); anything else is a 400 with one line."""
    def constant(name):
        raise ValueError(name)

    try:
        body = json.loads(raw or b"{}", parse_constant=constant)
    except RecursionError:
        raise ProtocolError(400, "the request body is nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise ProtocolError(400, "the request body is not a JSON object")
    return body


def _number(value, name: str, low: float, high: float, integer: bool = False):
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        raise ProtocolError(400, f"{name}: expected {'an integer' if integer else 'a number'}")
    # compared before float(): an int of 400 digits overflows float, a float may be nan
    if not (low <= value <= high) or (isinstance(value, float) and not math.isfinite(value)):
        raise ProtocolError(400, f"{name}: expected a number from {low:g} to {high:g}")
    return value


def judgment(body: dict) -> tuple[int, str, str, str, float | None]:
    """A judgment's fields, checked: (item, label, source, note, seconds)."""
    extra = sorted(set(body) - set(FIELDS))
    if extra:
        raise ProtocolError(400, f"unknown field {extra[0][:40]!r}: expected {', '.join(FIELDS)}")
    if not isinstance(body.get("next", False), bool):
        raise ProtocolError(400, "next: expected true or false")
    item = _number(body.get("item"), "item", 1, MAX_ITEM, integer=True)
    label = body.get("label")
    if not isinstance(label, str) or label.lower() not in LABELS:
        raise ProtocolError(400, "label: expected y, n or u")
    source, note = (body.get(k) if body.get(k) is not None else "" for k in ("source", "note"))  # not `or`: {}
    if not isinstance(source, str) or not isinstance(note, str):
        raise ProtocolError(400, "source and note: expected text")
    if len(source) > 2000 or len(note) > 5000:
        raise ProtocolError(400, "source: at most 2000 characters; note: at most 5000")
    try:  # JSON may carry a lone surrogate ("\\ud800"), which SQLite's UTF-8 cannot store
        source.encode("utf-8"), note.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(400, "source and note: expected valid Unicode text") from None
    seconds = body.get("seconds")
    if seconds is not None:
        seconds = float(_number(seconds, "seconds", 0, MAX_SECONDS))
    return item, label.lower(), source, note, seconds
