"""The HTTP side of a blind study: FastAPI routes, binding rules and the uvicorn server.

Routes (everything under the annotator's token, so a link is all an annotator needs):

- `GET /a/<token>/`: the page (tvrl_bench.annotate.page);
- `GET /a/<token>/api/state`: {"done", "total", "next"};
- `GET /a/<token>/api/item/<position>`: {"position", "pair", "prompt", "left", "right", "choice", "done", "total",
  "next"}; left/right are opaque video ids;
- `POST /a/<token>/api/vote` with {"position", "pair", "choice": "left" | "right" | "tie"}: answers the new state
  once the vote is committed to SQLite;
- `GET /a/<token>/v/<video id>`: the mp4 bytes (range requests supported).

Errors are JSON {"error": "..."} with a 4xx status (an unknown token is 403). The server binds 127.0.0.1 unless
told otherwise, and refuses an address other machines can reach unless the caller passes `allow_remote`
(the CLI does so only for an explicit --host). When bound to loopback it also rejects requests whose Host header
is not a loopback name, so a web page elsewhere cannot reach it through DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request  # route signatures need Request at module level (string annotations)
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from tvrl_bench.annotate import AnnotateError
from tvrl_bench.annotate.page import PAGE_HTML
from tvrl_bench.annotate.session import AnnotationSession

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"}


def create_app(session: AnnotationSession, loopback_only: bool = True) -> Any:
    """The FastAPI application serving `session` (no docs or schema routes: nothing to browse)."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    if loopback_only:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost", "[::1]"])

    def error(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status, headers=_HEADERS)

    @app.exception_handler(AnnotateError)
    async def annotate_error(request: Request, exc: AnnotateError) -> JSONResponse:
        return error(str(exc), exc.status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        text = "not found: open the personal link tvrl-bench annotate printed (http://HOST:PORT/a/<token>/)" \
            if exc.status_code == 404 else str(exc.detail)
        return error(text, exc.status_code)

    @app.get("/a/{token}/", response_class=HTMLResponse)
    def page(token: str) -> Any:
        try:
            session.authenticate(token)
        except AnnotateError as exc:
            body = f"<!DOCTYPE html><title>Link not valid</title><p>{_escape(str(exc))}</p>"
            return HTMLResponse(body, status_code=exc.status, headers=_HEADERS)
        return HTMLResponse(PAGE_HTML, headers=_HEADERS)

    @app.get("/a/{token}/api/state")
    def state(token: str) -> Any:
        return JSONResponse(session.state(session.authenticate(token)), headers=_HEADERS)

    @app.get("/a/{token}/api/item/{position}")
    def item(token: str, position: str) -> Any:
        return JSONResponse(session.item(session.authenticate(token), position), headers=_HEADERS)

    @app.post("/a/{token}/api/vote")
    async def vote(token: str, request: Request) -> Any:
        name = session.authenticate(token)
        body = await request.body()
        try:
            data = json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise AnnotateError(f"the vote is not valid JSON ({exc}); send "
                                '{"position": 0, "pair": "<id>", "choice": "left"}') from None
        # the SQLite commit runs in a worker thread; the answer is sent only after it
        state = await run_in_threadpool(session.vote, name, data)
        return JSONResponse(state, headers=_HEADERS)

    @app.get("/a/{token}/v/{video_id}")
    def video(token: str, video_id: str) -> Any:
        session.authenticate(token)
        return FileResponse(session.video(video_id), media_type="video/mp4",
                            headers={"Cache-Control": "private, max-age=3600", "Referrer-Policy": "no-referrer"})

    return app


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# ---- binding ---------------------------------------------------------------------------------------------------


def resolve_addresses(host: str) -> list[str]:
    """Every address `host` resolves to (an IP literal gives itself); an AnnotateError when it resolves to none."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise AnnotateError(f"--host {host}: cannot resolve it ({exc})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_loopback(host: str) -> bool:
    """True when every address of `host` is a loopback address (only this machine can connect)."""
    return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in resolve_addresses(host))


def check_bind_host(host: str, allow_remote: bool) -> None:
    """Refuse a host other machines could reach unless `allow_remote` (set by an explicit --host)."""
    if not allow_remote and not is_loopback(host):
        raise AnnotateError(
            f"refusing to serve on {host}: that address is reachable from other machines, and the annotation page "
            f"is meant for this one (default {DEFAULT_HOST}). To serve annotators on the network, say so explicitly: "
            f"tvrl-bench annotate ... --host {host}"
        )


@dataclass
class BoundSocket:
    """A listening socket and the URL base the links use."""

    sock: socket.socket
    host: str
    port: int

    @property
    def base_url(self) -> str:
        host = self.host
        if host in ("0.0.0.0", "::", ""):
            host = socket.gethostname()
        elif ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


def bind(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, allow_remote: bool = False) -> BoundSocket:
    """Bind (and check) the server's socket; port 0 picks a free port (the links show the real one)."""
    check_bind_host(host, allow_remote)
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    if family == socket.AF_INET and not _is_ip(address):
        info = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)[0]
        family, address = info[0], info[4][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address, port))
    except OSError as exc:
        sock.close()
        raise AnnotateError(f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port") from None
    sock.listen(128)
    return BoundSocket(sock, host, int(sock.getsockname()[1]))


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def serve(session: AnnotationSession, bound: BoundSocket) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM): uvicorn on the already-bound socket, no access log (the URLs
    carry the annotators' tokens)."""
    import uvicorn

    app = create_app(session, loopback_only=is_loopback(bound.host))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    server.run(sockets=[bound.sock])
