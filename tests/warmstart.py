"""``python -m pytest …`` and ``python -m pytest_boundedreview …`` started warm.

The suite starts thousands of these processes; each spent about a quarter of a second starting
Python and importing pytest before doing anything a test looks at. Here a server per test worker
imports those once, then forks one child per run. The child is a process of its own, as a
user's would be: its own environment, working folder, standard streams, exit status, signals and
interpreter state afterwards. It runs the module as ``python -m`` does (``__main__``, the
working folder first on ``sys.path``, then ``PYTHONPATH``) and ends as the interpreter does
(non-daemon threads joined, ``atexit`` run, streams flushed).

What the interpreter reads once at start-up, a server is started with: a run with other
``PYTHON*``, locale or ``TZ`` variables is served by a server started with them (a few per
module, then cold starts), and a run with interpreter options, another interpreter or another
module starts cold. Children of one server share its hash seed, where cold starts each draw
their own, unless ``PYTHONHASHSEED`` sets it. Modules already imported are pytest's and this
package's (no other pytest plugin: pytest would warn it cannot rewrite its asserts) or the
console command's, whose server never imports pytest. A test about what a process imports or
how it starts runs its own interpreter; ``BOUNDED_REVIEW_TESTS_COLD=1`` starts every run cold."""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

# What each server imports before it forks. For a pytest session: pytest, and the modules of
# this package a review session imports (never pydantic's) when it is installed from its folder
# (``_editable``), where pytest does not mark it for rewriting; no other plugin, which pytest
# would warn it cannot rewrite (test_warmstart.py checks no warning comes). For
# ``bounded-review``: every module of these packages but the MCP server's, and never pytest.
PRELOAD = {
    "pytest": ["pytest", "pytest_boundedreview.plugin", "pytest_boundedreview.session"],
    "pytest_boundedreview": ["cli", "agentgate", "models", "report"],
}
# Set per child: the folders ``sys.path`` gets after the working folder, and whether Python
# writes bytecode. Any other ``PYTHON*`` variable, the locale's, ``TZ``, coverage's and the
# temporary folder's are read once at start-up (or at import, as a module's constant): a child
# given other values than its server's gets a server started with them.
_PER_CHILD = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
# Modules Python runs at start-up from a folder on ``sys.path``.
_AT_START_UP = {"sitecustomize", "usercustomize"}


def _startup(env: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in env.items()
        if (k.startswith(("PYTHON", "LC_", "COVERAGE_")) and k not in _PER_CHILD)
        or k in ("LANG", "TZ", "TMPDIR", "TEMP", "TMP")
    }


def _inherited() -> tuple[object, ...]:
    """What a process started now would inherit from this one beside its environment: the
    umask, resource limits, and ignored and blocked signals."""
    umask = _umask()
    names = sorted(n for n in dir(resource) if n.startswith("RLIMIT_"))
    limits = tuple(resource.getrlimit(getattr(resource, n)) for n in names)
    ignored = tuple(s for s in sorted(signal.valid_signals()) if _handler(s) is signal.SIG_IGN)
    blocked = tuple(sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
    return umask, limits, ignored, blocked


def _umask() -> int:
    """This process's umask, read without setting it (which would race with other threads)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    raise RuntimeError("no Umask in /proc/self/status")


def _handler(signum: int) -> object:
    try:
        return signal.getsignal(signum)
    except (OSError, ValueError):
        return None


def module_of(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """``(module, arguments)`` of ``python -m module arguments…`` with this interpreter and no
    interpreter option, for a module a server is kept for; else None."""
    if len(argv) < 2 or argv[0] != sys.executable:
        return None
    if argv[1] == "-m" and len(argv) >= 3:
        module, rest = argv[2], list(argv[3:])
    elif argv[1].startswith("-m") and len(argv[1]) > 2:
        module, rest = argv[1][2:], list(argv[2:])
    else:
        return None
    return (module, rest) if module in PRELOAD else None


class _Server:
    """One warm server: a child process holding one end of a socket pair, started with the
    given environment. It serves one run at a time."""

    def __init__(self, module: str, env: Mapping[str, str]) -> None:
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno()), module],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,  # and never a terminal: a child's streams are as a cold one's
            stdout=subprocess.DEVNULL,
            env={k: v for k, v in env.items() if k != "PYTHONPATH"},
            cwd="/",
        )
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.busy = False
        self._buffer = b""
        try:  # the top-level names it imported, once it has; those pytest would not have yet
            ready = self.answer(timeout=120)
            self.preloaded, self.late = set(ready["preloaded"]), set(ready["late"])
            self.ok = True
        except (RuntimeError, subprocess.TimeoutExpired):  # its imports failed: runs go cold
            self.preloaded, self.late, self.ok = set(), set(), False
            self.proc.kill()
            self.proc.wait()
            self.sock.close()

    def close(self) -> None:
        """End the server: it ends when its socket does."""
        self.sock.close()
        self.proc.wait(timeout=30)

    def answer(self, timeout: float | None = None) -> dict[str, Any]:
        """The server's next line, waiting at most ``timeout`` seconds for it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            self.sock.settimeout(left)
            try:
                more = self.sock.recv(4096)
            except TimeoutError:
                raise subprocess.TimeoutExpired("warm child", timeout or 0) from None
            except ConnectionResetError:
                more = b""
            finally:
                self.sock.settimeout(None)
            if not more:
                raise RuntimeError("the warm-start server ended")
            self._buffer += more
        line, _, self._buffer = self._buffer.partition(b"\n")
        return dict(json.loads(line))

    def shadowed(self, folder: str, path: Sequence[str]) -> bool:
        """Whether a module the child could import would be another than the one the server
        imported, or run at start-up: in its working folder or on its ``PYTHONPATH`` (first on
        its ``sys.path``, a file there such as a zip archive counting as one), or, for a module
        pytest itself would not have imported yet (this package's), anywhere in the folder a
        project's configuration can add to ``sys.path`` (its ``pythonpath``, a ``conftest.py``'s
        folder)."""
        names = self.preloaded | _AT_START_UP
        for each in path:
            if os.path.exists(each) and not os.path.isdir(each):
                return True
            if names & _modules_in(each):
                return True
        for top, dirs, _ in os.walk(folder):  # the folder itself first, for every name
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
            if top.count(os.sep) - folder.count(os.sep) >= 4:
                dirs[:] = []
            if (names if top == folder else self.late) & _modules_in(top):
                return True
        return False


_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


def _modules_in(folder: str) -> set[str]:
    """The top-level names a folder on ``sys.path`` offers: its folders (packages, namespace
    portions) and its modules (``name.py``, ``name.cpython-311-x86_64-linux-gnu.so``)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return set()
    return {e.name.partition(".")[0] for e in entries if e.is_dir() or e.name.endswith(_SUFFIXES)}


# The servers of this process, by module, start-up variables and inherited state; a few per
# module, since a test that sets one of them for a run usually sets it for that run alone.
_servers: dict[tuple[object, ...], _Server] = {}
_servers_lock = threading.Lock()
_PER_MODULE = 3


def _server(module: str, env: Mapping[str, str]) -> _Server | None:
    key = (module, frozenset(_startup(env).items()), _inherited())
    with _servers_lock:
        server = _servers.get(key)
        if server is not None and (not server.ok or server.proc.poll() is None):
            return server if server.ok else None
        if server is None and sum(k[0] == module for k in _servers) >= _PER_MODULE:
            return None
        server = _servers[key] = _Server(module, env)  # the first, or one that ended
        return server if server.ok else None


class WarmProcess:
    """The :class:`subprocess.Popen` methods pytester and :func:`run` use, for a forked child."""

    stdin = None

    def __init__(self, server: _Server, pid: int) -> None:
        self._server = server
        self.pid = pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = int(self._server.answer(timeout)["status"])
            self._server.busy = False
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # ended, and reaped by its server
                os.kill(self.pid, signal.SIGKILL)


def start(
    argv: Sequence[str], cwd: str | os.PathLike[str], env: Mapping[str, str], stdio: Sequence[int]
) -> WarmProcess | None:
    """``argv`` forked from a warm server, its standard streams the file descriptors ``stdio``
    (in, out, err); None when it must start cold: another command, the variable
    ``BOUNDED_REVIEW_TESTS_COLD`` set, no server for it, its server busy, or a module in its
    working folder or on its ``PYTHONPATH`` that would shadow one the server imported."""
    found = module_of(argv)
    if found is None or os.environ.get("BOUNDED_REVIEW_TESTS_COLD") or not os.path.isdir(cwd):
        return None
    module, args = found
    server = _server(module, env)
    if server is None:
        return None
    folder = os.path.abspath(cwd)
    path = [os.path.join(folder, p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if server.shadowed(folder, path):
        return None
    request = {"argv": list(argv), "module": module, "args": args, "cwd": folder, "env": dict(env)}
    line = json.dumps(request).encode() + b"\n"  # before the server is taken: this may raise
    with server.lock:
        if server.busy:
            return None
        server.busy = True
    socket.send_fds(server.sock, [line], list(stdio))
    return WarmProcess(server, int(server.answer(timeout=60)["pid"]))


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    timeout: float | None = None,
    text: bool = False,
    capture_output: bool = False,
    check: bool = False,
) -> subprocess.CompletedProcess[Any]:
    """:func:`subprocess.run` with these arguments, warm when :func:`start` can (output
    captured, not checked). As there, the output is read until every process holding the
    pipes has closed them, not only until the child ends."""
    env = dict(os.environ if env is None else env)
    cold = {"cwd": cwd, "env": env, "input": input, "timeout": timeout, "text": text}
    if not capture_output or check:
        return subprocess.run(argv, capture_output=capture_output, check=check, **cold)
    # without input, the child reads this process's standard input, as with subprocess.run
    given, into = os.pipe() if input is not None else (os.dup(0), os.open(os.devnull, os.O_WRONLY))
    out, out_end = os.pipe()
    err, err_end = os.pipe()
    try:
        proc = start(
            [os.fsdecode(a) for a in argv], cwd or os.getcwd(), env, [given, out_end, err_end]
        )
    finally:
        for fd in (given, out_end, err_end):
            os.close(fd)
    if proc is None:
        for fd in (into, out, err):
            os.close(fd)
        return subprocess.run(argv, capture_output=True, check=False, **cold)
    data = input.encode() if isinstance(input, str) else input or b""
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        stdout, stderr = _communicate(into, out, err, data, deadline)
        code = proc.wait(None if deadline is None else max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise subprocess.TimeoutExpired(list(argv), timeout or 0) from None
    if text:
        return subprocess.CompletedProcess(list(argv), code, _text(stdout), _text(stderr))
    return subprocess.CompletedProcess(list(argv), code, stdout, stderr)


def _communicate(
    into: int, out: int, err: int, data: bytes, deadline: float | None
) -> tuple[bytes, bytes]:
    """Write ``data`` to ``into`` and read ``out`` and ``err`` to their ends; every descriptor
    closed on return."""
    read: dict[int, list[bytes]] = {out: [], err: []}
    with selectors.DefaultSelector() as selector:
        selector.register(out, selectors.EVENT_READ)
        selector.register(err, selectors.EVENT_READ)
        if data:
            os.set_blocking(into, False)
            selector.register(into, selectors.EVENT_WRITE)
        else:
            os.close(into)
        try:
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired("warm child", 0)
                for key, _ in selector.select(left):
                    fd = int(key.fd)
                    if fd == into:
                        try:
                            data = data[os.write(into, data[:65536]) :]
                        except BrokenPipeError:
                            data = b""
                        if not data:
                            selector.unregister(into)
                            os.close(into)
                        continue
                    chunk = os.read(fd, 65536)
                    if chunk:
                        read[fd].append(chunk)
                    else:
                        selector.unregister(fd)
                        os.close(fd)
        finally:
            for key in list(selector.get_map().values()):
                os.close(int(key.fd))
    return b"".join(read[out]), b"".join(read[err])


def _text(data: bytes) -> str:
    """As :func:`subprocess.run` decodes with ``text=True``."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=None, newline=None).read()


# --- the server ---------------------------------------------------------------------------


def _serve(fd: int, module: str) -> None:
    import importlib
    import pkgutil

    sys.modules["warmstart_server"] = sys.modules[__name__]  # a child can tell it was forked
    early: set[str] = set()
    if module == "pytest":
        pytest_itself, *ours = PRELOAD[module]
        importlib.import_module(pytest_itself)
        early = {n.partition(".")[0] for n in sys.modules}
        if _editable():
            for name in ours:
                importlib.import_module(name)
    else:
        for name in PRELOAD[module]:
            package = importlib.import_module(f"{module}.{name}")
            for found in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
                if "mcp" not in found.name:
                    importlib.import_module(found.name)
    # the standard library and site-packages: after the script's folder, unless safe_path
    base_path = sys.path[:] if sys.flags.safe_path else sys.path[1:]
    sock = socket.socket(fileno=fd)
    preloaded = {name.partition(".")[0] for name in sys.modules}
    late = sorted(preloaded - early) if early else []
    sock.sendall(json.dumps({"preloaded": sorted(preloaded), "late": late}).encode() + b"\n")
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        except OSError:
            return
        if not data:
            return  # the test worker ended
        while not data.endswith(b"\n"):
            more = sock.recv(1 << 20)
            if not more:
                return
            data += more
        request = json.loads(data)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            _child(request, fds, base_path)
        for each in fds:
            os.close(each)
        sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        sock.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


def _editable() -> bool:
    """Whether this package is installed from its folder (PEP 610), so pytest does not mark it
    for rewriting: installed otherwise, a server importing it would make pytest warn."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution("pytest-boundedreview")
    except importlib.metadata.PackageNotFoundError:
        return False
    direct = dist.read_text("direct_url.json")
    return bool(direct and json.loads(direct).get("dir_info", {}).get("editable"))


def _child(request: dict[str, Any], fds: list[int], base_path: list[str]) -> NoReturn:
    """Become the run ``request`` asks for; end as the interpreter ends, by raising to the
    top: threads joined, ``atexit`` run, objects finalised, streams flushed, an uncaught
    exception printed (a ``KeyboardInterrupt`` ending by its signal)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    env = request["env"]
    os.environ.clear()
    os.environ.update(env)
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    tempfile.tempdir = None  # found again from TMPDIR and the rest, as a new process does
    extra = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [*([] if sys.flags.safe_path else [os.getcwd()]), *extra, *base_path]
    sys.orig_argv = request["argv"]
    sys.argv = [request["module"], *request["args"]]
    import runpy

    runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    raise SystemExit(0)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), sys.argv[2])
