"""Many hosts: fio servers, their checks, and one point run on several hosts at once.

arraybench drives several hosts with fio's own client/server mode: ``fio --server`` runs on
each host and one ``fio --client=h1 job --client=h2 job ...`` per point sends the job to all of
them (fio's synchronised start). See ``server`` (host specs, checks, SSH lifecycle, the
security note), ``clock`` (clock offset through fio), ``client`` (one point on many hosts,
totals and wall-clock alignment). The throw-away test hosts in network namespaces are
test code: ``tests/netns.py``.

fio's server protocol has NO authentication: anyone who can reach a server's port can run any
job, including ``exec_prerun`` shell commands, as the server's user. Servers are always bound
to one given address, never to all interfaces by default (``server.NO_AUTH_WARNING``).
"""

from __future__ import annotations

from arraybench.hosts.client import (
    AlignedSeries,
    MultiHostOutcome,
    aligned_per_second,
    run_on_hosts,
)
from arraybench.hosts.server import (
    NO_AUTH_WARNING,
    HostCheck,
    HostError,
    HostSpec,
    SshSpec,
    TargetSafety,
    check_host,
    check_hosts,
    start_server_over_ssh,
    stop_server_over_ssh,
)

__all__ = [
    "NO_AUTH_WARNING",
    "AlignedSeries",
    "HostCheck",
    "HostError",
    "HostSpec",
    "MultiHostOutcome",
    "SshSpec",
    "TargetSafety",
    "aligned_per_second",
    "check_host",
    "check_hosts",
    "run_on_hosts",
    "start_server_over_ssh",
    "stop_server_over_ssh",
]
