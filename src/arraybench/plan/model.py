"""The plan: strict pydantic models. Unknown keys are errors; sizes and durations are parsed here.

Field names are the plan's vocabulary, not fio's: fio option names live only in `engines/fio/`.
`Plan` is here; its parts live beside it and are re-exported from here: `machines.py`
(targets, hosts, fabric), `workload.py` (data, timing, load, verify, workload),
`special_tests.py` (preconditioning, rounds, interference, metadata), `acceptance.py`
(latency bound, expectations); the value types in `types.py`.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Literal

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

# the plan's parts, re-exported: `from arraybench.plan.model import Workload` stays the one
# import for every part of the plan
from arraybench.plan.acceptance import Expectation as Expectation
from arraybench.plan.acceptance import LatencyBound as LatencyBound
from arraybench.plan.array_monitor import ArrayMonitor
from arraybench.plan.curve import CurveTest
from arraybench.plan.engine_choice import EngineName
from arraybench.plan.events import event_host_errors
from arraybench.plan.machines import Fabric as Fabric
from arraybench.plan.machines import Host as Host
from arraybench.plan.machines import Ssh as Ssh
from arraybench.plan.machines import Target as Target
from arraybench.plan.scenarios import Scenario, check_scenarios
from arraybench.plan.special_tests import InterferenceTest as InterferenceTest
from arraybench.plan.special_tests import MetadataTest as MetadataTest
from arraybench.plan.special_tests import Precondition as Precondition
from arraybench.plan.special_tests import Rounds as Rounds
from arraybench.plan.tuning import HostTuning
from arraybench.plan.types import (
    _SECONDS,
    MIN_FIO_SECONDS,
    REPEAT_TEXT,
    Bool,
    Engine,
    InRange,
    Label,
    Name,
    PathText,
    Repeats,
    Size,
    Strict,
    _label_value,
)
from arraybench.plan.types import ENGINE_PATTERN as ENGINE_PATTERN
from arraybench.plan.types import LABEL_PATTERN as LABEL_PATTERN
from arraybench.plan.types import NAME_PATTERN as NAME_PATTERN
from arraybench.plan.workload import DataPattern as DataPattern
from arraybench.plan.workload import DataPresetName, data_schema, expand_data_grid
from arraybench.plan.workload import Load as Load
from arraybench.plan.workload import SteadyStop as SteadyStop
from arraybench.plan.workload import Timing as Timing
from arraybench.plan.workload import Verify as Verify
from arraybench.plan.workload import Workload as Workload


class ReportOptions(Strict):
    """How the report names its headline figures, and what it says is missing."""

    # AERODISK's report puts the controller's CPU under each time chart: a plan after it
    # says when none was collected (report/sections/controllercpu.py)
    controller_cpu: Literal["expected", "optional"] = Field(
        "optional",
        description=(
            "expected: say under each point's time chart when no array controller CPU was "
            "collected (array_monitor's `cpu`); optional: draw it when collected, say "
            "nothing otherwise."
        ),
    )

    headline_includes_flagged: Bool = Field(
        False,
        description=(
            "Let points with validity flags (e.g. generator-bound) be the optimal point, the "
            "maximum and the summary's figures, in the report, in `compare` and in acceptance "
            "verdicts; by default they are left out of them (still drawn and listed, marked "
            "as flagged)."
        ),
    )


class Plan(Strict):
    name: Name = Field(
        description=(
            "The plan's name (letters, digits, _ . -): runs and reports are named after it."
        )
    )
    description: str = Field(
        "",
        max_length=10000,
        description=("What the plan measures, shown by `arraybench templates` and in reports."),
    )
    customer: str = Field(
        "",
        max_length=200,
        description=(
            'Who the results are for (e.g. "ACME Bank, Zurich data centre"): named in the '
            "set-up block of every report (`report --audience customer`)."
        ),
    )
    scenario: Label = Field(
        "default",
        description=("Scenario label of the run (e.g. baseline, dedupe-on): compare runs by it."),
    )
    labels: dict[Label, Annotated[Label, BeforeValidator(_label_value)]] = Field(
        default_factory=dict, description="Free key/value labels stored with the run."
    )
    targets: list[Target] = Field(
        default_factory=list,
        description=(
            "Files or block devices under test (empty: a scratch file beside the results)."
        ),
    )
    allow_destroy: list[PathText] = Field(
        default_factory=list,
        description=(
            "Targets that may be overwritten although they carry data, or cannot be examined "
            "(every written target of a host without `ssh`): paths, matched resolved "
            "(locally) or normalised (on a host)."
        ),
    )
    engine: EngineName = Field(
        "fio",
        description=(
            "The load engine that runs the points (docs/engines.md); `hosts` and "
            "`interference` run on fio only, `metadata` on the tool it names."
        ),
    )
    ioengine: Engine = Field("libaio", description="fio I/O engine.")
    direct: Bool = Field(True, description="O_DIRECT I/O (bypass the page cache).")
    data: DataPattern = Field(
        DataPattern(),
        description=(
            "What the written buffers contain, as the compression and dedupe ratios an array "
            "would reach (incompressible unless asked otherwise; docs/data.md)."
        ),
        json_schema_extra=data_schema,
    )
    data_grid: list[DataPresetName] | None = Field(
        None,
        min_length=2,
        description=(
            "Run every workload once per data preset listed (e.g. [incompressible, db]): each "
            "workload becomes one copy per value, named WORKLOAD@VALUE with `data: VALUE`; the "
            "report compares the copies' IOPS and latency per load level against the first "
            "value's (docs/data.md)."
        ),
    )
    timing: Timing = Field(Timing(), description="Ramp and measured time of each point.")
    load: Load = Field(
        Load(workers=[1, 2, 4, 8, 16], iodepth=[1]),
        description="Load levels: workers x iodepth, or explicit pairs.",
    )
    latency_bound: LatencyBound = Field(
        LatencyBound(), description="The bound of the latency-bounded throughput in the summary."
    )
    # free text, shown in the report's Set-up: what was measured (a customer's report names it)
    system_under_test: str = Field(
        "",
        max_length=1000,
        description=(
            "The storage measured, in the report's Set-up: vendor, model, firmware (free text)."
        ),
    )
    fabric: Fabric | None = Field(
        None,
        description=(
            "The links to the storage: a ceiling drawn on the charts, named in the report's "
            "Set-up; a point moving more than they carry is flagged above-ceiling."
        ),
    )
    # bytes/s of the array's GC, if known (else measured)
    gc_throughput: Size | None = Field(
        None,
        description=(
            "Bytes/s the array's garbage collection processes, if known "
            "(else measured by the cliff analysis)."
        ),
    )
    # sample /proc/diskstats and CPU of the targets' devices
    monitor: Bool = Field(
        True,
        description=("Sample /proc/diskstats and CPU of the targets' devices during each point."),
    )
    array_monitor: ArrayMonitor | None = Field(
        None,
        description="The array's own counters pulled during the run (Prometheus query_range "
        "over each point, or a command printing samples), stored beside fio's figures.",
    )
    host_tuning: HostTuning | None = Field(
        None,
        description="Block queue settings (scheduler, nr_requests, read_ahead_kb ...) set on the "
        "targets' devices for the run, restored after it (also by `arraybench revert`).",
    )
    # SNIA: return block devices to fresh-out-of-box first (blkdiscard)
    purge: Bool = Field(
        False, description=("SNIA: return block devices to fresh-out-of-box first (blkdiscard).")
    )
    precondition: Precondition | None = Field(
        None, description=("SNIA workload-independent preconditioning before the first point.")
    )
    rounds: Rounds | None = Field(
        None, description=("SNIA rounds: repeat some workloads until one of them is steady.")
    )
    # empty: this machine, without fio servers
    hosts: list[Host] = Field(
        default_factory=list,
        description=("Load hosts running fio's server (empty: this machine, without fio servers)."),
    )
    # scaling scenarios: each a list of host names run together (S1, S2, S4 ...); default all
    host_sets: list[list[str]] | None = Field(
        None,
        description=(
            "Scaling scenarios: each a list of host names run together "
            "(S1, S2, S4 ...); default: all hosts."
        ),
    )
    on_host_failure: Literal["continue", "stop"] = Field(
        "stop",
        description=("When a host fails during a point: stop the run, or continue on the others."),
    )
    # many hosts: every host's I/O starts at the same wall-clock instant, this long after the
    # point's fio command (it must cover connecting to the servers and laying out files)
    start_lead: Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, 3600.0, unit="s")] = Field(
        3.0,
        description=(
            "Many hosts: every host's I/O starts at the same instant this "
            "long after the point's fio command."
        ),
    )
    max_start_spread: Annotated[float, _SECONDS, InRange(MIN_FIO_SECONDS, 3600.0, unit="s")] = (
        Field(
            1.0,
            description=(
                "Many hosts: a point whose hosts started their I/O further apart than this "
                "is flagged start-spread (its per-second data do not line up)."
            ),
        )
    )
    interference: InterferenceTest | None = Field(
        None,
        description=(
            "dbi's interference test: a rate-limited base load with "
            "background streams added in steps."
        ),
    )
    metadata: MetadataTest | None = Field(
        None,
        description=(
            "CSCS's metadata test (create, stat, delete files and directories) on fio's file "
            "engines or mdtest."
        ),
    )
    curve: CurveTest | None = Field(
        None,
        description="vdbench's iorate=curve (SPC-1's response-time curve): after the grid, "
        "each workload at its maximum's load level, rate-limited to percentages of that "
        "maximum; latency against the IOPS achieved (plan/curve.py).",
    )
    repeat: Repeats = Field(1, description=REPEAT_TEXT)
    report: ReportOptions = Field(
        ReportOptions(), description="How the report names its headline figures."
    )
    scenarios: list[Scenario] | None = Field(
        None,
        min_length=1,
        description="Set-ups measured one after the other in this campaign (In&Out's "
        "controller tests): every workload's series runs in every scenario, between its "
        "`before` and `after` steps; the report tables each workload's maximum per scenario "
        "against the first (plan/scenarios.py).",
    )
    workloads: list[Workload] = Field(
        min_length=1, description="The workloads, each run at every load level."
    )

    @field_validator("scenarios")
    @classmethod
    def _scenarios(cls, scenarios: list[Scenario] | None, info: ValidationInfo) -> object:
        # fields declared above `scenarios` are in info.data: the error stays located there
        hosts = info.data.get("hosts") or []
        extra = any(info.data.get(k) for k in ("rounds", "interference", "metadata"))
        check_scenarios(scenarios or [], {h.name: h.ssh is not None for h in hosts}, extra)
        return scenarios

    # PASS/FAIL verdicts
    acceptance: list[Expectation] = Field(
        default_factory=list,
        description=(
            "Acceptance criteria: PASS/FAIL verdicts (exit code 3 when one fails). With "
            "repeats, each is judged on the levels' medians and states its margin; a bound "
            "inside the 95 % interval is NOT DECIDABLE (exit code 3 too: repeat more). "
            "Flagged points prove nothing (report.headline_includes_flagged): when only "
            "flagged points would pass, the verdict is NOT DECIDABLE and names them."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _data_grid(cls, raw: object) -> object:
        return expand_data_grid(raw)

    @field_validator("data_grid")
    @classmethod
    def _grid_values_differ(cls, values: list[str] | None) -> list[str] | None:
        repeated = sorted({v for v in values or [] if (values or []).count(v) > 1})
        if repeated:  # the copies would share a name: said here, at the grid's own line
            raise ValueError(f"{', '.join(repeated)} listed twice: list each data value once")
        return values

    @model_validator(mode="after")
    def _grid_owns_data(self) -> Plan:
        """Under a data_grid a writing workload's data is the grid's: one with its own `data:`
        (left unexpanded) would run once, outside the comparison."""
        own = [w.name for w in self.workloads
               if self.data_grid and "@" not in w.name and w.read < 100]  # fmt: skip
        if own:
            raise ValueError(
                f"data_grid: workload(s) {', '.join(own)} set their own data:; remove it (the "
                "grid gives each copy its data) or remove data_grid"
            )
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> Plan:
        names = [w.name for w in self.workloads]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"workload names must be unique; repeated: {', '.join(duplicates)}")
        return self

    @model_validator(mode="after")
    def _expectations_name_workloads(self) -> Plan:
        names = [w.name for w in self.workloads]
        for e in self.acceptance:
            if not any(fnmatchcase(n, e.workload) for n in names):
                raise ValueError(
                    f"acceptance: workload {e.workload!r} matches no workload of the plan "
                    f"({', '.join(names)})"
                )
        return self

    @model_validator(mode="after")
    def _knee_rates_name_earlier_workloads(self) -> Plan:
        """A rate_of in this run needs a knee measured before it: another workload, listed
        earlier (points run in the plan's order), with a ladder of its own (not rate_of)."""
        earlier: dict[str, bool] = {}  # name -> has a ladder of its own
        first = self.scenarios[0].name if self.scenarios else None
        for i, w in enumerate(self.workloads):
            of = w.rate_of
            if of is not None and of.run is None:
                source = of.workload or w.name
                why = None
                if source == w.name:
                    why = "its own series has this rate: name another workload, or a run"
                elif source not in earlier:
                    why = (
                        f"workload {source!r} is not listed before it (its knee must be "
                        "measured first)"
                    )
                elif not earlier[source]:
                    why = f"workload {source!r} has a rate_of itself: no knee to take"
                elif of.scenario is not None and of.scenario != first:
                    why = (
                        f"scenario {of.scenario!r} is not the plan's first scenario "
                        f"({first or 'none'}): this workload runs before it is measured"
                    )
                if why:
                    raise ValidationError.from_exception_data("Plan", [InitErrorDetails(
                        type=PydanticCustomError("rate_of", "{why}", {"why": why}),
                        loc=("workloads", i, "rate_of"), input=None)])  # fmt: skip
            earlier[w.name] = of is None
        return self

    @model_validator(mode="after")
    def _curve_names_workloads(self) -> Plan:
        """A curve pattern that matches no workload would run no curve and say nothing."""
        names = [w.name for w in self.workloads]
        patterns = self.curve.workloads if self.curve else []
        unmatched = [(i, p) for i, p in enumerate(patterns)
                     if not any(fnmatchcase(n, p) for n in names)]  # fmt: skip
        if unmatched:  # located at the pattern's own line (a plain ValueError names the plan)
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise ValidationError.from_exception_data("Plan", [
                InitErrorDetails(type=PydanticCustomError(
                    "curve_workload", "{pattern} matches no workload of the plan ({names})",
                    {"pattern": repr(p), "names": shown}), loc=("curve", "workloads", i),
                    input=None)
                for i, p in unmatched])  # fmt: skip
        return self

    @model_validator(mode="after")
    def _known_hosts(self) -> Plan:
        names = [h.name for h in self.hosts]
        if len(set(names)) != len(names):
            raise ValueError("host names must be unique")
        bare = [h.name for h in self.hosts if not h.targets]
        if bare and not self.targets and self.hosts:
            raise ValueError(
                f"host(s) {', '.join(bare)} have no targets: give each host `targets:` or list "
                "targets for every host at the top of the plan"
            )
        for hosts in self.host_sets or []:
            unknown = [n for n in hosts if n not in names]
            if unknown or not hosts:
                raise ValueError(
                    f"host_sets: {', '.join(unknown) or 'an empty set'} — list hosts declared "
                    "under hosts"
                )
        return self

    @model_validator(mode="after")
    def _events_name_hosts(self) -> Plan:
        ssh = {h.name: h.ssh is not None for h in self.hosts}
        found = event_host_errors([w.events for w in self.workloads], ssh)
        if found:  # located at the event's host field (a plain ValueError names only the plan)
            raise ValidationError.from_exception_data("Plan", [
                InitErrorDetails(type=PydanticCustomError("event_host", message),
                                 loc=("workloads", *loc), input=None)
                for loc, message in found])  # fmt: skip
        return self

    @model_validator(mode="after")
    def _rounds_name_workloads(self) -> Plan:
        if self.rounds is None:
            return self
        names = [w.name for w in self.workloads]
        repeated = [n for n in names if any(fnmatchcase(n, g) for g in self.rounds.workloads)]
        if self.rounds.track not in repeated:
            raise ValueError(
                f"rounds.track {self.rounds.track!r} must be one of the repeated workloads "
                f"({', '.join(repeated) or 'none matched rounds.workloads'})"
            )
        return self
