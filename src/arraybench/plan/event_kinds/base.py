"""What an event kind tells the plan (`EventKind`), and the value forms kinds share.

A kind's own module here holds its action model and its `KIND`; `plan/event_kinds/__init__.py`
lists them, and `plan/events.py` builds the `Event` model from that list. What the kind does
at run time is in `events/event_kinds/` (a module of the same name)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, StringConstraints

from arraybench.plan.types import Seconds, Wait

Duration = Seconds  # an event's length or a command's timeout: arraybench waits, not fio
# an offset or a delay that may be zero (`at: 0s`, `jitter: 0ms`)
Offset = Wait

# where an event of the kind may act: `never` on a host (the operator's), on the `named`
# hosts only (else on the controller), or on `every` host of the point unless hosts are named
HostsRule = Literal["never", "named", "every"]


def _text_form(key: str) -> BeforeValidator:
    """Accept a bare string for a one-field action: `prompt: "Pull cable A"`."""

    def convert(value: object) -> object:
        return {key: value} if isinstance(value, str) else value

    return BeforeValidator(convert)


def _argv_form(value: object) -> object:
    """Accept a bare list for `run`: `run: [systemctl, stop, iscsid]`."""
    return {"argv": value} if isinstance(value, list) else value


def _argv_word(value: object) -> object:
    """`[sleep, 5]` is natural YAML: numbers become words; booleans are refused (YAML reads
    true, yes, on as booleans, and "True" is not what was meant)."""
    if isinstance(value, bool):
        raise ValueError("a YAML boolean here: quote the word ('true', 'yes', 'on')")
    if isinstance(value, int | float):
        return str(value)
    return value


Argv = Annotated[
    list[Annotated[str, StringConstraints(min_length=1), BeforeValidator(_argv_word)]],
    Field(min_length=1),
]


@dataclass(frozen=True)
class EventKind:
    """One kind of event as the plan knows it: the key an event names it by, its action's
    model, and how reports and the reference show it."""

    name: str  # the event's key in a plan (`KEY: {...}`)
    model: type[BaseModel]  # the action's model
    help: str  # the key's description in docs/plan.md
    describe: Callable[[Any], str]  # an action -> the event's default label
    hosts: HostsRule = "every"
    short_form: BeforeValidator | None = None  # a bare string or list for the action
    by_operator: bool = False  # done by hand: the timeline asks, no injector
    examples: str = ""  # events (YAML flow lines) of the documented example, plan/events.py
    more_examples: str = ""  # events for keys the example leaves out (docs/plan.md)
