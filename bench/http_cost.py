"""CPU of the HTTP transport alone, per OTLP request: uvicorn + Starlette + ``read_body`` + the thread hop.

A server process runs only that path (no decode, no writer) with each HTTP parser and event loop uvicorn
offers; four client threads post the benchmark's 512-span request; the server's CPU time per request is what
an HTTP request costs the receiver beyond what a gRPC one does (``bench/ingest.py`` has the full receiver).

    python bench/http_cost.py                 # 400 requests per variant, each variant twice
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

VARIANTS = [("h11", "asyncio"), ("httptools", "asyncio"), ("h11", "uvloop"), ("httptools", "uvloop")]


def serve(http: str, loop: str, port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from otel_agent.server.http_body import read_body

    async def endpoint(request: Request) -> Response:
        payload = await read_body(request, 64 << 20)
        await run_in_threadpool(len, payload)  # where the receiver hands the body to its pipeline
        return Response(b"", media_type="application/x-protobuf")

    app = Starlette(routes=[Route("/v1/traces", endpoint, methods=["POST"])])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, http=http, loop=loop, log_level="warning",
                            lifespan="off", access_log=False)  # fmt: skip
    uvicorn.Server(config).run()


def post(url: str, body: bytes, count: int) -> None:
    import requests

    session = requests.Session()
    for _ in range(count):
        session.post(url, data=body, headers={"Content-Type": "application/x-protobuf"}).raise_for_status()


def main() -> None:
    import psutil
    import requests
    from agent_spans import make_request

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    body = make_request(512, time.time_ns(), 1)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, request of {len(body):,} bytes, {n} per variant")
    for http, loop in VARIANTS * 2:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([sys.executable, __file__, "serve", http, loop, str(port)])
        url = f"http://127.0.0.1:{port}/v1/traces"
        headers = {"Content-Type": "application/x-protobuf"}
        session = requests.Session()
        for _ in range(200):
            try:
                session.post(url, data=body, headers=headers)
                break
            except requests.ConnectionError:
                time.sleep(0.05)
        for _ in range(20):
            session.post(url, data=body, headers=headers)
        proc = psutil.Process(server.pid)
        cpu0, mine0, t0 = sum(proc.cpu_times()[:2]), time.process_time(), time.perf_counter()

        threads = [threading.Thread(target=post, args=(url, body, n // 4)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cpu1, mine1, t1 = sum(proc.cpu_times()[:2]), time.process_time(), time.perf_counter()
        print(
            f"  {http:>9} + {loop:<7}  server {1000 * (cpu1 - cpu0) / n:.2f} CPU ms per request, "
            f"client {1000 * (mine1 - mine0) / n:.2f}, wall {1000 * (t1 - t0) / n:.2f} ms per request",
            flush=True,
        )
        server.terminate()
        server.wait()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
