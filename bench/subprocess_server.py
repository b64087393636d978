"""The peer of bench/serve.py: SandboxFusion's way of running a program with its isolation
`none`, in one asyncio process. Each `POST /run_code` writes the program into a fresh
folder and runs the interpreter on it in a subprocess, at most WORKERS at a time, killed
at its run_timeout; the answer is in SandboxFusion's schema. No sandbox, no limits
beyond the time: what passk's sandbox costs is measured against this.

    python3 bench/subprocess_server.py --listen 127.0.0.1:0 [--workers 2] [--python python3]

It says `listening on http://HOST:PORT` and then `ready` on standard error.
"""

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time


async def run_program(args, limit, request):
    async with limit:
        folder = tempfile.mkdtemp(prefix="run-code-")
        try:
            with open(os.path.join(folder, "main.py"), "w") as f:
                f.write(request["code"])
            started = time.monotonic()
            process = await asyncio.create_subprocess_exec(
                args.python, "main.py", cwd=folder, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            status = "Finished"
            try:
                stdout, stderr = await asyncio.wait_for(
                    process.communicate((request.get("stdin") or "").encode()),
                    timeout=float(request.get("run_timeout") or 10))
            except asyncio.TimeoutError:
                process.kill()
                stdout, stderr = await process.communicate()
                status = "TimeLimitExceeded"
            run = {"status": status, "execution_time": time.monotonic() - started,
                   "return_code": process.returncode, "stdout": stdout.decode(errors="replace"),
                   "stderr": stderr.decode(errors="replace")}
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    passed = status == "Finished" and run["return_code"] == 0
    return {"status": "Success" if passed else "Failed", "message": "", "compile_result": None, "run_result": run,
            "executor_pod_name": None, "files": {}}


async def serve_connection(args, limit, reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length)
            if lines[0].startswith("POST /run_code "):
                answer, code = await run_program(args, limit, json.loads(body)), "200 OK"
            else:
                answer, code = {"detail": "Not Found"}, "404 Not Found"
            payload = json.dumps(answer, separators=(",", ":")).encode()
            writer.write(f"HTTP/1.1 {code}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
                         .encode() + payload)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    host, _, port = args.listen.rpartition(":")
    limit = asyncio.Semaphore(args.workers)
    server = await asyncio.start_server(lambda r, w: serve_connection(args, limit, r, w), host, int(port),
                                        backlog=1024)
    address = server.sockets[0].getsockname()
    print(f"listening on http://{address[0]}:{address[1]}", file=sys.stderr, flush=True)
    print("ready", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
