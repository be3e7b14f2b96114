"""`prompt`: the operator does something by hand; the timeline asks (events/timeline.py)."""

from __future__ import annotations

from pydantic import Field

from arraybench.plan.event_kinds.base import EventKind, Offset, _text_form
from arraybench.plan.types import Strict


class PromptAction(Strict):
    """The operator does something by hand (pull a cable, power off a controller).

    Interactive runs show `text` when the event is due and take the operator's confirmation
    time as the event time. Non-interactive runs assume the action was done `assume_after`
    the trigger (0: at the trigger) and record that time as assumed.
    """

    text: str = Field(
        min_length=1, description="What the operator must do, shown when the event is due."
    )
    # asked at the end of `duration`
    revert_text: str | None = Field(
        None, min_length=1, description="What the operator must do at the end of `duration`."
    )
    assume_after: Offset = Field(
        0.0,
        description=(
            "Non-interactive runs: the action is assumed done this long after the trigger."
        ),
    )


def describe(action: PromptAction) -> str:
    text = action.text if len(action.text) <= 40 else action.text[:37] + "..."
    return f'prompt "{text}"'


KIND = EventKind(
    "prompt",
    PromptAction,
    "Ask the operator to do something by hand (a string is the text).",
    describe,
    hosts="never",
    short_form=_text_form("text"),
    by_operator=True,
    examples="""\
  - {when: steady, prompt: {text: "Pull the FC cable of controller A",
     revert_text: "Plug it back", assume_after: 10s}, duration: 60s}
""",
)
