"""The campaign server's guard against slow clients: a connection whose request head (the request line and the
headers) is not complete :data:`HEAD_TIMEOUT` seconds after the connection opened, or after the first byte of the
next request on a kept-alive connection, is answered ``408 Request Timeout`` and closed, as a production server's
header timeout does (nginx's ``client_header_timeout``, Apache's ``RequestReadTimeout``). uvicorn has none: its
``timeout_keep_alive`` runs only between requests, so a client that sends a head one byte at a time, or opens a
connection and sends nothing, holds it for as long as it likes, and enough of them hold every file descriptor.

The same timer covers the body announced by a whole head (a body that never comes held the connection as well):
the whole request, head and body, must arrive within the timeout; a judgment's body is at most 20 kB (the gate,
:mod:`kgeval.campaign.gate`). The guard is uvicorn's own HTTP/1.1 protocol (h11), with a timer armed when a request
is awaited and cancelled once h11 has read all of it.
"""

from __future__ import annotations

import functools

HEAD_TIMEOUT = 10.0  # seconds for a whole request: a browser sends one in a packet or two, a person never waits


def _reply(head_timeout: float) -> bytes:
    body = f"the request was not complete within {head_timeout:g} s\n".encode()
    return (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(body), body))


@functools.cache
def protocol(head_timeout: float = HEAD_TIMEOUT) -> type:
    """uvicorn's h11 protocol class that answers 408 to a request (head and body) not in ``head_timeout`` seconds
    after it began, and closes the connection (``uvicorn.run(..., http=protocol())``)."""
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
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):  # the whole request is in
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
            if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                return
            begun = self.conn.their_state is h11.SEND_BODY or self.conn.trailing_data[0]
            if begun and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):  # nothing sent yet: say why
                self.transport.write(reply)  # raw: h11 has no response for a request it has not parsed
            self.transport.close()

    return HeadTimeoutProtocol
