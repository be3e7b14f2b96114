"""The report pauses the cyclic collector while it builds and writes, and gives it back."""

from __future__ import annotations

import gc

from arraybench.report.gcpause import gc_paused


def test_paused_inside_restored_after_and_nested() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer one still holds it
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
