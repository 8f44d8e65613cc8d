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
their own, unless ``PYTHONHASHSEED`` sets it.

Modules already imported are pytest's, its plugins' (each installed plugin's modules,
hypothesis whole, imported through pytest's assertion rewriting as a session imports them, so
pytest neither rewrites them again nor warns) and this package's, or the console command's,
whose server never imports pytest. What those imports read of the process is watched
(``_Watch``): a server serves only runs with the same values of the environment variables they
looked up (hypothesis reads ``CI`` and others), and a module that kept the working folder gets
the child's (hypothesis keeps its database's folder); one that kept it out of sight sends the
runs cold. A test about what a process imports or how it starts runs its own interpreter;
``BOUNDED_REVIEW_TESTS_COLD=1`` starts every run cold."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any, NoReturn

# What each server imports before it forks. For a pytest session: pytest, its plugins
# (``_rewriting``) and the modules of this package a review session imports (never pydantic's).
# For ``bounded-review``: every module of these packages but the MCP server's, and never pytest.
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
        self.module, self.inherited = module, _inherited()
        self.env = {k: v for k, v in env.items() if k != "PYTHONPATH"}  # given to each run
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno()), module],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,  # and never a terminal: a child's streams are as a cold one's
            stdout=subprocess.DEVNULL,
            env=self.env,
            cwd="/",
        )
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        self.busy = False
        self._buffer = b""
        # Once it has imported: the top-level names it imported, those pytest would not have
        # yet, and the environment variables read as it imported. Its imports failed, read the
        # whole environment, or kept the working folder out of sight (_Watch.kept): runs go
        # cold.
        self.preloaded, self.late, self.read, self.ok = set(), set(), set(), False
        try:
            ready = self.answer(timeout=120)
            self.preloaded, self.late = set(ready["preloaded"]), set(ready["late"])
            self.read, self.ok = set(ready["read"]), bool(ready["ok"])
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        if not self.ok:
            self.proc.kill()
            self.proc.wait()
            self.sock.close()

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

    def retire(self) -> bool:
        """End this server if no run is using it (its runs go cold from then on); whether it
        was ended."""
        with self.lock:
            if self.busy:
                return False
            self.busy = True
        self.sock.close()  # the server ends when its socket does
        self.proc.wait()
        return True

    def serves(self, module: str, env: Mapping[str, str], inherited: tuple[object, ...]) -> bool:
        """Whether a run of ``module`` with ``env`` and ``inherited`` (:func:`_inherited`)
        starts as this server did: the same start-up variables, the same values of those its
        imports read, the same inherited state."""
        if (module, inherited, _startup(env)) != (self.module, self.inherited, _startup(self.env)):
            return False
        return all(env.get(name) == self.env.get(name) for name in self.read)


_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


def _modules_in(folder: str) -> set[str]:
    """The top-level names a folder on ``sys.path`` offers: its folders (packages, namespace
    portions) and its modules (``name.py``, ``name.cpython-311-x86_64-linux-gnu.so``)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return set()
    return {e.name.partition(".")[0] for e in entries if e.is_dir() or e.name.endswith(_SUFFIXES)}


# The servers of this process, the least recently used first; a few per module, since a test
# that sets a variable for a run usually sets it for that run alone.
_servers: list[_Server] = []
_servers_lock = threading.Lock()
_PER_MODULE = 3


def _server(module: str, env: Mapping[str, str]) -> _Server | None:
    """The server for a run of ``module`` with ``env``: one that serves it, else one started
    for it, in place of the least recently used idle one if there are already a few; None
    when the run must start cold (its server's imports failed, or every one is busy)."""
    inherited = _inherited()
    env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    with _servers_lock:
        server = next((s for s in _servers if s.serves(module, env, inherited)), None)
        if server is not None:
            _servers.remove(server)
            if not server.ok or server.proc.poll() is None:  # else it ended: started again
                _servers.append(server)
                return server if server.ok else None
        same = [s for s in _servers if s.module == module]
        if len(same) >= _PER_MODULE:
            idle = next((s for s in same if s.ok and s.retire()), None)
            if idle is None:
                return None
            _servers.remove(idle)
        server = _Server(module, env)
        _servers.append(server)
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
    with server.lock:
        if server.busy:
            return None
        server.busy = True
    request = {"argv": list(argv), "module": module, "args": args, "cwd": folder, "env": dict(env)}
    socket.send_fds(server.sock, [json.dumps(request).encode() + b"\n"], list(stdio))
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
            [os.fspath(a) for a in argv], cwd or os.getcwd(), env, [given, out_end, err_end]
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
    # Its variables hold paths under HOME, and each test has a HOME of its own (conftest.py):
    # computed unwatched, and computed again by each child (_child).
    importlib.import_module("sysconfig").get_config_vars()
    here = tempfile.mkdtemp(prefix="warmstart-")  # its own folder while it imports (_Watch)
    os.chdir(here)
    watch = _Watch()
    early: set[str] = set()
    if module == "pytest":
        with watch:  # pytest, and the plugins it brings
            from _pytest.config import default_plugins

            for name in default_plugins:
                importlib.import_module(f"_pytest.{name}")
        early = {n.partition(".")[0] for n in sys.modules}
        with _rewriting() as plugins, watch:
            for name in [*plugins, *PRELOAD[module]]:
                importlib.import_module(name)
    else:
        with watch:
            for name in PRELOAD[module]:
                package = importlib.import_module(f"{module}.{name}")
                for found in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
                    if "mcp" not in found.name:
                        importlib.import_module(found.name)
    os.chdir("/")
    os.rmdir(here)
    kept = watch.kept(here)
    base_path = sys.path[1:]  # after the script's folder: the standard library, site-packages
    sock = socket.socket(fileno=fd)
    preloaded = {name.partition(".")[0] for name in sys.modules}
    ready = {
        "preloaded": sorted(preloaded),
        "late": sorted(preloaded - early) if early else [],
        "read": sorted(watch.read - set(_PER_CHILD)),
        "ok": kept is not None and _EVERY not in watch.read,
    }
    sock.sendall(json.dumps(ready).encode() + b"\n")
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
            _child(request, fds, base_path, kept or [])
        for each in fds:
            os.close(each)
        sock.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        sock.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")


@contextlib.contextmanager
def _rewriting() -> Iterator[list[str]]:
    """While open, imports go through pytest's assertion rewriting hook, with marked for
    rewriting what a session marks (the modules of each installed plugin's distribution).
    Yields the modules to import: the plugins' entry points, then each name marked. Imported
    so, a module is rewritten as a session rewrites it, and pytest, finding it imported by a
    hook of its own kind, does not warn that it cannot rewrite it."""
    import importlib.metadata

    from _pytest.assertion import AssertionState
    from _pytest.assertion.rewrite import AssertionRewritingHook, assertstate_key
    from _pytest.config import get_config

    config = get_config([])
    config.stash[assertstate_key] = AssertionState(config, "rewrite")
    hook = AssertionRewritingHook(config)
    config._mark_plugins_for_rewrite(hook, disable_autoload=False)
    plugins = [ep.module for ep in importlib.metadata.entry_points(group="pytest11")]
    sys.meta_path.insert(0, hook)
    try:
        yield [*dict.fromkeys([*plugins, *sorted(hook._must_rewrite)])]
    finally:
        sys.meta_path.remove(hook)


class _Reading(MutableMapping[str, str]):
    """``os.environ`` as :class:`_Watch` lends it: every variable looked up is noted."""

    def __init__(self, real: MutableMapping[str, str], read: set[str]) -> None:
        self.real, self.read = real, read

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return self.real[key]

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return key in self.real

    def __setitem__(self, key: str, value: str) -> None:
        self.real[key] = value

    def __delitem__(self, key: str) -> None:
        del self.real[key]

    def __iter__(self) -> Iterator[str]:
        self.read.add(_EVERY)
        return iter(self.real)

    def __len__(self) -> int:
        return len(self.real)

    def copy(self) -> dict[str, str]:
        return dict(self.real)


_EVERY = "*"  # the environment read as a whole: no run has all its values, each starts cold
_PATH_MODULES = {"os", "posixpath", "genericpath", "pathlib"}


class _Watch:
    """While open, notes what imports read that a child may have otherwise: the environment
    variables they look up (a server serves only runs that give them the same values), the
    modules that ask for the working folder, and the modules imported (:meth:`kept`)."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.readers: set[str] = set()
        self.modules: set[str] = set()

    def __enter__(self) -> None:
        self._environ, self._getcwd = os.environ, os.getcwd
        self._before = set(sys.modules)
        # lent, not replaced: reads and writes go to the real one
        os.environ = _Reading(self._environ, self.read)  # type: ignore[assignment]  # noqa: B003
        os.getcwd = self._noting

    def __exit__(self, *exc: object) -> None:
        os.environ, os.getcwd = self._environ, self._getcwd  # type: ignore[assignment]
        self.modules |= set(sys.modules) - self._before

    def _noting(self) -> str:
        frame = sys._getframe(1)
        while frame.f_back and frame.f_globals.get("__name__") in _PATH_MODULES:
            frame = frame.f_back
        self.readers.add(str(frame.f_globals.get("__name__")))
        return self._getcwd()

    def kept(self, folder: str) -> list[tuple[str, str, Callable[[], object]]] | None:
        """What the modules imported keep of this process that a child has otherwise, as
        ``(module, global, what the child's is)``: the working folder (``folder`` then), or a
        path below it, and a copy of ``sys.path`` (xdist keeps one for its workers). None
        when a module that asked for the working folder keeps it nowhere in sight, so the
        children must start cold."""
        found: list[tuple[str, str, Callable[[], object]]] = []
        keeping = set()
        for name in sorted(self.modules):
            for key, value in list(vars(sys.modules[name]).items()):
                if isinstance(value, list) and value is not sys.path and value == sys.path:
                    found.append((name, key, lambda: list(sys.path)))
                elif isinstance(value, (str, os.PathLike)) and (
                    (os.fspath(value) + os.sep).startswith(folder + os.sep)
                ):
                    below, kind = os.path.relpath(os.fspath(value), folder), type(value)
                    found.append((name, key, functools.partial(_below, kind, below)))
                    keeping.add(name)
        return found if self.readers <= keeping else None


def _below(kind: Callable[[str], object], below: str) -> object:
    """``below`` in the working folder, as a ``kind``."""
    return kind(os.path.normpath(os.path.join(os.getcwd(), below)))


def _child(
    request: dict[str, Any],
    fds: list[int],
    base_path: list[str],
    kept: list[tuple[str, str, Callable[[], object]]],
) -> NoReturn:
    """Become the run ``request`` asks for; end as the interpreter ends, by raising to the
    top: threads joined, ``atexit`` run, objects finalised, streams flushed, an uncaught
    exception printed (a ``KeyboardInterrupt`` ending by its signal). ``kept``: what
    modules kept of the server at import (:meth:`_Watch.kept`), made this process's."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    env = request["env"]
    os.environ.clear()
    os.environ.update(env)
    sysconfig._CONFIG_VARS = None  # type: ignore[attr-defined]  # as before a first use
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    tempfile.tempdir = None  # found again from TMPDIR and the rest, as a new process does
    extra = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [*([] if sys.flags.safe_path else [os.getcwd()]), *extra, *base_path]
    for module, name, made in kept:
        vars(sys.modules[module])[name] = made()
    sys.orig_argv = request["argv"]
    sys.argv = [request["module"], *request["args"]]
    import runpy

    runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    raise SystemExit(0)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), sys.argv[2])
