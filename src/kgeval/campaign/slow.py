"""The campaign server's guard against slow clients: a connection whose request head (the request line and the
headers) is not complete :data:`HEAD_TIMEOUT` seconds after the connection opened, or after the first byte of the
next request on a kept-alive connection, is answered ``408 Request Timeout`` and closed, as a production server's
header timeout does (nginx's ``client_header_timeout``, Apache's ``RequestReadTimeout``). uvicorn has none: its
``timeout_keep_alive`` runs only between requests, so a client that sends a head one byte at a time, or opens a
connection and sends nothing, holds it for as long as it likes, and enough of them hold every file descriptor.

The guard is uvicorn's own HTTP/1.1 protocol (h11), with a timer armed when a head is awaited and cancelled once h11
has parsed it; the body is read by the gate, which bounds its size (:mod:`kgeval.campaign.gate`).
"""

from __future__ import annotations

import functools

HEAD_TIMEOUT = 10.0  # seconds for a whole request head: a browser sends it in one packet, a person never waits


def _reply(head_timeout: float) -> bytes:
    body = f"the request head was not complete within {head_timeout:g} s\n".encode()
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body))


@functools.cache
def protocol(head_timeout: float = HEAD_TIMEOUT) -> type:
    """uvicorn's h11 protocol class with a header timeout of ``head_timeout`` seconds (``uvicorn.run(...,
    http=protocol())``)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    reply = _reply(head_timeout)

    class HeadTimeoutProtocol(H11Protocol):
        seconds = head_timeout
        _head_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the next request's first bytes on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the head is parsed: the request runs
                self._disarm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(self.seconds, self._timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _timed_out(self) -> None:
            self._head_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self.conn.our_state is h11.IDLE and self.conn.trailing_data[0]:  # a head begun: say why
                self.transport.write(reply)  # raw: h11 sends no response before it has parsed a request
            self.transport.close()

    return HeadTimeoutProtocol
