"""Nothing waits unbounded on a Dask scheduler: addresses are checked before connecting, a
refused port is told at once, every other wait is bounded by ``DASK_CONNECT_TIMEOUT_S``, and
each failure is one line with exit code 2 and no traceback when the interpreter exits."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from sweep_stubs import TINY_WORKLOAD

from accelsim.errors import AccelsimError, ConfigError
from accelsim.limits import DASK_CONNECT_TIMEOUT_S
from accelsim.sweep.dask import check_address

ROOT = Path(__file__).resolve().parents[2]

GOOD = {
    "tcp://127.0.0.1:8786": ("tcp", "127.0.0.1", 8786),
    "127.0.0.1:8786": ("tcp", "127.0.0.1", 8786),  # Dask's default scheme
    "tls://scheduler.example.org:443": ("tls", "scheduler.example.org", 443),
    "TCP://node-7:1": ("tcp", "node-7", 1),
    "tcp://[::1]:65535": ("tcp", "::1", 65535),
    "ws://host_1.local.:8786": ("ws", "host_1.local.", 8786),
    "ucx://10.0.0.2:13337": ("ucx", "10.0.0.2", 13337),
    f"inproc://10.0.0.2/{os.getpid()}/3": ("inproc", "10.0.0.2", None),
}

BAD = {
    "foo://host:1": "unknown scheme",
    "http://host:8786": "unknown scheme",
    "tcp://127.0.0.1:0": "within 1..65535",
    "tcp://127.0.0.1:65536": "within 1..65535",
    "tcp://127.0.0.1:99999999999999999999": "within 1..65535",
    "tcp://127.0.0.1:-1": "within 1..65535",
    "tcp://127.0.0.1:http": "within 1..65535",
    "tcp://127.0.0.1": "missing :PORT",
    "tcp://:8786": "not a host name",
    "tcp://-bad-.org:1": "not a host name",
    "tcp://a..b:1": "not a host name",
    "tcp://::1:8786": "in brackets",
    "tcp://[::1:8786": "unclosed",
    "tcp://[nope]:1": "not an IPv6 address",
    "tcp://[::1]": "missing :PORT",
    "tcp://host:1/path": "no path",
    "tcp://user@host:1": "no path, query or user",
    "tcp://a b:1": "spaces",
    "tcp://host:1\n": "spaces",
    "tcp://hôst:1": "non-ASCII",
    "tcp://" + "a" * 300 + ":1": "longer than",
    "": "expected an address",
    "inproc://": "inproc://HOST/PID/N",
    "inproc://10.0.0.2/1/1": "not this one",
}


# ids without this process's PID: pytest-xdist's workers collect alike
# The scheduler's HTTP server (dashboard off) on a free port: two xdist workers both
# binding 8787 make one warn, an error in this suite.
FREE_HTTP_PORT = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


@pytest.mark.parametrize("address", GOOD,
                         ids=[a.replace(f"/{os.getpid()}/", "/PID/") for a in GOOD])
def test_well_formed_addresses_pass(address):
    assert check_address(address) == GOOD[address]


@pytest.mark.parametrize("address", BAD, ids=[repr(a)[:40] for a in BAD])
def test_malformed_addresses_are_one_line_errors_before_any_connection(address):
    with pytest.raises(ConfigError, match="--scheduler") as err:
        check_address(address)
    assert BAD[address] in str(err.value)
    assert "\n" not in str(err.value)


def test_the_connect_timeout_is_short():
    assert 1 <= DASK_CONNECT_TIMEOUT_S <= 15


@pytest.fixture
def spec_file(tmp_path) -> Path:
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(TINY_WORKLOAD))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({
        "hardware": "scalesim_default", "workload": str(tmp_path / "w.yaml"),
        "parameters": {"compute.array.rows": [8, 16]}}))
    return tmp_path / "s.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_address_is_one_line_exit_2_at_once(spec_file, tmp_path):
    """``tcp://127.0.0.1:1``: nothing listens; no 30 s wait, no traceback at exit."""
    for address in ("tcp://127.0.0.1:1",):
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "accelsim", "sweep", str(spec_file),
                               "--out", str(tmp_path / "r.csv"), "--quiet", "--scheduler", address],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        wall = time.monotonic() - t0
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert proc.returncode == 2, proc.stderr
        assert len(lines) == 1, proc.stderr
        assert "connection refused" in lines[0] and address in lines[0]
        assert wall < DASK_CONNECT_TIMEOUT_S
        assert not (tmp_path / "r.csv").exists()  # nothing written


SILENT = """
import socket, sys
import accelsim.sweep.dask as dask_mod
dask_mod.DASK_CONNECT_TIMEOUT_S = 1.0
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
from accelsim.cli import main
rc = main(["sweep", sys.argv[1], "--out", sys.argv[2], "--quiet",
           "--scheduler", "tcp://127.0.0.1:%d" % srv.getsockname()[1]])
sys.exit(rc)
"""


def test_refused_and_silent_ports_fail_within_the_bound(monkeypatch):
    """In this process: a free port is refused at once; a port that accepts but never speaks
    (Dask itself would wait for ever on its handshake) is given up at the bound."""
    pytest.importorskip("distributed")
    import accelsim.sweep.dask as dask_mod

    address = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.monotonic()
    with pytest.raises(AccelsimError, match="connection refused"):
        dask_mod.connect(address)
    assert time.monotonic() - t0 < 1
    monkeypatch.setattr(dask_mod, "DASK_CONNECT_TIMEOUT_S", 0.5)
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        t0 = time.monotonic()
        with pytest.raises(AccelsimError, match="no Dask handshake within 0.5 s"):
            dask_mod.connect(f"tcp://127.0.0.1:{srv.getsockname()[1]}")
        assert time.monotonic() - t0 < 2


@pytest.mark.slow
def test_a_port_that_accepts_but_never_answers_is_bounded_and_exits_cleanly(spec_file, tmp_path):
    """A listening socket that is no Dask scheduler: the handshake waits out the (here 1 s)
    bound, then one line, exit 2, and nothing printed when the interpreter exits."""
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", SILENT, str(spec_file), str(tmp_path / "r.csv")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - t0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "cannot reach the Dask scheduler" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert wall < 15


def test_a_scheduler_without_workers_is_refused_within_the_bound(monkeypatch):
    distributed = pytest.importorskip("distributed")
    import accelsim.sweep.dask as dask_mod

    monkeypatch.setattr(dask_mod, "DASK_CONNECT_TIMEOUT_S", 0.5)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                                  scheduler_kwargs=FREE_HTTP_PORT,
                                  silence_logs=50) as lc:
        t0 = time.monotonic()
        with pytest.raises(AccelsimError, match="has no workers"):
            dask_mod.connect(lc.scheduler_address)
        assert time.monotonic() - t0 < 5
