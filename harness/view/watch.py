"""`mua view --watch`: the page of a run that is still going, kept current by a small local server.

The server listens on 127.0.0.1 only and answers two things: the page (``/``) and, when the run's files have
changed since the version the page holds, the new payload (``/payload.json?v=VERSION``; 204 when nothing
changed). The page asks every couple of seconds. A request naming another host (DNS rebinding) is refused.

Each poll checks the files' sizes and times; only when they changed are the rows read again, and only rows
not seen before are packed (and their end-state differences computed): the benchmark stays open between polls.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qs, urlsplit

from ..errors import ConfigError
from .page import Source, build_payload, check_sources, load_source, render_page, safe_json

HOST = "127.0.0.1"
POLL_MS = 2000
WATCHED = ("config.json", "episodes.jsonl", "metrics.jsonl", "curves.png")


def _stamp(path: Path) -> tuple:
    """What changes when a run or a training output gains rows."""
    files = [path / name for name in WATCHED] + sorted((path / "samples").glob("*.jsonl"))
    out = []
    for f in files:
        try:
            info = f.stat()
        except OSError:
            continue
        out.append((f.name, info.st_size, info.st_mtime_ns))
    return tuple(out)


class WatchServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, paths: list[Path], data_dir: Optional[Path] = None, port: int = 0, ground: bool = True):
        check_sources(paths)
        self.paths, self.data_dir, self.ground = [Path(p) for p in paths], data_dir, ground
        self.lock = threading.Lock()
        self.sources: list[Source] = [load_source(p, data_dir, ground) for p in self.paths]
        self.stamps = [_stamp(p) for p in self.paths]
        self.version = 1
        try:
            super().__init__((HOST, port), _Handler)
        except OSError as e:
            raise ConfigError(f"cannot listen on {HOST}:{port}: {e.strerror or e} (choose another --port)") from None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server_address[1]}/"

    def refresh(self) -> int:
        """Reread the sources whose files changed; the version the page should hold."""
        with self.lock:
            for i, path in enumerate(self.paths):
                stamp = _stamp(path)
                if stamp == self.stamps[i]:
                    continue
                old, new = self.sources[i], load_source(path, self.data_dir, ground=False)
                if old.kind == new.kind == "run":  # keep the open benchmark and what is already packed
                    new.ground, new.packed, new.notes = old.ground, old.packed, old.notes
                self.sources[i], self.stamps[i] = new, stamp
                self.version += 1
            return self.version

    def page(self) -> bytes:
        with self.lock:
            return render_page(self.sources, {"version": self.version, "poll_ms": POLL_MS}).encode("utf-8")

    def payload(self, known: Optional[str]) -> Optional[bytes]:
        """The payload JSON when the page's version ``known`` is out of date, else None."""
        version = self.refresh()
        if known == str(version):
            return None
        with self.lock:
            payload = build_payload(self.sources)
        payload["watch"] = {"version": version, "poll_ms": POLL_MS}
        return safe_json(payload).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    server: WatchServer

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet: one line per poll is noise
        pass

    def _send(self, code: int, body: bytes = b"", kind: str = "text/plain; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host not in (HOST, "localhost"):
            self._send(403, b"mua view serves this machine only\n")
            return
        url = urlsplit(self.path)
        try:
            if url.path == "/":
                self._send(200, self.server.page(), "text/html; charset=utf-8")
            elif url.path == "/payload.json":
                known = parse_qs(url.query).get("v")
                body = self.server.payload(known[0] if known else None)
                self._send(204) if body is None else self._send(200, body, "application/json")
            else:
                self._send(404, b"not found\n")
        except Exception as e:  # a file caught mid-write or removed: the page keeps what it has and retries
            self._send(503, json.dumps({"error": f"{type(e).__name__}: {e}"}).encode("utf-8"), "application/json")


def serve(paths: list[Path], data_dir: Optional[Path] = None, port: int = 0, ground: bool = True) -> None:
    """Serve until interrupted (Ctrl-C)."""
    server = WatchServer(paths, data_dir, port, ground)
    print(f"serving {' vs '.join(str(p) for p in paths)} at {server.url} (this machine only); "
          "the page follows the run. Ctrl-C stops", flush=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
