"""The errors a page raises when Chromium loads it (uncaught exceptions, console.error and
console.assert, the browser's own error entries): the reports' HTML is checked to load clean.
A test helper over report.printout's DevTools pipe to Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arraybench.report.render.pdf.printout import TIMEOUT_S, _Chromium, _file_url

SETTLE_S = 0.5  # after the load event, how long late errors (timers, handlers) are awaited


def console_errors(html_path: Path, timeout: float = TIMEOUT_S) -> list[str]:
    """Errors the page raises when loaded: uncaught exceptions, console.error/assert, and the
    browser's own error entries (a resource that failed to load, a blocked request)."""
    url = _file_url(html_path)
    with _Chromium([], pipe=True, timeout=timeout, what=f"loading {html_path}") as c:
        c.open_page(url)
        c.pump_until(lambda: False, limit=min(SETTLE_S, max(c.remaining(), 0)))
        return _errors(c.events)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    found = []
    for event in events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            exc = details.get("exception") or {}
            text = exc.get("description") or details.get("text", "exception")
            found.append(f"{text.splitlines()[0]}{_location(details)}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(_remote_text(a) for a in params.get("args", []))
            frames = (params.get("stackTrace") or {}).get("callFrames") or [{}]
            found.append(f"console.{params['type']}: {text}{_location(frames[0])}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            entry = params["entry"]
            found.append(f"{entry.get('source', 'log')}: {entry.get('text', '')}{_location(entry)}")
    return found


def _remote_text(obj: dict[str, Any]) -> str:
    if "value" in obj:
        return str(obj["value"])
    return str(obj.get("description") or obj.get("type", ""))


def _location(details: dict[str, Any]) -> str:
    url = details.get("url") or ""
    line = details.get("lineNumber")
    if not url:
        return ""
    return f" ({url}:{line + 1})" if isinstance(line, int) else f" ({url})"
