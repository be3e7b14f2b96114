"""Value types shared by the plan's models: sizes, durations, bounded numbers, the strict base.

Every number of a plan is finite and bounded, and a YAML boolean is never a number (`yes` is
not 1): a value fio or the machine cannot carry is refused here, with the allowed range, rather
than by fio halfway through a campaign or, worse, silently changed (`duration: 1us` was written
as `runtime=0ms`, which makes fio drop time-based mode and read the whole target).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
)
from pydantic_core import core_schema

from arraybench.units import fio_size, format_duration, parse_duration, parse_size

# fio 3.33 runs at most 4088 jobs per invocation ("maximum number of jobs reached" from 4089:
# 511 shared-memory segments of 8 jobs); a point is one invocation per host.
MAX_JOBS = 4088
# io_setup() for libaio fails once the outstanding I/Os of all jobs exceed fs.aio-max-nr (65536
# by default on Linux; one job gets at most 65535, measured); iodepth x bs buffers stay allocatable
MAX_IODEPTH = 65535
MAX_FIO_INT = 2**32 - 1  # fio's integer options (rate_iops, ...) are unsigned 32-bit
MAX_SIZE = 1 << 60  # 1 EiB: fio's sizes are 64-bit byte counts; products of two stay exact
MAX_BLOCK = 1 << 30  # 1 GiB per I/O: Linux moves at most 2 GiB - 4 KiB in one read or write
MIN_FIO_SECONDS = 0.001  # fio's time options are written in whole milliseconds
MAX_SECONDS = 30 * 86400.0  # 30 days: longer is a typo (and overflows fio's microseconds)
MIN_LATENCY = 1e-9  # latency bounds are compared with fio's nanoseconds
MAX_LATENCY = 3600.0
MAX_NAME = 128  # names become file and folder names (255 bytes) with a suffix


def _number_text(value: float) -> str:
    """A number for an error line, short even for 10^4000 (str(int) refuses > 4300 digits)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "an infinite value" if value == value else "not a number (nan)"
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"about 10^{round(math.log10(abs(value)))}" if value > 0 else "a huge negative"
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class InRange:
    """Annotation: the value lies in [low, high] (or (low, high] with low_open, or is 0 with
    zero); the error names the range, in the value's unit, and why it ends there."""

    low: float
    high: float
    why: str = ""
    unit: Literal["", "s", "B"] = ""
    low_open: bool = False
    zero: bool = False

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> Any:
        # in seconds or bytes for durations and sizes: JSON Schema's bounds constrain numbers
        # only, so the text forms (30s, 8k) stay valid beside them
        result = handler(schema)
        low = 0 if self.zero else self.low
        key = "exclusiveMinimum" if self.low_open else "minimum"
        result.update({key: low, "maximum": self.high})
        return result

    def check(self, value: float) -> float:
        if self.zero and value == 0:
            return value
        low_ok = value > self.low if self.low_open else value >= self.low
        if math.isfinite(value) and low_ok and value <= self.high:
            return value
        if not math.isfinite(value) or abs(value) >= 1e15:
            shown = _number_text(value)
        else:
            shown = self._text(value)
        low = ("more than " if self.low_open else "") + self._text(self.low)
        allowed = f"{'0 or ' if self.zero else ''}{low} to {self._text(self.high)}"
        why = f" ({self.why})" if self.why else ""
        raise ValueError(f"{shown} is out of range: use {allowed}{why}")

    def _text(self, value: float) -> str:
        if self.unit == "s":
            return _seconds_text(value)
        if self.unit == "B":
            return fio_size(int(value))
        return _number_text(value)


def _seconds_text(value: float) -> str:
    if 0 < value < 1:
        return f"{value * 1000:g}ms" if value >= 0.001 else f"{value * 1e6:g}us"
    if value >= 86400 and value % 86400 == 0:
        return f"{value / 86400:g}d"
    return f"{value:g}s" if value < 60 else format_duration(value)


def _size(value: object) -> int:
    if isinstance(value, str | int) and not isinstance(value, bool):
        try:
            return parse_size(value)
        except OverflowError:  # 400 digits and a unit: float('inf')
            raise ValueError(f"invalid size {str(value)[:40]!r}: too large") from None
    raise ValueError("expected a size such as 8k, 128k, 1m or 1g")


def _duration(value: object) -> float:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        try:
            return parse_duration(value)
        except OverflowError:  # an integer beyond float's range
            return math.inf
    raise ValueError("expected a duration such as 5s, 2m or 1h")


def _no_bool(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError(
            f"expected a number, got the YAML boolean {str(value).lower()} "
            "(yes/no/on/off/true/false are booleans in YAML)"
        )
    return value


_FLOAT_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")


def _real(value: object) -> object:
    """A number, and the text PyYAML leaves for `1e9` (YAML 1.1 wants `1.0e+9`)."""
    if isinstance(value, str) and _FLOAT_TEXT.fullmatch(value):
        return float(value)
    return _no_bool(value)


_NUMBER = BeforeValidator(_no_bool)
_REAL = BeforeValidator(_real)  # for float fields: 1e9 written plainly is a number too
_FIO_TIME = "fio counts time in whole milliseconds"
_SIZE = BeforeValidator(_size)
_SECONDS = BeforeValidator(_duration)
Size = Annotated[int, _SIZE, InRange(1, MAX_SIZE, unit="B")]
BlockSize = Annotated[int, _SIZE, InRange(1, MAX_BLOCK, "at most 1 GiB per I/O", unit="B")]
# a time fio is given (runtime, ramp_time)
Duration = Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, MAX_SECONDS, _FIO_TIME, "s")]
RampDuration = Annotated[
    float, _SECONDS, InRange(MIN_FIO_SECONDS, MAX_SECONDS, _FIO_TIME, "s", zero=True)
]
Seconds = Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, MAX_SECONDS, unit="s")]
Wait = Annotated[float, _SECONDS, InRange(0, MAX_SECONDS, unit="s")]  # may be 0
Latency = Annotated[float, _SECONDS, InRange(MIN_LATENCY, MAX_LATENCY, unit="s")]
Percent = Annotated[int, _NUMBER, Field(strict=True), InRange(0, 100)]
PositiveInt = Annotated[int, _NUMBER, Field(strict=True), InRange(1, MAX_FIO_INT)]
Jobs = Annotated[
    int, _NUMBER, Field(strict=True), InRange(1, MAX_JOBS, f"fio runs at most {MAX_JOBS} jobs")
]
IoDepth = Annotated[
    int, _NUMBER, Field(strict=True), InRange(1, MAX_IODEPTH, "libaio gives one job at most 65535")
]
Port = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 65535)]
Fraction = Annotated[float, _REAL, Field(strict=True), InRange(0, 100)]  # a percentage
Bool = Annotated[bool, Field(strict=True)]


class Strict(BaseModel):
    # strict=False: nested models come from dicts and pairs from YAML lists; numbers are made
    # strict one by one above (no booleans, no strings)
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


# the plan's names and bounded counts (plan/model.py and its parts)
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
LABEL_PATTERN = r"^[^\x00-\x1f\x7f]*$"
ENGINE_PATTERN = r"^[A-Za-z0-9_.:/+\-]+$"
# names become parts of file and folder names: a safe character set and a length limit
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME, pattern=NAME_PATTERN)]
# a workload's name may end in `@PRESET`: the copy a plan's `data_grid` made of it
# (docs/data.md); only a preset's name (plan/workload.py DATA_PRESETS), so the mark never
# reads as a key's other marks (`@r3`: a SNIA round, point_identity.ROUND_MARK)
WORKLOAD_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(@(incompressible|zeros|db|vdi))?$"
WorkloadName = Annotated[
    str, Field(min_length=1, max_length=MAX_NAME, pattern=WORKLOAD_NAME_PATTERN)
]
# one line of text shown in tables and reports: no control characters (newlines, escapes)
Label = Annotated[str, Field(min_length=1, max_length=200, pattern=LABEL_PATTERN)]
PathText = Annotated[str, Field(min_length=1, max_length=4096)]  # PATH_MAX
# fio engine names, `external:/path/engine.so` included; nothing fio would read as syntax
Engine = Annotated[str, Field(min_length=1, max_length=256, pattern=ENGINE_PATTERN)]
Count = Annotated[int, _NUMBER, Field(strict=True), InRange(1, MAX_JOBS)]
Share = Annotated[float, _REAL, Field(strict=True), InRange(0, 100, low_open=True)]  # a %, > 0
Blocks = Annotated[int, _NUMBER, Field(strict=True), InRange(1, MAX_SIZE)]
Rate = Annotated[float, _REAL, Field(strict=True), InRange(0, 1e12, low_open=True)]  # > 0
Mtu = Annotated[int, _NUMBER, Field(strict=True), InRange(68, 65535)]
Passes = Annotated[float, _REAL, Field(strict=True), InRange(0, 1000, low_open=True)]
Steps = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 1000)]  # rounds, steps
Repeats = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 100)]
REPEAT_TEXT = (
    "Measure each point this many times, the whole ladder once before it is measured again, "
    "so a drift of the target does not land on one level. Each repetition is stored with its "
    "raw files; `show --format json` gives every point `repetition`, `repeats` (how many are "
    "stored for its level), `throughput_median`, `throughput_ci95_pct` and "
    "`lat_mean_us_median`, `lat_mean_us_ci95_pct`: the median and the half-width of the 95 % "
    "Student t interval of the mean, in % of the mean (null when measured once)."
)
RoundWindow = Annotated[int, _NUMBER, Field(strict=True), InRange(2, 1000)]
Increase = Annotated[float, _REAL, Field(strict=True), InRange(0, 1e6, low_open=True)]  # %
Files = Annotated[int, _NUMBER, Field(strict=True), InRange(1, 10**7)]
SteadyWindow = Annotated[
    float, _SECONDS, InRange(1.0, MAX_SECONDS, "fio checks steady state every second", "s")
]


def _label_value(value: object) -> object:
    # `labels: {year: 2024}` is natural YAML: numbers become text; booleans stay refused
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _pair(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _on_off(value: object) -> object:
    # YAML 1.1 reads a bare `off` as false (and `on` as true)
    return {False: "off", True: "exact"}.get(value, value) if isinstance(value, bool) else value
