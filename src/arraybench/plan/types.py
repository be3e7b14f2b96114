"""Value types shared by the plan's models: sizes, durations, the strict base model."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from arraybench.units import parse_duration, parse_size


def _size(value: object) -> int:
    if isinstance(value, str | int) and not isinstance(value, bool):
        return parse_size(value)
    raise ValueError("expected a size such as 8k, 128k, 1m or 1g")


def _duration(value: object) -> float:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return parse_duration(value)
    raise ValueError("expected a duration such as 5s, 2m or 1h")


Size = Annotated[int, BeforeValidator(_size), Field(gt=0)]
Duration = Annotated[float, BeforeValidator(_duration), Field(gt=0)]
RampDuration = Annotated[float, BeforeValidator(_duration), Field(ge=0)]
Percent = Annotated[int, Field(ge=0, le=100)]
PositiveInt = Annotated[int, Field(gt=0)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)
