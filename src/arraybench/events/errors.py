"""Errors of the events package (all ArraybenchError: the CLI shows them in one line)."""

from __future__ import annotations

from arraybench.errors import ArraybenchError


class EventError(ArraybenchError):
    """An event cannot be scheduled or analysed as asked."""


class InjectorError(EventError):
    """An injector could not apply or revert its action.

    `outcome` is "failed" or "timeout"; commands also give their `returncode` and output
    (`exit_code` stays the CLI's exit code of every ArraybenchError).
    """

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        outcome: str = "failed",
        returncode: int | None = None,
        output: str = "",
    ) -> None:
        super().__init__(message, hint)
        self.outcome = outcome
        self.returncode = returncode
        self.output = output
