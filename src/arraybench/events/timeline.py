"""The events of one point, applied and reverted on time in a background thread.

```python
timeline = EventTimeline(workload.events, pids=lambda: process_tree_pids(fio.pid),
                         confirm=None, interactive=False, steady=None)
with timeline.running(t0):          # t0: the point's start, Unix seconds
    ...                             # fio runs; Ctrl-C or an exception still reverts
records = timeline.records()
```

More: docs/internals.md, `events/timeline.py`."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any

from arraybench.events.errors import EventError, InjectorError
from arraybench.events.event_kinds import make_injector, runs_apart
from arraybench.events.injectors import Injector, PidSource
from arraybench.events.journal import InjectionLog
from arraybench.events.records import Action, EventRecord, Outcome
from arraybench.plan.events import ByOperator, Event
from arraybench.system.signals import join_started, start_shielded

REFRESH_S = 1.0  # how often applied injectors catch new load processes
JOIN_S = 3.0  # how long stop() waits for the thread (it may be blocked in a prompt)
STOP_ATTEMPTS = 5  # Ctrl-C pressed again during stop() does not skip reverts (up to 5 times)
COMMAND_JOIN_S = 3600.0  # a safety net: commands are killed at their own timeout

InjectorFactory = Callable[[Event, PidSource], Injector | None]
SignalHandler = Callable[[int, FrameType | None], Any] | int | None


@dataclass
class _Slot:
    index: int
    event: Event
    injector: Injector | None
    due: float | None = None  # when it starts (Unix); None: waiting for steady state
    planned_at_s: float | None = None
    state: str = "pending"  # pending -> active -> done
    started: float | None = None  # the event time (apply start, or the operator's action)
    revert_due: float | None = None
    revert_planned_s: float | None = None
    busy: bool = False  # a command runs, or an interactive prompt waits for the operator

    @property
    def prompt(self) -> ByOperator | None:
        return self.event.by_operator


class EventTimeline:
    def __init__(
        self,
        events: Sequence[Event],
        pids: PidSource,
        confirm: Callable[[str], None] | None = None,
        interactive: bool = False,
        steady: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.time,
        *,
        on_record: Callable[[EventRecord], None] | None = None,
        poll_s: float = 0.1,
        injector_factory: InjectorFactory | None = None,
        handle_sigterm: bool = True,
        journal: InjectionLog | None = None,
    ) -> None:
        if interactive and confirm is None and any(e.by_operator for e in events):
            raise EventError(
                "interactive prompts need a way to ask the operator (confirm)",
                "pass confirm, or run non-interactively (prompts are then assumed)",
            )
        factory = injector_factory or make_injector
        self._slots = [_Slot(i, e, factory(e, pids)) for i, e in enumerate(events)]
        for slot in self._slots:  # every injection journaled before it is applied
            injector = slot.injector
            if injector is not None and journal is not None and "journal" not in vars(injector):
                injector.journal = journal
            if injector is not None and not injector.label:
                injector.label = slot.event.name
        self._confirm = confirm
        self._interactive = interactive
        self._steady = steady
        self._clock = clock
        self._on_record = on_record
        self._poll_s = poll_s
        self._handle_sigterm = handle_sigterm
        self._lock = threading.RLock()  # RLock: the SIGTERM handler may run inside stop()
        self._records: list[EventRecord] = []
        self._records_lock = threading.RLock()  # apart: records() never waits for a command
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0: float | None = None
        self._steady_at: float | None = None
        self._finished = False
        self._stopped = threading.Event()
        self._stopping_thread: int | None = None
        self._sigterm_pending = False
        self._previous_sigterm: SignalHandler = None
        self._sigterm_installed = False
        self._thread_error: str | None = None
        self._active_order: list[int] = []  # slot indices in the order they became active
        self._workers: list[threading.Thread] = []  # threads running `run` commands

    # ----------------------------------------------------------------------------- public

    @property
    def t0(self) -> float | None:
        return self._t0

    def records(self) -> list[EventRecord]:
        with self._records_lock:
            return list(self._records)

    def start(self, t0: float | None = None) -> None:
        """Start the timeline; t0 is the point's start (Unix seconds, default now)."""
        if self._thread is not None or self._finished:
            raise EventError("an event timeline runs once; make a new one for the next point")
        self._t0 = self._clock() if t0 is None else t0
        for slot in self._slots:
            if slot.event.at is not None:
                self._schedule(slot, self._t0 + slot.event.at)
        self._install_sigterm()
        self._thread = threading.Thread(target=self._run, name="arraybench-events", daemon=True)
        start_shielded(self._thread)  # a Ctrl-C now is handled once it has started

    def stop(self) -> None:
        """Revert everything still applied and record what never started. Idempotent; a second
        caller from another thread waits until the first has finished."""
        me = threading.get_ident()
        with self._lock:
            if self._finished:
                first = False
            else:
                first = True
                self._finished = True
                self._stopping_thread = me
        if not first:
            if self._stopping_thread != me:
                self._stopped.wait(timeout=JOIN_S + 60)
            return
        interrupted = False
        try:
            self._wake.set()
            for _ in range(STOP_ATTEMPTS):
                try:
                    self._wait_for_threads()
                    with self._lock:
                        self._finish()  # resumable: what is reverted is marked done
                    break
                except KeyboardInterrupt:  # another Ctrl-C: go on reverting, say so after
                    interrupted = True
        finally:
            self._stopped.set()
            self._restore_sigterm()
        if interrupted:
            raise KeyboardInterrupt

    def _wait_for_threads(self) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            waiting_for_operator = any(s.busy and s.prompt is not None for s in self._slots)
            join_started(thread, 0.2 if waiting_for_operator else JOIN_S)
        for worker in list(self._workers):  # commands end by themselves (their timeout)
            if worker is not threading.current_thread():
                join_started(worker, COMMAND_JOIN_S)

    @contextmanager
    def running(self, t0: float | None = None) -> Iterator[EventTimeline]:
        """Start, and stop (revert) on the way out, whatever ends the block."""
        self.start(t0)
        try:
            yield self
        finally:
            self.stop()

    # ----------------------------------------------------------------------------- thread

    def _schedule(self, slot: _Slot, trigger: float) -> None:
        assert self._t0 is not None
        prompt = slot.prompt
        delay = prompt.assume_after if prompt is not None and not self._interactive else 0.0
        slot.due = trigger + delay
        slot.planned_at_s = trigger - self._t0 + delay

    def _run(self) -> None:
        last_refresh = 0.0
        try:
            while not self._finished:
                now = self._clock()
                self._poll_steady(now)
                job = self._next_job(now)
                if job is not None:
                    slot, starting = job
                    if starting:
                        self._start(slot)
                    else:
                        self._end(slot)
                    continue
                if now - last_refresh >= REFRESH_S:
                    self._refresh()
                    last_refresh = now
                self._wake.wait(self._sleep_for(now))
                self._wake.clear()
        except Exception as exc:  # a bug must not leave events applied: stop() reverts
            self._thread_error = f"{type(exc).__name__}: {exc}"

    def _poll_steady(self, now: float) -> None:
        if self._steady_at is not None:
            return
        waiting = [s for s in self._slots if s.state == "pending" and s.due is None]
        if not waiting:
            return
        seen = False
        if self._steady is not None:
            try:
                seen = bool(self._steady())
            except Exception:
                seen = False
        if seen:
            self._steady_at = now
            with self._lock:
                for slot in waiting:
                    self._schedule(slot, now)

    def _next_job(self, now: float) -> tuple[_Slot, bool] | None:
        best: tuple[float, int, _Slot, bool] | None = None
        with self._lock:
            for slot in self._slots:
                if slot.busy:
                    continue
                if slot.state == "pending" and slot.due is not None and slot.due <= now:
                    candidate = (slot.due, slot.index, slot, True)
                elif slot.state == "active" and slot.revert_due is not None:
                    if slot.revert_due > now:
                        continue
                    candidate = (slot.revert_due, slot.index, slot, False)
                else:
                    continue
                if best is None or candidate[:2] < best[:2]:
                    best = candidate
        return None if best is None else (best[2], best[3])

    def _sleep_for(self, now: float) -> float:
        times = [s.due for s in self._slots if s.state == "pending" and s.due is not None]
        times += [s.revert_due for s in self._slots if s.state == "active" and s.revert_due]
        nearest = min(times, default=now + self._poll_s)
        return max(0.0, min(self._poll_s, nearest - now))

    def _refresh(self) -> None:
        with self._lock:
            for slot in self._slots:
                if slot.state == "active" and slot.injector is not None and not self._finished:
                    # best effort: the revert reports what went wrong
                    with contextlib.suppress(Exception):
                        slot.injector.refresh()

    # ----------------------------------------------------------------------------- steps

    def _activate(self, slot: _Slot, event_time: float) -> None:
        """`event_time`: when the event is in force (its apply or command returned, the
        operator confirmed), so `duration` is how long it holds, however slow the apply (a
        throttle over SSH took 1.2 s to apply under load and held for 1.8 s of its 3)."""
        slot.state = "active"
        slot.started = event_time
        self._active_order.append(slot.index)
        duration = slot.event.duration
        if duration is not None:
            slot.revert_due = event_time + duration
            if slot.planned_at_s is not None:
                slot.revert_planned_s = slot.planned_at_s + duration

    def _start(self, slot: _Slot) -> None:
        if slot.prompt is not None:
            self._start_prompt(slot, slot.prompt)
            return
        if runs_apart(slot.event):
            self._spawn_command(slot, starting=True)
            return
        injector = slot.injector
        assert injector is not None
        with self._lock:
            if self._finished:
                return
            started = self._clock()
            outcome, detail = self._attempt(injector.apply)
            ended = self._clock()
            self._add(slot, "apply", outcome, slot.planned_at_s, started, ended, detail, injector)
            if injector.applied:
                self._activate(slot, ended)
            else:
                slot.state = "done"

    def _spawn_command(self, slot: _Slot, starting: bool) -> None:
        """Commands run in their own thread: a slow one delays no other event."""
        with self._lock:
            if self._finished:
                return
            slot.busy = True
            worker = threading.Thread(
                target=self._command_step,
                args=(slot, starting),
                name=f"arraybench-event-{slot.index}",
                daemon=True,
            )
            self._workers.append(worker)
        start_shielded(worker)

    def _command_step(self, slot: _Slot, starting: bool) -> None:
        injector = slot.injector
        assert injector is not None
        started = self._clock()
        outcome, detail = self._attempt(injector.apply if starting else injector.revert)
        ended = self._clock()
        with self._lock:
            # recorded even when the point ended meanwhile (stop() waits for commands): the
            # command ran, and if it has a revert command, stop() runs that afterwards
            if starting:
                self._add(slot, "run", outcome, slot.planned_at_s, started, ended, detail, injector)
                if injector.applied:
                    self._activate(slot, ended)
                else:
                    slot.state = "done"
            else:
                self._add(
                    slot, "revert", outcome, slot.revert_planned_s, started, ended, detail, injector
                )
                slot.state = "done"
            slot.busy = False

    def _attempt(self, step: Callable[[], str]) -> tuple[Outcome, str]:
        try:
            return "ok", step()
        except InjectorError as exc:
            return ("timeout" if exc.outcome == "timeout" else "failed"), exc.one_line()
        except Exception as exc:
            return "failed", f"{type(exc).__name__}: {exc}"

    def _start_prompt(self, slot: _Slot, prompt: ByOperator) -> None:
        if not self._interactive:
            assert slot.due is not None
            with self._lock:
                if self._finished:
                    return
                self._add(
                    slot,
                    "prompt",
                    "ok",
                    slot.planned_at_s,
                    slot.due,
                    slot.due,
                    f"assumed (non-interactive): {prompt.text}",
                )
                self._activate(slot, slot.due)
            return
        shown = self._clock()
        outcome, detail = self._ask(slot, prompt.text)
        with self._lock:
            slot.busy = False
            if self._finished:
                return  # stop() recorded it as not confirmed in time
            confirmed = self._clock()
            self._add(slot, "prompt", outcome, slot.planned_at_s, shown, confirmed, detail)
            if outcome == "ok":
                self._activate(slot, confirmed)
            else:
                slot.state = "done"

    def _ask(self, slot: _Slot, text: str) -> tuple[Outcome, str]:
        """Ask the operator (outside the lock: it blocks); returns the outcome and detail."""
        assert self._confirm is not None
        slot.busy = True
        try:
            self._confirm(text)
        except Exception as exc:
            return "failed", f"no confirmation ({type(exc).__name__}: {exc}): {text}"
        return "ok", f"confirmed by the operator: {text}"

    def _revert_text(self, prompt: ByOperator) -> str:
        return prompt.revert_text or f"Undo: {prompt.text}"

    def _end(self, slot: _Slot, at_stop: bool = False) -> None:
        prompt = slot.prompt
        if prompt is not None:
            self._end_prompt(slot, prompt, at_stop)
            return
        if runs_apart(slot.event) and not at_stop:
            self._spawn_command(slot, starting=False)
            return
        injector = slot.injector
        assert injector is not None
        with self._lock:
            if slot.state != "active" or (self._finished and not at_stop):
                return
            started = self._clock()
            outcome, detail = self._attempt(injector.revert)
            planned = None if at_stop and slot.revert_due is None else slot.revert_planned_s
            if at_stop and slot.revert_due is not None:
                detail = f"at the point's end, before its duration: {detail}"
            self._add(slot, "revert", outcome, planned, started, self._clock(), detail, injector)
            slot.state = "done"

    def _end_prompt(self, slot: _Slot, prompt: ByOperator, at_stop: bool) -> None:
        text = self._revert_text(prompt)
        if at_stop:  # never block the way out: record what the operator has to do
            with self._lock:
                slot.state = "done"
                if prompt.revert_text is None and slot.revert_due is None:
                    return  # nothing to undo was planned
                now = self._clock()
                if self._interactive:
                    self._add(
                        slot,
                        "revert",
                        "timeout",
                        None,
                        now,
                        now,
                        f"the point ended before the operator confirmed; do it by hand: {text}",
                    )
                else:
                    self._add(
                        slot, "revert", "ok", None, now, now, f"assumed (non-interactive): {text}"
                    )
            return
        if not self._interactive:
            with self._lock:
                if self._finished:
                    return
                assert slot.revert_due is not None
                due = slot.revert_due
                self._add(
                    slot,
                    "revert",
                    "ok",
                    slot.revert_planned_s,
                    due,
                    due,
                    f"assumed (non-interactive): {text}",
                )
                slot.state = "done"
            return
        shown = self._clock()
        outcome, detail = self._ask(slot, text)
        with self._lock:
            slot.busy = False
            if self._finished:
                return
            self._add(slot, "revert", outcome, slot.revert_planned_s, shown, self._clock(), detail)
            slot.state = "done"

    def _finish(self) -> None:
        """Under the lock, once: revert what is applied (last applied first), record the rest."""
        for index in reversed(self._active_order):
            slot = self._slots[index]
            if slot.state == "active":
                self._end(slot, at_stop=True)
        now = self._clock()
        for slot in self._slots:
            if slot.state != "pending":
                continue
            slot.state = "done"
            if self._thread is None:
                continue  # never started: nothing happened, nothing to say
            assert self._t0 is not None
            if slot.busy:
                why = "the point ended before the operator confirmed the prompt"
            elif slot.due is None:
                why = "never started: the load did not reach steady state"
            else:
                why = (
                    f"never started: the point ended at +{now - self._t0:.1f}s, "
                    f"before +{slot.planned_at_s or 0:g}s"
                )
            if self._thread_error:
                why += f" (event thread failed: {self._thread_error})"
            self._add(slot, "skipped", "timeout", slot.planned_at_s, now, now, why)

    def _add(
        self,
        slot: _Slot,
        action: Action,
        outcome: Outcome,
        planned: float | None,
        started: float,
        ended: float,
        detail: str,
        injector: Injector | None = None,
    ) -> None:
        record = EventRecord(
            index=slot.index,
            kind=slot.event.kind,
            label=slot.event.name,
            action=action,
            outcome=outcome,
            planned_at_s=planned,
            started_unix=started,
            ended_unix=ended,
            detail=detail,
            output=injector.last_output if injector is not None else "",
            exit_code=injector.last_exit_code if injector is not None else None,
        )
        with self._records_lock:
            self._records.append(record)
        if self._on_record is not None:
            with contextlib.suppress(Exception):  # an observer must not stop the reverts
                self._on_record(record)

    # ----------------------------------------------------------------------------- SIGTERM

    def _install_sigterm(self) -> None:
        if not self._handle_sigterm or threading.current_thread() is not threading.main_thread():
            return  # Python lets only the main thread set handlers
        self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
        self._sigterm_installed = True

    def _restore_sigterm(self) -> None:
        if not self._sigterm_installed:
            return
        if threading.current_thread() is not threading.main_thread():
            return  # the handler stays; it finds the timeline stopped and only hands on
        self._sigterm_installed = False
        if signal.getsignal(signal.SIGTERM) == self._on_sigterm:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
        if self._sigterm_pending:
            self._sigterm_pending = False
            self._hand_on(signal.SIGTERM, None)

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self._stopping_thread == threading.get_ident() and not self._stopped.is_set():
            self._sigterm_pending = True  # stop() is running below us: it hands the signal on
            return
        self.stop()
        self._hand_on(signum, frame)

    def _hand_on(self, signum: int, frame: FrameType | None) -> None:
        previous = self._previous_sigterm
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_IGN:
            return
        else:  # the default action: end the process as SIGTERM would have
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.raise_signal(signal.SIGTERM)
