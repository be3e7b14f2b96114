"""The injection journal: every injection is written down BEFORE it is applied, with what is
needed to undo it, and marked reverted after; a controller killed with SIGKILL leaves entries
that `arraybench revert` undoes (events.leftovers) on whichever machine they are.

The journal itself lives in the results store (the run layer passes an `InjectionLog` that
writes there); injectors only call `before`, `update` and `reverted`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Injection:
    """One injection on one machine: `reach` {} is the controller, else how to reach the host
    over SSH (events.sysfs format); `undo` holds what the undo needs: each kind's module in
    events/event_kinds/ writes it and checks it when read back.
    """

    kind: str
    label: str
    host: str = ""
    reach: dict[str, Any] = field(default_factory=dict)
    undo: dict[str, Any] = field(default_factory=dict)


class InjectionLog(Protocol):
    def before(self, injection: Injection) -> int:
        """Write the entry durably; returns its id."""
        ...

    def update(self, entry: int, undo: dict[str, Any]) -> None:
        """What the apply learned (a device number, an origin cgroup): merged into `undo`."""
        ...

    def reverted(self, entry: int) -> None: ...


class NoLog:
    """No journal (library use, unit tests): nothing is written."""

    def before(self, injection: Injection) -> int:
        return 0

    def update(self, entry: int, undo: dict[str, Any]) -> None:
        return None

    def reverted(self, entry: int) -> None:
        return None


class Journaled:
    """Mixin of injectors: the journal entry of the current injection, if any."""

    journal: InjectionLog = NoLog()
    _entry: int | None = None

    def _journal(self, injection: Injection) -> None:
        self._entry = self.journal.before(injection)

    def _learned(self, undo: dict[str, Any]) -> None:
        if self._entry is not None:
            self.journal.update(self._entry, undo)

    def _undone(self) -> None:
        if self._entry is not None:
            self.journal.reverted(self._entry)
            self._entry = None
