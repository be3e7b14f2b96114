"""`netem`: packets leaving an interface delayed or lost (tc netem as its root qdisc)."""

from __future__ import annotations

from pydantic import Field, model_validator

from arraybench.plan.event_kinds.base import EventKind, Offset
from arraybench.plan.types import Fraction, Strict


class NetemAction(Strict):
    """Delay and/or lose packets leaving `interface` (tc netem as its root qdisc)."""

    interface: str = Field(
        min_length=1,
        pattern="^[^\\s/]{1,15}$",
        description=("The network interface whose outgoing packets are delayed or lost."),
    )
    delay: Offset | None = Field(None, description="Added delay per packet.")
    jitter: Offset | None = Field(None, description="Random variation of the delay.")
    # percent of packets
    loss: Fraction | None = Field(None, description="Percent of packets lost.")
    # run tc inside this network namespace
    netns: str | None = Field(
        None, min_length=1, description="Run tc inside this network namespace."
    )

    @model_validator(mode="after")
    def _something(self) -> NetemAction:
        if self.delay is None and self.loss is None:
            raise ValueError("give delay and/or loss")
        if self.jitter is not None and self.delay is None:
            raise ValueError("jitter needs a delay")
        return self


def describe(action: NetemAction) -> str:
    where = f" (netns {action.netns})" if action.netns else ""
    return f"netem {action.interface}{where}"


KIND = EventKind(
    "netem",
    NetemAction,
    "Delay or lose network packets (tc netem).",
    describe,
    examples="""\
  - {at: 5s, duration: 10s, netem: {interface: eth1, delay: 5ms, jitter: 1ms, loss: 0.5}}
""",
    more_examples="""\
  - {at: 10s, duration: 10s, netem: {interface: veth1, delay: 2ms, netns: load1}}
""",
)
