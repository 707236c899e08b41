"""Benchmark: what MCP servers cost a run before its first request, per server and in parallel.

Times :meth:`fsm.mcp.client.Connections.connect` (the step a run takes before its first model call) on the test
server ``tests/mcp/server.py`` (the ``mcp`` package's ``MCPServer``): one stdio server, one streamable-HTTP server
already listening on 127.0.0.1, and four stdio servers at once; beside it, the floor: the same Python starting,
importing the ``mcp`` package and exiting (``python -c "import mcp.server.mcpserver"``), which a stdio server of
this kind pays whoever its client is. Each round runs every contender once in a shuffled order, so the load of a
shared machine falls on all alike; medians (and the best) in ms and the load average are printed.

Run: python tests/perf/bench_mcp_start.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SERVER = str(ROOT / "tests" / "mcp" / "server.py")


def _connect(servers: dict[str, dict[str, object]]) -> float:
    from fsm.mcp.client import Connections
    from fsm.mcp.config import parse_servers

    connections = Connections(cwd=str(ROOT))
    began = time.perf_counter()
    statuses = connections.connect(parse_servers({"mcpServers": servers}, "bench"), timeout=60)
    took = time.perf_counter() - began
    connections.close()
    assert all(s.status == "connected" for s in statuses), statuses
    return took


def _http_server() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(600):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}/mcp"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    stdio = {"command": sys.executable, "args": [SERVER, "stdio"]}
    http, url = _http_server()
    try:
        contenders: dict[str, Callable[[], float]] = {
            "python + import mcp (floor)": lambda: _timed(
                lambda: subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
            ),
            "1 stdio server": lambda: _connect({"a": stdio}),
            "1 HTTP server (listening)": lambda: _connect({"web": {"type": "http", "url": url}}),
            "4 stdio servers at once": lambda: _connect({n: stdio for n in "abcd"}),
        }
        _connect({"warm": stdio})
        times: dict[str, list[float]] = {name: [] for name in contenders}
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            order = list(contenders)
            random.shuffle(order)
            for name in order:
                times[name].append(contenders[name]() * 1000)
        print(f"{args.rounds} rounds, load {load:.2f} -> {os.getloadavg()[0]:.2f}")
        for name, values in times.items():
            print(f"{name:30} median {statistics.median(values):7.0f} ms   best {min(values):7.0f} ms")
    finally:
        http.terminate()
        http.wait(timeout=10)


def _timed(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


if __name__ == "__main__":
    main()
