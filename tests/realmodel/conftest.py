from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import llamacpp
import pytest


@pytest.fixture(scope="session")
def llama_site() -> Path:
    """The pinned server and model, installed once per requirements hash. Where they cannot
    be had (no network, another platform) the group is skipped with the reason; any other
    failed install, a hash mismatch above all, fails it with pip's words."""
    try:
        return llamacpp.install()
    except llamacpp.Unavailable as exc:
        pytest.skip(f"the real model server cannot be installed here: {exc}")
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def llama(llama_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[llamacpp.Server]:
    """llama.cpp's server with SmolLM2-135M-Instruct on 127.0.0.1, one per session (or xdist
    worker), stopped at its end."""
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llamacpp.serving(llama_site, log) as server:
        yield server
