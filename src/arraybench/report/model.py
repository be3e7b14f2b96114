"""The one view-model every report format renders (text, HTML, later Excel/PDF).

Built from the store by `report.build`; renderers only format what is here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

REMARK_MARK = "†"  # a point kept in the headline figures with a remark (analysis.validity)
# who reads the report: the engineer who ran it (every detail, how to change the plan) or the
# customer it is handed to (no plan keys, docs paths, commands or interactive hints:
# report/audience.py)
AUDIENCES = ("engineer", "customer")
LATENCY_UNITS = ("µs", "ms")
DECADE = 10.0  # values spanning more than this ratio are drawn on a log axis


def spans_decades(values: list[float | None]) -> bool:
    """The positive values span more than a decade (largest > 10 x smallest)."""
    seen = [v for v in values if v is not None and v > 0 and v == v and v != float("inf")]
    return bool(seen) and max(seen) > DECADE * min(seen)


@dataclass(frozen=True)
class Internal:
    """A part of a section's text that is for the engineer who ran the plan only (a plan key,
    a command, a docs path): `pattern` (a regular expression over the text, declared by the
    section that writes it) and what a customer reads in its place ("" drops the part; a
    text left empty leaves the customer's report). report/audience.py applies them."""

    pattern: str
    customer: str = ""


@dataclass(frozen=True)
class CurvePanel:
    """One series (one mix of one workload) across load levels, drawn as one chart panel."""

    mix_label: str  # "Read", "Write", "R/W 70/30"
    x_label: str  # e.g. "workers per host (iodepth 1)"
    x_values: list[float]  # load level per point, ascending
    x_ticks: list[str]  # label per point, e.g. "4" or "4x8"
    throughput_unit: str  # "IOPS" or "MB/s"
    throughput: list[float]
    lat_mean_us: list[float | None]
    lat_p99_us: list[float | None]
    optimal_index: int | None  # index into the lists, or None
    max_index: int | None
    min_latency_index: int | None
    ceiling: float | None = None  # theoretical fabric ceiling in throughput_unit, if declared
    ceiling_label: str = ""  # what the ceiling is of: "fabric 4 x FC 16G"
    # repeated points (repeat: N): each point's 95 % interval (low, high), None when measured
    # once; drawn as a band (throughput) and error bars (mean latency)
    throughput_ci: list[tuple[float, float] | None] = field(default_factory=list)
    lat_mean_ci: list[tuple[float, float] | None] = field(default_factory=list)
    repeats: int = 1  # the most repetitions of a point of this panel
    interval_method: str = ""  # e.g. "Student t, 95 %"
    # per point: its invalidating validity flags' kinds, comma-separated ("" when none): a red
    # cross on the chart, the point left out of the headline figures
    flagged: list[str] = field(default_factory=list)
    # per point: its remarks' kinds (merged/split I/O, ...): kept in, marked with REMARK_MARK
    remarks: list[str] = field(default_factory=list)

    @property
    def log_latency(self) -> bool:
        """The latency axis in decades, in every format, when the mean and p99 lines span more
        than one: on a linear axis a p99 at 3 ms flattens a mean at 120 µs to the floor."""
        return spans_decades([*self.lat_mean_us, *self.lat_p99_us])


@dataclass(frozen=True)
class SummaryCell:
    """One cell of the summary table: `304 kIOPS @ 208 µs` over `328 kIOPS max, 98 µs min`."""

    optimal: str  # "304 kIOPS @ 208 µs"
    extremes: str  # "328 kIOPS max, 98 µs min"
    bounded: str  # "296 kIOPS ≤ 1 ms mean" or "none ≤ 1 ms mean"


@dataclass(frozen=True)
class SummaryRow:
    workload: str  # "Random 8 KiB (backend)"
    cells: dict[str, SummaryCell]  # column label ("Read", "Write", "R/W 70/30") -> cell


@dataclass(frozen=True)
class WorkloadSection:
    title: str  # same as SummaryRow.workload
    panels: list[CurvePanel]  # stacked: Read, Write, Read/Write


@dataclass(frozen=True)
class Timeline:
    """One point's 1-second series: long points, write cliffs, steady-state checks."""

    title: str
    t_s: list[float]  # seconds since the point's first sample
    throughput_unit: str
    throughput: list[float | None]
    lat_mean_us: list[float | None]
    kernel: list[float | None] | None = None  # the kernel's view, same unit, if sampled
    array: list[float | None] | None = None  # the array monitor's view (`arraybench attach`)
    # the array controller's CPU busy % per second (array_monitor's `cpu`): drawn under the
    # time chart on the same time axis (AERODISK's form)
    controller_cpu: list[float | None] | None = None
    events: list[tuple[float, str]] = field(default_factory=list)  # (t_s, label)
    gb_written: list[float | None] | None = None  # cumulative GB: drawn as a second chart if set
    findings: list[str] = field(default_factory=list)  # human lines under the charts
    x_label: str = "time (s)"
    series: str = ""  # set for a load ladder's points drawn one after the other: its series
    # reference lines on the throughput axis, e.g. the SNIA window's average, band and slope
    guides: list[tuple[str, list[float | None]]] = field(default_factory=list)
    # a shaded span (start s, end s, label): a logged warm-up left out of the figures
    shade: tuple[float, float, str] | None = None


@dataclass(frozen=True)
class OverlayLine:
    label: str  # e.g. the block size
    iops: list[float | None]  # per x tick
    mbps: list[float | None]
    lat_mean_us: list[float | None]
    # the throughput's 95 % interval per x tick over the repeats (None: measured once)
    iops_ci: list[tuple[float, float] | None] = field(default_factory=list)
    mbps_ci: list[tuple[float, float] | None] = field(default_factory=list)
    # per x tick whether the point carries validity flags (a red cross on its throughput)
    flagged: list[bool] = field(default_factory=list)
    # per x tick "optimal", "max", both or "" (report/sections/overlays.py `with_marks`)
    marks: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Overlay:
    """Several curves in one chart, one line each (HUS VM: one line per block size)."""

    title: str
    x_label: str
    x_ticks: list[str]
    lines: list[OverlayLine]
    unit: str = "IOPS"  # the throughput drawn on the left axis ("IOPS" or "MB/s")


@dataclass(frozen=True)
class Distribution:
    """Latency percentiles of one series, one line per load level (`lat_mean_us` holds the
    latency at each percentile of `percentiles`), from merged json+ bins."""

    series: str
    percentiles: list[str]  # "50", "99.9", "100" (the maximum)
    lines: list[OverlayLine]
    latency: str = "total latency (fio lat: submission to completion)"  # what the bins measure


@dataclass(frozen=True)
class FigureSeries:
    """One line, one set of bars or one heat-map row of a `Figure`."""

    label: str
    values: list[float | None]  # per x tick (per point of `x` for an "xy" figure)
    flagged: list[bool] = field(default_factory=list)  # drawn as a red cross
    x: list[float] | None = None  # "xy": the numeric x of each value (achieved IOPS)
    # "bars": series sharing a hue are one set-up (compare: its optimal point and maximum),
    # drawn in that set-up's colour; `light` is its lighter bar. None: a colour per series
    hue: int | None = None
    light: bool = False


@dataclass(frozen=True)
class Figure:
    """A seed report's own figure form (report/sections/seedfigures.py): "bars" (one bar per series
    at each x tick: CSCS's set-ups), "lines" (one line per series against the x ticks: HUS
    VM's block sizes against numjobs), "xy" (values against a numeric x: a response-time
    curve), "time" (the same against seconds) or "heatmap" (rows = series, columns = x ticks:
    a 2-D sweep)."""

    form: str
    title: str
    x_label: str
    unit: str  # of the values: "IOPS", "MB/s", "µs", "ops/s"
    x_ticks: list[str]
    series: list[FigureSeries]
    log_x: bool = False  # the x ticks are powers of 2, drawn evenly (a log2 axis)
    caption: str = ""
    group: str = ""  # the heading it is drawn under
    y_label: str = ""  # the heat map's row dimension
    marks: list[tuple[float, str]] = field(default_factory=list)  # "time": (x, label) lines
    # "lines": the fabric's payload ceiling (value in `unit`, label naming the fabric), drawn
    # as a dashed horizontal line
    ceiling: tuple[float, str] | None = None

    @property
    def log_y(self) -> bool:
        """A latency figure whose lines span more than a decade is drawn on a log axis, in
        every format: on a linear one the slowest line (HUS VM's 1 MiB at 347 ms) flattens
        the others to the floor."""
        if self.form != "lines" or self.unit not in LATENCY_UNITS:
            return False
        return spans_decades([v for s in self.series for v in s.values])


@dataclass(frozen=True)
class ReportTable:
    """A plain table (SNIA matrix, interference steps, metadata ops/s)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""
    key_columns: int = 1  # the columns that name a row, repeated when the table is split
    # "screen": the HTML page only (a long look-up a printout gives in short); "print": its
    # short form, on paper only (not in Markdown or Excel either); "": everywhere
    medium: str = ""


@dataclass(frozen=True)
class PointRow:
    """One measured point, flattened for the points table."""

    series: str
    level: str
    workers: int
    iodepth: int
    targets: str
    values: dict[str, float | None]  # column name -> value, e.g. "read_iops", "total_lat_p99_us"
    block_size: str = ""  # "8 KiB"
    engine: str = ""  # fio's ioengine
    # every stored field under its raw name (key, seq, bs, pattern, ... and the metrics): what
    # CSV and JSON carry, so `show --format csv` and `report -o x.csv` are one table
    record: dict[str, str | int | float | None] = field(default_factory=dict)


@dataclass
class ReportModel:
    title: str
    run_id: str
    scenario: str
    labels: dict[str, str]
    started: str  # ISO 8601
    finished: str | None
    status: str  # "complete", "interrupted", "running"
    arraybench_version: str
    engine_version: str
    host: str
    kernel: str
    targets: list[str]
    latency_bound: str  # "1 ms mean"
    summary_columns: list[str]  # ordered column labels of the summary table
    summary: list[SummaryRow]
    sections: list[WorkloadSection]
    points: list[PointRow]
    point_columns: list[str]  # ordered keys of PointRow.values
    plan_yaml: str
    job_files: dict[str, str] = field(default_factory=dict)  # point key -> fio job text
    job_series: dict[str, str] = field(default_factory=dict)  # job_files' key -> its series
    notes: list[str] = field(default_factory=list)  # warnings worth a reader's eye
    timelines: list[Timeline] = field(default_factory=list)
    tables: list[ReportTable] = field(default_factory=list)
    overlays: list[Overlay] = field(default_factory=list)
    # where the numbers came from: ("fio version", "3.33"), ("target /dev/sdb", "model, size")
    provenance: list[tuple[str, str]] = field(default_factory=list)
    verdicts: list[ReportTable] = field(default_factory=list)  # acceptance criteria PASS/FAIL
    distributions: list[Distribution] = field(default_factory=list)  # latency percentiles
    # the notes box's few lines (counts and links) when the full `notes` go to the appendix;
    # empty: the box shows `notes` themselves
    notes_box: list[str] = field(default_factory=list)
    # tables a reader looks up rather than reads (every validity flag, per-point spreads):
    # after the points, before the plan and the job files
    appendix: list[ReportTable] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)  # the seed reports' own figure forms
    # where `--charts DIR` writes every chart (absolute): the Markdown report links to them
    chart_dir: str | None = None
    audience: str = "engineer"  # one of AUDIENCES
    # the set-up block's rows from the plan (customer, system under test, fabric), each
    # (label, value): drawn first in the set-up of every format
    setup: list[tuple[str, str]] = field(default_factory=list)
