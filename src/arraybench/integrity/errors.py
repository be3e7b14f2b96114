"""The one error type of the integrity package."""

from __future__ import annotations

from arraybench.errors import ArraybenchError


class IntegrityError(ArraybenchError):
    """The integrity writer or checker cannot do its job (bad region, journal, target...).

    A block that fails the check is not an error: it is a finding in the IntegrityReport.
    """
