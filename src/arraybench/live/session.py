"""The live parts of one `arraybench run`: the observer that keeps the live state (and
live.json), and the server when `--serve` asks for one. `cli/run.py` makes one,
`live/launch.py` closes it."""

from __future__ import annotations

from arraybench.live.server import LiveServer, ServeAddress, parse_serve, serve
from arraybench.live.state import LiveObserver, ShownObserver
from arraybench.store.db import Store


class LiveSession:
    def __init__(
        self, inner: ShownObserver, serve_at: str | None = None, store: Store | None = None,
        seconds: bool = True,
    ) -> None:  # fmt: skip
        """`seconds`: fio's status reports read each second (False: `--no-live`, progress,
        events and finished points only)."""
        self.address: ServeAddress | None = parse_serve(serve_at) if serve_at is not None else None
        self.observer = LiveObserver(inner, stored=store.points if store else None,
                                     seconds=seconds)  # fmt: skip
        self.server: LiveServer | None = None
        if serve_at is not None:
            self.server = serve(serve_at, self.observer.state)

    def served(self) -> str | None:
        """What the console says about the server: its URL, and that it is reachable from
        the network when it listens on another address than loopback."""
        if self.server is None or self.address is None:
            return None
        url = self.server.url
        where = "" if self.address.loopback else " (NOT loopback: reachable from the network)"
        return f"live page {url} and Prometheus metrics {url}metrics{where}"

    def close(self, state: str) -> None:
        """The run ended (`state`: complete, interrupted, failed): said in live.json, and the
        server stops."""
        self.observer.finish(state)
        if self.server is not None:
            self.server.stop()
            self.server = None
