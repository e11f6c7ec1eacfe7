"""The campaign's web server (Starlette, served by uvicorn): the judging page, the curator's live page and their
JSON API. Everything is addressed by a person's token; a request that changes state also needs the CSRF token
of the page (``X-CSRF-Token``), derived from the person's token with the campaign's secret. Pages are rendered
by Jinja2 with autoescaping and send a Content-Security-Policy that allows only the server's own scripts, and no
referrer, so that a token in the address never reaches Wikidata or a search engine. No request log carries a
token: uvicorn's access log is off and :class:`RedactedLog` writes the path with the token cut.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import threading
import time
from pathlib import Path

from ..pools.annotation.formats import VERIFIED_SOURCES
from .gate import Gate, judgment, parse_body
from .live import Live
from .protocol import SOURCE_PATTERN, ProtocolError, item_view, judge, next_item, number, undo, verified
from .store import connect, meta, person_by_token

log = logging.getLogger("kgeval.campaign")
HERE = Path(__file__).resolve().parent
# the live page's judgments still needed: computed for at most this long per look, the rest at the next look
# (every 400 ms), so that a judgment shows within a second (kgeval.campaign.live.Live.more)
MORE_SECONDS = 0.15
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                               "img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_TOKEN_AFTER = re.compile(r"((?:^|/)(?:j|live|api))/+[^/?#]+", re.IGNORECASE)
_TOKEN_LIKE = re.compile(r"(^|/)[A-Za-z0-9_\-%]{20,}(?=$|[/?#])")


def redact(path: str) -> str:
    """The request path for the log without a token: the segment after every ``j``, ``live`` or ``api`` segment
    (anywhere: ``/static/../api/<token>`` routes to the same place) and any segment long enough to be one."""
    path = _TOKEN_AFTER.sub(lambda m: f"{m.group(1)}/…", path)
    return _TOKEN_LIKE.sub(lambda m: f"{m.group(1)}…", path)


def csrf_token(secret: str, token: str) -> str:
    return hmac.new(secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def create_app(db: str | Path):
    """The ASGI application of the campaign file ``db``."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    first = connect(db)
    secret = meta(first)["secret"]
    # `campaign extend` bumps waves: then read it again
    live = [Live(first, more_seconds=MORE_SECONDS), meta(first).get("waves", "1")]
    order = None
    if meta(first).get("order") == "mtc":
        from .exact import MtcOrder

        order = MtcOrder(first)
    lock = threading.Lock()  # the live snapshot's cache is shared by the server's threads
    local = threading.local()
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))

    def conn():
        if getattr(local, "conn", None) is None:
            local.conn = connect(db)
        return local.conn

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status, headers=SECURITY_HEADERS)

    def who(request: Request, roles: tuple[str, ...]):
        person = person_by_token(conn(), request.path_params["token"])
        if person is None:
            raise ProtocolError(403, "unknown token: ask the curator for your link")
        if person["role"] not in roles:
            raise ProtocolError(403, f"this page is not for a {person['role']}")
        return person

    def checked(request: Request, roles: tuple[str, ...]):
        person = who(request, roles)
        sent = request.headers.get("x-csrf-token", "")
        if not hmac.compare_digest(sent, csrf_token(secret, request.path_params["token"])):
            raise ProtocolError(403, "missing or wrong X-CSRF-Token header (reload the page)")
        return person

    def api(roles: tuple[str, ...], write: bool = False):
        def wrap(fn):
            async def endpoint(request: Request):
                try:
                    # the gate has checked the token and read at most LIMIT bytes
                    body = parse_body(await request.body()) if write else None
                    from starlette.concurrency import run_in_threadpool

                    def run():
                        person = checked(request, roles) if write else who(request, roles)
                        return fn(person, body, request)

                    out = await run_in_threadpool(run)
                except ProtocolError as exc:
                    return error(exc.status, str(exc))
                return JSONResponse(out, headers=SECURITY_HEADERS)
            return endpoint
        return wrap

    @api(("annotator", "adjudicator", "curator"))
    def session(person, body, request):
        return {"person": person["name"], "role": person["role"],
                "csrf": csrf_token(secret, request.path_params["token"])}

    def view(person):  # the person's next item as the page shows it
        c = conn()
        return item_view(c, person, next_item(c, person, order))

    @api(("annotator", "adjudicator"))
    def next_(person, body, request):
        return view(person)

    @api(("annotator", "adjudicator"), write=True)
    def judge_(person, body, request):
        item, label, source, note, seconds = judgment(body)
        jid = judge(conn(), person, item, label, source, note, seconds)
        out = {"ok": True, "judgment": jid, "number": number(conn(), item)}
        if source.strip() and not verified(source.strip()):
            out["hint"] = "this site is not on the protocol's verified list: the curator will check it"
        if body.get("next") is True:  # the page's next item in the same round trip: the judge waits one, not two
            out["next"] = view(person)
        return out

    @api(("annotator", "adjudicator"), write=True)
    def undo_(person, body, request):
        item = undo(conn(), person)
        return {"undone": item, "number": number(conn(), item)}

    @api(("curator",))
    def live_(person, body, request):
        with lock:
            waves = meta(conn()).get("waves", "1")
            if waves != live[1]:  # a wave was added (kgeval campaign extend): new items, new comparisons
                live[:] = [Live(conn(), more_seconds=MORE_SECONDS), waves]
            return live[0].snapshot(conn())

    def page(template: str, roles: tuple[str, ...]):
        async def endpoint(request: Request):
            from starlette.concurrency import run_in_threadpool

            try:
                person = await run_in_threadpool(who, request, roles)
            except ProtocolError as exc:
                html = env.get_template("refused.html").render(message=str(exc))
                return HTMLResponse(html, exc.status, headers=SECURITY_HEADERS)
            token = request.path_params["token"]
            html = env.get_template(template).render(person=person["name"], role=person["role"], token=token,
                                                     csrf=csrf_token(secret, token), title=meta(conn())["title"],
                                                     verified=VERIFIED_SOURCES, source_pattern=SOURCE_PATTERN)
            return HTMLResponse(html, headers=SECURITY_HEADERS)
        return endpoint

    async def static(request: Request):
        name = request.path_params["name"]
        if name not in ("judge.js", "live.js", "campaign.css"):
            return Response("not found", 404)
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return FileResponse(HERE / "static" / name, media_type=kind, headers={"Cache-Control": "no-cache"})

    routes = [
        Route("/j/{token}", page("judge.html", ("annotator", "adjudicator"))),
        Route("/live/{token}", page("live.html", ("curator",))),
        Route("/static/{name}", static),
        Route("/api/{token}/session", session),
        Route("/api/{token}/next", next_),
        Route("/api/{token}/judge", judge_, methods=["POST"]),
        Route("/api/{token}/undo", undo_, methods=["POST"]),
        Route("/api/{token}/live", live_),
    ]
    app = Starlette(routes=routes)
    # every route whose path holds a token ("/api/{token}/…") is behind the token check of the gate
    prefixes = {r.path.split("/")[1] for r in routes if r.path.split("/")[2:3] == ["{token}"]}
    return RedactedLog(Gate(app, lambda token: person_by_token(conn(), token) is not None, prefixes,
                            SECURITY_HEADERS))


class RedactedLog:
    """ASGI middleware: one log line per request, its path with the token cut."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.perf_counter(), [0]

        async def send_(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        await self.app(scope, receive, send_)
        log.info("%s %s %d %.1f ms", scope["method"], redact(scope["path"]), status[0],
                 1000 * (time.perf_counter() - start))


def serve(db: str | Path, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve until interrupted (uvicorn, one process: SQLite has one writer anyway), closing a connection whose
    request (head and body) is not complete in time (:mod:`kgeval.campaign.slow`)."""
    import uvicorn

    from .slow import protocol

    uvicorn.run(create_app(db), host=host, port=port, access_log=False, log_level="warning", http=protocol())
