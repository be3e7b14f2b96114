"""The one rule for "the netem is gone" after `tc qdisc del ... root`, shared by the local
injector, the host injector and `arraybench revert` (this kernel may have no netem to test
it end to end)."""

from __future__ import annotations

from arraybench.events.event_kinds.netem import netem_deleted


def test_a_netem_already_gone_counts_as_deleted_and_a_refusal_does_not() -> None:
    assert netem_deleted(0, "")
    assert netem_deleted(2, "Error: Cannot delete qdisc with handle of zero.")
    assert netem_deleted(1, 'Cannot find device "abv9"')
    assert netem_deleted(1, "Cannot open network namespace: No such file or directory")
    assert not netem_deleted(2, "RTNETLINK answers: Operation not permitted")
