"""The live server (live/server.py) and its /metrics (live/metrics.py): the official text
format (promtool), plan strings escaped, GET on fixed paths only, addresses refused as for
fio's servers, a client that never reads or sends slowly holds up nobody."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from arraybench.errors import ArraybenchError
from arraybench.live.metrics import exposition
from arraybench.live.server import CLIENT_TIMEOUT_S, LiveServer, parse_serve
from arraybench.live.state import LiveState, Snapshot, empty_snapshot

HOSTILE = 'we"ird\\name\n</script><b>x</b>'


def _direction(iops: float) -> dict:
    return {"iops": iops, "mbps": iops * 8192 / 1e6, "lat_mean_us": 120.0, "lat_p99_us": 480.0}


def running_snapshot(t: int) -> Snapshot:
    snap = empty_snapshot()
    host = {"t": t, "read": _direction(700.0), "write": _direction(300.0), "errors": 0}
    snap.update({  # type: ignore[typeddict-item]
        "run": "r1", "plan": HOSTILE, "state": "running", "done": 1, "total": 4,
        "point": {"key": f"{HOSTILE}/w1-qd1", "seq": 2, "scenario": HOSTILE,
                  "workload": HOSTILE, "level": "w1-qd1", "expected_s": 10.0, "left_s": 6.0,
                  "unit": "IOPS", "started": t - 5.0},
        "hosts": {"h1": host}, "total_now": host,
        "series": [[t - 1, 990.0, 8.1, {"h1": 990.0}], [t, 1000.0, 8.2, {"h1": 1000.0}]],
        "event_counts": {HOSTILE: {"applied": 1, "reverted": 1}},
    })  # fmt: skip
    return snap


def test_exposition_escapes_and_passes_promtool() -> None:
    now = time.time()
    text = exposition(running_snapshot(int(now)), now)
    assert '\\"ird\\\\name\\n</script>' in text  # quote, backslash, line feed escaped
    line = next(x for x in text.splitlines() if x.startswith("arraybench_iops{") and 'host="h1"'
                in x and 'direction="read"' in x)  # fmt: skip
    assert line.endswith(f" 700.0 {int(now) * 1000}")
    assert 'arraybench_events_total{run="r1",event="we\\"ird' in text
    info = next(x for x in text.splitlines() if x.startswith("arraybench_point_info{"))
    assert info.endswith('source="fio"} 1'), info  # whose seconds: fio's status reports
    kernel = running_snapshot(int(now))
    assert kernel["point"] is not None
    kernel["point"]["source"] = "kernel"  # a many-host point: the hosts' disk counters
    assert 'level="w1-qd1",source="kernel"} 1' in exposition(kernel, now)
    stale = exposition(running_snapshot(int(now) - 60), now)
    assert "arraybench_iops{" not in stale  # a second a minute old is not shown as current
    if shutil.which("promtool") is None:
        pytest.skip("promtool (Debian's prometheus) is not installed")
    checked = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                             capture_output=True, check=False)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    "text", ["0.0.0.0:9000", "[::]:9000", ":9000", "0:9000", "[::ffff:0.0.0.0]:1", "x:99999",
             "127.0.0.1:http", "bad host:1"])  # fmt: skip
def test_refused_addresses(text: str) -> None:
    with pytest.raises(ArraybenchError) as caught:
        parse_serve(text)
    assert caught.value.exit_code == 2 and "--serve" in caught.value.message


def test_loopback_by_default() -> None:
    assert parse_serve("9000").host == "127.0.0.1"
    assert parse_serve("[::1]:0").loopback and not parse_serve("10.1.2.3:80").loopback


def _get(url: str, method: str = "GET") -> tuple[int, str, dict[str, str]]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, answer.read().decode(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, "", {}


@pytest.mark.paced  # judges how soon answers come while two clients are stuck
def test_get_only_fixed_paths_and_stuck_clients() -> None:
    state = LiveState()
    state.data = running_snapshot(int(time.time()))
    server = LiveServer(parse_serve("127.0.0.1:0"), state).start()
    try:
        url = server.url
        code, body, headers = _get(url)
        assert code == 200 and "arraybench live" in body and "http" not in body.split("<body>")[1]
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert _get(url + "metrics")[0] == 200 and _get(url + "live.json")[0] == 200
        charts = _get(url + "charts")[1]
        assert "<svg" in charts and "</script><b>" not in charts  # the plan's names escaped
        assert _get(url + "../etc/passwd")[0] == 404 and _get(url + "metrics/x")[0] == 404
        assert _get(url + "metrics", "POST")[0] == 501
        assert _get(url + "metrics", "PUT")[0] == 501
        host, port = server.server_address[:2]
        # a client that sends half a request and one that asks and never reads
        slow = socket.create_connection((str(host), port))
        slow.sendall(b"GET /metr")
        # an answer of megabytes to a client that never reads: its thread blocks in write
        state.change(lines=["x" * 1000] * 4000)
        mute = socket.create_connection((str(host), port))
        mute.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        mute.sendall(b"GET /live.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        started = time.monotonic()
        for _ in range(5):
            assert _get(url + "metrics")[0] == 200
        state.change(done=2)  # the run's thread is not held either
        # held up by the stuck clients, they would wait for their timeout
        assert time.monotonic() - started < CLIENT_TIMEOUT_S
        slow.close()
        mute.close()
    finally:
        server.stop()
