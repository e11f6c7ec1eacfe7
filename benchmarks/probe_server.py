"""Probe the new surfaces as an attacker and a careless user would (issue 49), on loopback only, bounded.

    python benchmarks/probe_server.py [--out OUT] [--budget-s 300] [--big-mb 400] [--slow 50]

A small campaign (a hand-written 6-item sheet) served by ``kgeval campaign serve`` as its own process on
127.0.0.1, then every case below sent over a raw socket (so that nothing in a client library repairs a request):
wrong methods, huge and many headers, malformed and oversized Content-Length, chunked bodies, a forged token in
front of a deep or huge body, JSON of every wrong type and range, Unicode, the CSRF header missing, forged or
another person's, the token in the query or a header instead of the path, path traversal in the static route;
a chunked POST of ``--big-mb`` MB with a forged token, the server's RSS read before and after (psutil); then a
campaign file missing its ``judgments`` table given to ``serve``; then, in this process, sampling sidecars
tampered, the PyKEEN evaluator's arguments and ``reanalyze``'s inputs. Slow clients (issue 60), at once, each
bounded by ``SLOW_BOUND_S``: ``--slow`` half-sent heads held open while a whole request is timed, a connection that
sends nothing, a head trickled a byte a second, a kept-alive connection's half second head, and a whole head
whose announced body never comes. Each case prints
``case | expected | got`` and counts as found when ``got`` is not what was expected; the exit status is 1 if any
was. Count-bounded (the fixed list) and time-bounded (``--budget-s``: cases past it are skipped and counted).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import heartbeat_main, write_sheet  # noqa: E402
from campaign_fixtures import CAMPAIGN, Server, free_port  # noqa: E402


class Probe:
    def __init__(self, budget_s: float):
        self.rows: list[tuple[str, str, str, bool]] = []
        self.deadline = time.monotonic() + budget_s
        self.skipped = 0

    def case(self, name: str, expected, fn) -> None:
        """``expected``: a collection of acceptable answers (status codes or words); ``fn()`` the answer got."""
        if time.monotonic() > self.deadline:
            self.skipped += 1
            return
        name = name.encode("utf-8", "backslashreplace").decode()  # a case may name a lone surrogate
        try:
            got = fn()
        except Exception as exc:  # a probe's own failure is a finding too, never a crash of the probe
            got = f"{type(exc).__name__}: {str(exc)[:120]}"
        ok = got in expected if not callable(expected) else bool(expected(got))
        shown = "|".join(map(str, expected)) if not callable(expected) else expected.__doc__ or "check"
        self.rows.append((name, shown, str(got)[:160], ok))
        print(f"{name} | {shown} | {str(got)[:160]}{'' if ok else '   <-- FOUND'}", flush=True)


def raw(port: int, request: bytes, body_chunks=None, timeout: float = 10.0) -> str:
    """Send ``request`` (head and body as bytes; with ``body_chunks``, an HTTP/1.1 chunked body after the head)
    and return the status code, or ``closed`` when the server hung up without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(request)
            for chunk in body_chunks or ():
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            if body_chunks is not None:
                s.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        data = b""
        try:
            while b"\r\n" not in data:
                more = s.recv(65536)
                if not more:
                    break
                data += more
        except OSError:
            pass
    line = data.split(b"\r\n", 1)[0].split()
    return line[1].decode() if len(line) > 1 else "closed"


def http(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> str:
    h = {"Host": "127.0.0.1", "Connection": "close", **(headers or {})}
    if body is not None:
        h.setdefault("Content-Length", str(len(body)))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
    return raw(port, head.encode("utf-8", "surrogateescape") + (body or b""))


def status_and_error(port: int, method: str, path: str, body: bytes, headers: dict) -> str:
    """``<status> <one line?>``: whether the JSON error is one line (a traceback never is)."""
    h = {"Host": "127.0.0.1", "Connection": "close", "Content-Length": str(len(body)), **headers}
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.encode() + body)
        data = b""
        while True:
            more = s.recv(65536)
            if not more:
                break
            data += more
    status = data.split(b"\r\n", 1)[0].split()[1].decode()
    payload = data.split(b"\r\n\r\n", 1)[1]
    try:
        error = json.loads(payload).get("error", "")
    except ValueError:
        return f"{status} not-json"
    return f"{status} {'one-line' if error and chr(10) not in error else 'ok' if not error else 'multi-line'}"


def rss_mb(pid: int) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def big_chunked(port: int, path: str, csrf: str, megabytes: int, bound_s: float) -> tuple[str, float]:
    """A chunked POST of ``megabytes`` MB (1 MB chunks) to ``path``; (status, MB the server took before it
    hung up)."""
    sent = [0]
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nX-CSRF-Token: {csrf}\r\n"
            "Content-Type: application/json\r\n\r\n").encode()
    start = time.monotonic()

    def chunks():
        block = b" " * 2**20
        for _ in range(megabytes):
            if time.monotonic() - start > bound_s:
                return
            sent[0] += 1
            yield block

    status = raw(port, head, chunks(), timeout=bound_s)
    return status, float(sent[0])


SLOW_BOUND_S = 40.0  # a slow connection still open after this long counts as held


def _until_closed(sock: socket.socket, bound_s: float) -> tuple[str, float]:
    """(the status the server sent before closing, or ``closed`` or ``held``; seconds until then)."""
    sock.settimeout(1.0)
    start, data = time.monotonic(), b""
    while time.monotonic() - start < bound_s:
        try:
            more = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            break
        if not more:
            break
        data += more
    else:
        return "held", bound_s
    line = data.split(b"\r\n", 1)[0].split()
    return (line[1].decode() if len(line) > 1 else "closed"), time.monotonic() - start


def slow_cases(p: Probe, port: int, token: str, n_slow: int) -> None:
    """The slow-client family: every connection opened at once, then each one's end awaited (bounded)."""
    conns: dict[str, socket.socket] = {}
    head = f"GET /api/{token}/session HTTP/1.1\r\nHost: x\r\n".encode()
    for i in range(n_slow):
        conns[f"half head {i}"] = socket.create_connection(("127.0.0.1", port), timeout=10)
        conns[f"half head {i}"].sendall(head + b"X-Slow: ")
    conns["nothing sent"] = socket.create_connection(("127.0.0.1", port), timeout=10)
    kept = socket.create_connection(("127.0.0.1", port), timeout=10)
    kept.sendall(head + b"\r\n")
    first = _until_closed_or_response(kept)
    kept.sendall(head + b"X-Slow: ")
    conns["kept-alive, then a half head"] = kept
    body = socket.create_connection(("127.0.0.1", port), timeout=10)
    body.sendall(f"POST /api/{token}/judge HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{".encode())
    conns["whole head, body never sent"] = body
    start = time.monotonic()
    p.case(f"a whole request beside {n_slow} half heads", {"200"}, lambda: http(port, "GET", f"/api/{token}/session"))
    p.case("  answered within 5 s", lambda g: g < 5, lambda: round(time.monotonic() - start, 2))
    trickle = socket.create_connection(("127.0.0.1", port), timeout=10)
    whole = head + b"Connection: close\r\n\r\n"

    def drip():
        try:
            for byte in whole:
                trickle.sendall(bytes([byte]))
                time.sleep(1.0)
        except OSError:
            pass
    threading.Thread(target=drip, daemon=True).start()
    conns["a head at a byte a second"] = trickle
    ends = {}
    threads = [threading.Thread(target=lambda k=k, c=c: ends.__setitem__(k, _until_closed(c, SLOW_BOUND_S)))
               for k, c in conns.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SLOW_BOUND_S + 10)
    for c in conns.values():
        c.close()
    got = [ends.get(f"half head {i}", ("held", 0))[0] for i in range(n_slow)]
    p.case(f"{n_slow} half heads: 408 and closed", {f"{n_slow} x 408"},
           lambda: ", ".join(f"{got.count(v)} x {v}" for v in sorted(set(got))))
    p.case("  the last closed after (s)", lambda g: g < SLOW_BOUND_S,
           lambda: round(max(ends.get(f"half head {i}", ("", SLOW_BOUND_S))[1] for i in range(n_slow)), 1))
    p.case("kept-alive: first answer", {"200"}, lambda: first)
    for name, want in (("nothing sent", {"closed"}), ("kept-alive, then a half head", {"408"}),
                       ("a head at a byte a second", {"408"}), ("whole head, body never sent", {"closed", "400",
                                                                                             "408", "413"})):
        p.case(f"slow: {name}", want, lambda n=name: ends.get(n, ("held", 0))[0])


def _until_closed_or_response(sock: socket.socket) -> str:
    """The status of one whole response on a kept-alive connection (read to its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(65536)
    return head.split()[1].decode()


def campaign_cases(p: Probe, tmp: Path, big_mb: int, n_slow: int = 50) -> None:
    import sqlite3

    from kgeval.campaign.build import create_campaign
    from kgeval.campaign.server import csrf_token
    from kgeval.campaign.store import add_person, connect, meta

    db = tmp / "c.db"
    create_campaign(db, write_sheet(tmp / "sheet.tsv", 6))
    conn = connect(db)
    tok = {n: add_person(conn, n, r) for n, r in (("ana", "annotator"), ("bo", "annotator"),
                                                     ("adj", "adjudicator"), ("cur", "curator"))}
    secret = meta(conn)["secret"]
    conn.close()
    csrf = {n: csrf_token(secret, t) for n, t in tok.items()}
    port = free_port()
    server = Server(db, port, tmp / "serve.log", tok["ana"])
    server.start()
    try:
        a, c = tok["ana"], csrf["ana"]
        js = {"Content-Type": "application/json", "X-CSRF-Token": c}

        def judge(body: bytes, headers=None, who="ana"):
            return status_and_error(port, "POST", f"/api/{tok[who]}/judge", body, headers or
                                    {"Content-Type": "application/json", "X-CSRF-Token": csrf[who]})

        http(port, "GET", f"/api/{a}/next")  # ana holds item 1
        base = {"item": 1, "label": "n", "source": "", "note": "", "seconds": 2}
        p.case("note with emoji and RTL", {"200 ok"}, lambda: judge(json.dumps(
            base | {"note": "ok \U0001F600 \u202e txt"}).encode()))
        p.case("undo it", {"200"}, lambda: http(port, "POST", f"/api/{a}/undo", b"{}", {"X-CSRF-Token": c}))
        # -- methods
        for method, path in (("GET", f"/api/{a}/judge"), ("PUT", f"/api/{a}/judge"), ("DELETE", f"/api/{a}/undo"),
                             ("POST", f"/api/{a}/next"), ("PATCH", f"/api/{a}/session"), ("POST", "/static/judge.js"),
                             ("TRACE", f"/j/{a}")):
            p.case(f"method {method} {path.replace(a, 'T')}", {"405"}, lambda m=method, pa=path: http(port, m, pa, b"{}"))
        p.case("method OPTIONS /", {"404", "405"}, lambda: http(port, "OPTIONS", "/"))
        p.case("method BREW (unknown verb)", {"400", "405", "closed"}, lambda: http(port, "BREW", f"/api/{a}/next"))
        # -- headers
        p.case("header of 100 kB", {"400", "431", "closed"},
               lambda: http(port, "GET", f"/api/{a}/next", headers={"X-Big": "a" * 100_000}))
        p.case("2,000 headers", {"400", "431", "closed"},
               lambda: raw(port, f"GET /api/{a}/next HTTP/1.1\r\nHost: x\r\n".encode()
                           + b"".join(b"X-%d: 1\r\n" % i for i in range(2000)) + b"\r\n"))
        p.case("path of 20 kB (token)", {"400", "403", "414", "closed"},
               lambda: http(port, "GET", "/api/" + "t" * 20_000 + "/next"))
        p.case("token of 500 chars", {"403"}, lambda: http(port, "GET", "/api/" + "t" * 500 + "/next"))
        for cl in ("-1", "abc", "99999999999999999999", "20001", "1e3"):
            p.case(f"Content-Length {cl}", {"400", "413", "closed"},
                   lambda cl=cl: raw(port, f"POST /api/{a}/judge HTTP/1.1\r\nHost: x\r\nContent-Length: {cl}\r\n"
                                     f"X-CSRF-Token: {c}\r\n\r\n{{}}".encode()))
        p.case("two Content-Lengths", {"400", "closed"},
               lambda: raw(port, f"POST /api/{a}/judge HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                 f"Content-Length: 3\r\nX-CSRF-Token: {c}\r\n\r\n{{}}".encode()))
        p.case("Content-Length and chunked", {"400", "closed"},
               lambda: raw(port, f"POST /api/{a}/judge HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding:"
                                 f" chunked\r\nX-CSRF-Token: {c}\r\n\r\n2\r\n{{}}\r\n0\r\n\r\n".encode()))
        # -- bodies and the token gate
        chunked = (f"POST /api/%s/judge HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nX-CSRF-Token: {c}\r\n"
                   "Content-Type: application/json\r\n\r\n")
        p.case("chunked 25 kB, known token", {"413"},
               lambda: raw(port, (chunked % a).encode(), [b" " * 5000] * 5))
        p.case("chunked 25 kB, forged token", {"403"},
               lambda: raw(port, (chunked % "forged").encode(), [b" " * 5000] * 5))
        p.case("5,000 nested [, forged token", {"403 one-line"}, lambda: status_and_error(
            port, "POST", "/api/forged/judge", b"[" * 5000 + b"]" * 5000, js))
        p.case("5,000 nested [, known token", {"400 one-line"}, lambda: judge(b"[" * 5000 + b"]" * 5000))
        p.case("5,000 nested {\"a\":", {"400 one-line"}, lambda: judge(b'{"a":' * 3000 + b"1" + b"}" * 3000))
        for body in ([1], "x", 3, None, True):
            p.case(f"body {json.dumps(body)}", {"400 one-line"}, lambda b=body: judge(json.dumps(b).encode()))
        p.case("body not UTF-8", {"400 one-line"}, lambda: judge(b'{"item": 1, "label": "\xff"}'))
        p.case("body empty", {"400 one-line"}, lambda: judge(b""))
        fields = {"item": ["1", 1.0, 10**30, -1, 0, True, None, [1], 2**63],
                  "seconds": [10**400, -1, "2", [2], 1e308, True, "NaN"], "label": ["yes", "", 1, None, "y\u0000"],
                  "source": [1, ["https://x.org"], "https://x.org/" + "a" * 2001, "javascript:alert(1)",
                             "https://x.org/\u001b[31m", "\ud800"],
                  "note": [1, {}, "a" * 5001, "\ud800"], "unknown": [1]}
        for field, values in fields.items():
            for value in values:
                text = json.dumps(base | {field: value})
                p.case(f"{field} = {str(value)[:30]!s}", {"400 one-line"}, lambda t=text: judge(t.encode()))
        p.case("seconds 1e400 (JSON inf)", {"400 one-line"},
               lambda: judge(b'{"item": 1, "label": "n", "seconds": 1e400}'))
        p.case("seconds NaN literal", {"400 one-line"}, lambda: judge(b'{"item": 1, "label": "n", "seconds": NaN}'))
        p.case("a number of 5,000 digits", {"400 one-line"},
               lambda: judge(b'{"item": ' + b"9" * 5000 + b', "label": "n"}'))
        p.case("duplicate keys", {"400 one-line", "200 ok", "409 one-line"},
               lambda: judge(b'{"item": 99, "item": 1, "label": "u"}'))
        # -- CSRF and roles
        p.case("CSRF missing", {"403 one-line"},
               lambda: judge(json.dumps(base).encode(), {"Content-Type": "application/json"}))
        p.case("CSRF forged", {"403 one-line"}, lambda: judge(json.dumps(base).encode(), {"X-CSRF-Token": "0" * 64}))
        p.case("CSRF of another person", {"403 one-line"},
               lambda: judge(json.dumps(base).encode(), {"X-CSRF-Token": csrf["bo"]}))
        p.case("CSRF in the query", {"403 one-line"}, lambda: status_and_error(
            port, "POST", f"/api/{a}/judge?csrf={c}", json.dumps(base).encode(), {}))
        p.case("curator judges", {"403 one-line"}, lambda: judge(json.dumps(base).encode(), who="cur"))
        p.case("adjudicator says u", {"400 one-line", "409 one-line"},
               lambda: judge(json.dumps(base | {"label": "u"}).encode(), who="adj"))
        p.case("annotator reads live", {"403"}, lambda: http(port, "GET", f"/api/{a}/live"))
        p.case("curator's live page", {"200"}, lambda: http(port, "GET", f"/live/{tok['cur']}"))
        # -- where the token goes
        p.case("token in the query", {"404", "403"}, lambda: http(port, "GET", f"/api/next?token={a}"))
        p.case("token in a header", {"404", "403"}, lambda: http(port, "GET", "/api/next", headers={"X-Token": a}))
        p.case("token percent-encoded", {"200"}, lambda: http(port, "GET", "/api/{}/session".format("".join(
            f"%{b:02X}" for b in a.encode()))))
        p.case("token with a trailing /", {"404", "307"}, lambda: http(port, "GET", f"/api/{a}/next/"))
        p.case("token with /.. after it", {"404", "403"}, lambda: http(port, "GET", f"/api/{a}/../{a}/next"))
        # -- static files
        for path in ("/static/../server.py", "/static/..%2fserver.py", "/static/%2e%2e%2fstore.py",
                     "/static/judge.js%00", "/static/JUDGE.JS", "/static/", "/static//etc/passwd",
                     "/static/..\\server.py", "/static/judge.js/..", "/templates/judge.html"):
            p.case(f"static {path}", {"404", "400"}, lambda pa=path: http(port, "GET", pa))
        p.case("static judge.js", {"200"}, lambda: http(port, "GET", "/static/judge.js"))
        # -- Unicode that is fine (bo's item: ana's was judged above)
        p.case("IDN source on an agreed N", {"200 ok", "409 one-line"}, lambda: judge(json.dumps(
            base | {"source": "https://例え.jp/x", "label": "n"}).encode(), who="bo"))
        # -- memory before authentication: a big chunked body with a forged token
        pid = server.proc.pid
        before = rss_mb(pid)
        status, taken = big_chunked(port, "/api/forged/judge", c, big_mb, 60.0)
        after = rss_mb(pid)
        p.case(f"chunked {big_mb} MB, forged token: status", {"403"}, lambda: status)
        p.case(f"  RSS {before:.0f} -> {after:.0f} MB, client pushed {taken:.0f} MB",
               lambda g: g < 20, lambda: round(after - before, 1))
        before = rss_mb(pid)
        status, taken = big_chunked(port, f"/api/{a}/judge", c, big_mb, 60.0)
        after = rss_mb(pid)
        p.case(f"chunked {big_mb} MB, known token: status", {"413"}, lambda: status)
        p.case(f"  RSS {before:.0f} -> {after:.0f} MB, client pushed {taken:.0f} MB",
               lambda g: g < 20, lambda: round(after - before, 1))
        slow_cases(p, port, a, n_slow)
        p.case("the server still answers", {"200"}, lambda: http(port, "GET", f"/api/{a}/session"))
        p.case("no traceback in the server's log", {"none"}, lambda: "none" if "Traceback" not in (
            tmp / "serve.log").read_text() else "Traceback")
        p.case("no token in the server's log", {"none"}, lambda: "none" if not any(
            t in (tmp / "serve.log").read_text() for t in tok.values()) else "token")
    finally:
        server.stop()
    # -- a broken campaign file at start
    broken = tmp / "broken.db"
    broken.write_bytes(db.read_bytes())
    raw_db = sqlite3.connect(broken)
    raw_db.execute("DROP TABLE judgments")
    raw_db.close()

    def serve_broken():
        r = subprocess.run([*CAMPAIGN, "serve", str(broken), "--port", str(free_port())], capture_output=True,
                           text=True, timeout=60)
        lines = r.stderr.strip().splitlines()
        return f"rc {r.returncode}, {len(lines)} line" + (": missing" if "missing" in r.stderr else "")
    p.case("serve a file without its judgments table", {"rc 1, 1 line: missing", "rc 2, 1 line: missing"},
           serve_broken)


def library_cases(p: Probe, tmp: Path) -> None:
    import pandas as pd

    from kgeval.errors import KgevalError
    from kgeval.sampling.checksum import CHECK, row_checks
    from kgeval.sampling.estimates import read_plan_items

    def one_line(fn):
        def run():
            try:
                fn()
            except KgevalError as exc:
                return "refused, one line" if "\n" not in str(exc) else "refused, several lines"
            return "accepted"
        return run

    refused = {"refused, one line"}
    # -- sampling sidecars tampered
    df = pd.DataFrame({"item": [1, 2, 2], "order": [1, 2, 3], "head_id": ["h1", "h2", "h2"], "relation": ["r"] * 3,
                       "tail_id": ["t1", "t2", "t2"], "asks": ["tail", "head", "tail"], "pi": [0.5, 0.25, 1.0],
                       "p": [0.1, 0.2, 0.3], "audit": [True, False, False]})
    df[CHECK] = row_checks(df)
    good = tmp / "plan.csv"
    df.to_csv(good, index=False)
    p.case("sidecar as written", {"accepted"}, one_line(lambda: read_plan_items(str(good))))
    lines = good.read_text().splitlines(keepends=True)
    edits = {"pi 0.25 -> 1e-300": (2, lines[2].replace(",0.25,", ",1e-300,")),
             "pi 0.25 -> 0.2500000001": (2, lines[2].replace(",0.25,", ",0.2500000001,")),
             "p 0.3 -> 0.9": (3, lines[3].replace(",0.3,", ",0.9,")), "triple renamed": (1, lines[1].replace("h1", "h9")),
             "checksum of row 2 on row 3": (2, lines[2].rsplit(",", 1)[0] + "," + lines[1].rsplit(",", 1)[1])}
    for name, (at, line) in edits.items():
        path = tmp / "edited.csv"
        path.write_text("".join(lines[:at] + [line] + lines[at + 1:]))
        p.case(f"sidecar {name}", refused, one_line(lambda pa=path: read_plan_items(str(pa))))
    for name, text in (("a row removed", "".join(lines[:3])), ("a row doubled", "".join(lines + lines[-1:])),
                       ("rows swapped", "".join([lines[0], lines[2], lines[1], lines[3]])),
                       ("checksum column dropped", df.drop(columns=CHECK).to_csv(index=False)),
                       ("pi inf", "".join(lines).replace(",0.25,", ",inf,")), ("empty file", ""),
                       ("header only", lines[0])):
        path = tmp / "edited.csv"
        path.write_text(text)
        p.case(f"sidecar {name}", refused, one_line(lambda pa=path: read_plan_items(str(pa))))
    # -- the API's estimate with an edited plan in memory
    from kgeval import estimate
    from kgeval.api.sampling import SamplingPlan

    for pi in (1.5, float("inf"), -0.1, 1e-300, float("nan")):
        sheet = df.copy()
        sheet.loc[1, "pi"] = pi
        sp = SamplingPlan("Mine", ["A"], "P", 10, 0.95, pd.DataFrame(), sheet, {})
        p.case(f"API estimate, pi {pi}", refused, one_line(lambda sp=sp: estimate(sp, tmp / "labels.txt")))
    # -- the PyKEEN evaluator's arguments
    try:
        from kgeval.integrations.pykeen import KgevalEvaluator
    except ImportError:
        KgevalEvaluator = None
    if KgevalEvaluator is not None:
        maps = {"entity_to_id": {"a": 0}, "relation_to_id": {"r": 0}}
        for name, kw in (("triples_factory='train'", {"triples_factory": "train"}),
                         ("triples_factory=3", {"triples_factory": 3}), ("testsets=[]", {"testsets": [], **maps}),
                         ("testsets='FB-Test-O'", {"testsets": "FB-Test-O", **maps}),
                         ("testsets=[1]", {"testsets": [1], **maps}), ("k=-5", {"k": -5, **maps}),
                         ("k=0", {"k": 0, **maps}), ("k=2.5", {"k": 2.5, **maps}), ("k='10'", {"k": "10", **maps}),
                         ("k=True", {"k": True, **maps}), ("no labels", {})):
            p.case(f"KgevalEvaluator({name})", refused, one_line(lambda kw=kw: KgevalEvaluator(**kw)))
        p.case("KgevalEvaluator(k=10)", {"accepted"}, one_line(lambda: KgevalEvaluator(k=10, **maps)))
    # -- reanalyze's inputs
    from kgeval.cli import main

    def release(root: Path, pvals=None, depth=None):
        systems = ["A", "B", "C"]
        base = {"micro_mrr": [0.4, 0.3, 0.2], "macro_mrr": [0.5, 0.4, 0.3]}
        for name in ("FB-Test-O", "FB-Test-S", "FB-Test-S-C"):
            (root / name).mkdir(parents=True, exist_ok=True)
            pd.DataFrame({"System": systems, **base}).to_csv(root / name / "evaluation.csv", index=False)
        d = pd.DataFrame({"System": systems * 2, "Depth": [0] * 3 + [1] * 3, **{k: v * 2 for k, v in base.items()}})
        d["Depth"] = d["Depth"].astype(object)
        if depth is not None:
            d.loc[4, "Depth"] = depth
        d.to_csv(root / "FB-Test-S-C" / "pooling_depth.csv", index=False)
        rows = pvals or [("A", "B", 0.01), ("A", "C", 0.2), ("B", "C", 0.04)]
        pd.DataFrame([{"SystemA": a, "SystemB": b, "micro_mrr": v} for a, b, v in rows]).to_csv(
            root / "FB-Test-S-C" / "discriminative_power.csv", index=False)
        return root

    def cli_lines(root: Path) -> str:
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main(["reanalyze", str(root), "--out", str(root.parent / (root.name + "-out"))])
        lines = [ln for ln in err.getvalue().splitlines() if "warning" not in ln]
        return f"rc {rc}" if rc == 0 else f"rc {rc}, {len(lines)} line"

    for i, (name, kw, want) in enumerate((
            ("as written", {}, "rc 0"), ("p 1.5", {"pvals": [("A", "B", 1.5)]}, "rc 2, 1 line"),
            ("p -0.5", {"pvals": [("A", "B", -0.5)]}, "rc 2, 1 line"),
            ("A paired with A", {"pvals": [("A", "A", 0.01)]}, "rc 2, 1 line"),
            ("depth -1", {"depth": -1}, "rc 2, 1 line"), ("depth 1.5", {"depth": 1.5}, "rc 2, 1 line"),
            ("depth inf", {"depth": "inf"}, "rc 2, 1 line"))):
        root = release(tmp / f"rel{i}", **kw)
        p.case(f"reanalyze {name}", {want}, lambda r=root: cli_lines(r))


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="a folder for the campaign files (default: a temporary one)")
    ap.add_argument("--budget-s", type=float, default=300.0, help="skip the cases left after this many seconds")
    ap.add_argument("--big-mb", type=int, default=400, help="the size of the big chunked POST")
    ap.add_argument("--slow", type=int, default=50, choices=range(1, 201), metavar="1..200",
                    help="half-sent heads held open at once")
    ap.add_argument("--part", choices=("all", "http", "library"), default="all",
                    help="http: the server's cases only (they run against an older kgeval too, for a baseline)")
    args = ap.parse_args()
    os.environ.setdefault("KGEVAL_HOME", tempfile.mkdtemp(prefix="kgeval-probe-home-"))
    p = Probe(args.budget_s)
    print("case | expected | got")
    with tempfile.TemporaryDirectory(prefix="kgeval-probe-") as t:
        tmp = Path(args.out) if args.out else Path(t)
        tmp.mkdir(parents=True, exist_ok=True)
        threading.current_thread().name = "probe"
        if args.part in ("all", "http"):
            campaign_cases(p, tmp, args.big_mb, args.slow)
        if args.part in ("all", "library"):
            library_cases(p, tmp)
    found = [r for r in p.rows if not r[3]]
    print(f"\n{len(p.rows)} cases tried, {len(found)} found, {p.skipped} skipped (time budget)")
    for name, want, got, _ in found:
        print(f"FOUND: {name}: expected {want}, got {got}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(heartbeat_main(main_, __file__))
