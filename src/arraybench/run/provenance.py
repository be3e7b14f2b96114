"""Where a run's numbers came from: the machine, the targets (device models and sizes), the
hosts. Collected once when a run starts, stored as a finding, shown in every report format."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

from arraybench.engines.base import EngineFacts
from arraybench.errors import TargetError
from arraybench.finding_kinds import ProvenanceFinding
from arraybench.plan.model import Plan
from arraybench.run.fleet import host_spec
from arraybench.system.blockdev import block_name, model, size_bytes
from arraybench.targets.queue import read_queue, read_remote_queues, settings_text
from arraybench.targets.safety import inspect_target
from arraybench.units import format_size


def _first_line(path: str, prefix: str) -> str | None:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(prefix):
            return line.split(":", 1)[-1].split("=", 1)[-1].strip().strip('"')
    return None


def machine() -> dict[str, Any]:
    mem_kib = _first_line("/proc/meminfo", "MemTotal")
    return {
        "os": _first_line("/etc/os-release", "PRETTY_NAME"),
        "kernel": platform.release(),
        "cpu": _first_line("/proc/cpuinfo", "model name"),
        "cpus": os.cpu_count(),
        "memory_bytes": int(mem_kib.split()[0]) * 1024 if mem_kib else None,
        "python": sys.version.split()[0],
    }


def describe_target(path: str) -> dict[str, Any]:
    """Kind, size and device model of a local target; for a file, the device it lives on."""
    try:
        info = inspect_target(path)
    except TargetError as exc:
        return {"path": path, "kind": "unknown", "note": exc.message}
    found: dict[str, Any] = {"path": path, "kind": info.kind, "size_bytes": info.size_bytes,
                             "model": info.model, "queue": read_queue(path).to_dict()}  # fmt: skip
    if info.kind != "block":
        where = (
            info.real_path if os.path.exists(info.real_path) else os.path.dirname(info.real_path)
        )
        name = block_name(where)
        if name:
            found |= {"on_device": name, "device_model": model(name),
                      "device_size_bytes": size_bytes(name)}  # fmt: skip
    return found


def _remote_queues(plan: Plan) -> dict[str, list[dict[str, Any]] | str]:
    """Each host's queue settings over SSH (or why they could not be read)."""
    found: dict[str, list[dict[str, Any]] | str] = {}
    for h in plan.hosts:
        read = read_remote_queues(host_spec(h), [t.path for t in (h.targets or plan.targets)])
        found[h.name] = read if isinstance(read, str) else [q.to_dict() for q in read]
    return found


def collect(
    plan: Plan, sizes: dict[str, int], tuning: list[dict[str, str]] | None = None,
    engine: EngineFacts | None = None,
) -> ProvenanceFinding:  # fmt: skip
    """Everything worth a reader's eye; remote targets are listed as the plan names them.
    `tuning`: the host_tuning changes in effect (device, attribute, original, value);
    `engine`: the load tool checked (its version and the binary run, e.g. `--fio PATH`)."""
    targets = [] if plan.hosts else [describe_target(t.path) for t in plan.targets]
    for t in targets:
        t["size_bytes"] = t.get("size_bytes") or sizes.get(t["path"])
    hosts = [
        {"name": h.name, "address": f"{h.address}:{h.port}", "ssh": bool(h.ssh),
         "targets": [t.path for t in (h.targets or plan.targets)]}
        for h in plan.hosts
    ]  # fmt: skip
    queues = _remote_queues(plan)
    for h in hosts:
        h["queue"] = queues[str(h["name"])]
    found: ProvenanceFinding = {"machine": machine(), "targets": targets, "hosts": hosts,
                                "host_tuning": tuning or []}  # fmt: skip
    if engine is not None:
        found["engine"] = {"name": engine.name, "version": engine.version,
                           "binary": engine.binary}  # fmt: skip
    return found


def _size(value: Any) -> str:
    return format_size(int(value)) if value else "?"


def provenance_rows(data: ProvenanceFinding) -> list[tuple[str, str]]:
    """The stored finding as (what, value) rows."""
    m = data.get("machine", {})
    rows = [
        ("controller OS", str(m.get("os") or "?")),
        ("controller CPU", f"{m.get('cpu') or '?'} ({m.get('cpus') or '?'} CPUs)"),
        ("controller memory", _size(m.get("memory_bytes"))),
        ("Python", str(m.get("python") or "?")),
    ]
    engine = data.get("engine")
    if engine and engine.get("binary"):
        rows.append(
            (f"{engine.get('name')} binary", f"{engine['binary']} ({engine.get('version')})")
        )
    for t in data.get("targets", []):
        text = f"{t.get('kind')}, {_size(t.get('size_bytes'))}"
        if t.get("model"):
            text += f", model {t['model']}"
        if t.get("on_device"):
            model = f" ({t['device_model']})" if t.get("device_model") else ""
            text += f", on {t['on_device']}{model} of {_size(t.get('device_size_bytes'))}"
        rows.append((f"target {t['path']}", text))
        rows += _queue_rows(t.get("queue"))
    for h in data.get("hosts", []):
        how = "fio server started over SSH" if h.get("ssh") else "fio server already running"
        rows.append((f"host {h['name']}", f"{h['address']}, {how}; targets "
                     f"{', '.join(h.get('targets', []))}"))  # fmt: skip
        queue = h.get("queue")
        if isinstance(queue, str):
            rows.append((f"queue on {h['name']}", queue))
        for q in queue if isinstance(queue, list) else []:
            rows += _queue_rows(q, f" on {h['name']}")
    changes = [f"{c['device']} {c['attribute']} {c['original']} -> {c['value']}"
               for c in data.get("host_tuning", [])]  # fmt: skip
    if changes:
        rows.append(("host tuning (restored after the run)", ", ".join(changes)))
    return rows


def _queue_rows(queue: dict[str, Any] | None, where: str = "") -> list[tuple[str, str]]:
    if not queue:
        return []
    text = settings_text(queue.get("settings") or {}) or queue.get("note") or "?"
    device = queue.get("device") or "no device"
    return [(f"queue of {queue['target']}{where}", f"{device}: {text}")]
