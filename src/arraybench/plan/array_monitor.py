"""The plan's `array_monitor:`: where the array's own counters are pulled from during a run.

```yaml
array_monitor:
  prometheus:
    url: http://prometheus.lab:9090
    queries:
      iops: sum(rate(node_disk_reads_completed_total{device="sdb"}[5s]))
      latency_us: ...
    step: 1s            # query_range's resolution
    lag: 5s             # asked this long after a point, once its last scrape is in
  command: [/usr/local/bin/array-stats, --every, 1]   # one CSV or JSON line per sample
```

Both are read beside the run, never in its way (`run/array_pull.py`).
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, field_validator, model_validator

from arraybench.plan.event_kinds.base import Argv
from arraybench.plan.types import Seconds, Strict, Wait

# the user:password@ of an http(s) URL: everything of its authority up to the last '@'
_USERINFO = re.compile(r"(?i)\b(https?://)[^\s/?#]*@")


def without_credentials(text: str) -> str:
    """`text` (a plan's YAML) with every http(s) URL's `user:password@` left out: what a
    report shows of a plan whose array_monitor URL holds a password."""
    return _USERINFO.sub(r"\1", text)


Query = Annotated[str, StringConstraints(min_length=1, max_length=4000)]
HttpUrl = Annotated[str, StringConstraints(pattern=r"^https?://[^\s/?#]+[^\s]*$", max_length=2000)]


class PrometheusQueries(Strict):
    iops: Query | None = Field(None, description="PromQL giving the array's IOPS.")
    mbps: Query | None = Field(None, description="PromQL giving the array's MB/s (10^6 B/s).")
    latency_us: Query | None = Field(
        None, description="PromQL giving the array's mean latency in microseconds."
    )
    cpu: Query | None = Field(None, description="PromQL giving the array's CPU busy in %.")
    reduction: Query | None = Field(
        None,
        description=(
            "PromQL giving the array's data-reduction ratio, x:1 (logical / physical bytes), "
            "shown beside the ratio arraybench measured (docs/data.md)."
        ),
    )

    @model_validator(mode="after")
    def _some(self) -> PrometheusQueries:
        if not any((self.iops, self.mbps, self.latency_us, self.cpu, self.reduction)):
            raise ValueError("name at least one query: iops, mbps, latency_us, cpu or reduction")
        return self


class PrometheusSource(Strict):
    url: HttpUrl = Field(
        description="The Prometheus server's base URL (http or https); a `user:password@` in "
        "it is sent as HTTP basic authentication (percent-encode `@ / ? # :` in them) and "
        "never printed."
    )
    queries: PrometheusQueries = Field(description="One PromQL expression per value.")
    step: Seconds = Field(1.0, description="query_range's step (resolution).")
    lag: Wait = Field(
        5.0, description="How long after a point its window is asked (its last scrapes in)."
    )
    timeout: Seconds = Field(
        5.0, description="Longest time for a point's answers, all queries and bytes; then skipped."
    )

    @field_validator("url")
    @classmethod
    def _readable(cls, url: str) -> str:
        # the error never quotes the URL: it may hold a password
        parts = urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if port == -1 or not parts.hostname:
            raise ValueError(
                "its host or port cannot be read (a port is 0 to 65535; a password with "
                "@ / ? # : in it must be percent-encoded)"
            )
        return url


class ArrayMonitor(Strict):
    """The array's own counters, pulled during the run and stored as its array-side series
    (what `arraybench attach` stores from a CSV), per point beside fio's figures."""

    prometheus: PrometheusSource | None = Field(
        None, description="A Prometheus server holding the array's (or its hosts') metrics."
    )
    command: Argv | None = Field(
        None,
        description="A command run for the whole run that prints one line per sample: JSON "
        '({"time": ..., "iops": ...}) or CSV with a header line (time,iops,mbps,latency_us,'
        "cpu,reduction); a line without a time is stamped when it is read.",
    )

    @model_validator(mode="after")
    def _one(self) -> ArrayMonitor:
        if self.prometheus is None and self.command is None:
            raise ValueError("name a source: prometheus or command")
        return self
