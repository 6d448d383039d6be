"""The project's configuration file is read only as the project's calls could read it (issue 23,
the rule applied to ``parism/config/``: ``config/workspace.py`` with the run layer's identity
rule, ``run/sandbox/identity.readable_by_calls``).

The project layer lies in the workspace the agent shapes; the server reads it at load time,
often as root. Each attack has its control: the generic reader (``layers.read_document``, the
path every project file took before) blocks on the FIFO / reads the root-only file / reads
``/proc``; ``load_config`` refuses each as a configuration error naming the file instead.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from parism.config import load_config
from parism.config.layers import read_document
from parism.run.sandbox.identity import readable_by_calls

OWNER = 4242


@pytest.fixture
def project() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="parism-projcfg-", dir="/tmp"))
    root.chmod(0o755)
    proj = root / "proj"
    proj.mkdir()
    yield proj
    shutil.rmtree(root, ignore_errors=True)


def _load(proj: Path) -> list[str]:
    """The configuration as the engine, the server and the CLI load it."""
    cfg = load_config(cwd=str(proj), environ={"HOME": str(proj.parent / "home")}, project_access=readable_by_calls)
    return [str(p) for p in cfg.errors]


def test_a_fifo_project_file_does_not_stop_the_start(project: Path) -> None:
    fifo = project / "parism.toml"
    os.mkfifo(fifo)
    done = threading.Event()
    threading.Thread(target=lambda: (read_document(str(fifo)), done.set()), daemon=True).start()
    assert not done.wait(1.0), "control: the generic reader did not block on the FIFO"
    started = time.monotonic()
    errors = _load(project)
    assert time.monotonic() - started < 5
    assert any(str(fifo) in e and "FIFO" in e for e in errors), errors
    with open(fifo, "wb"):  # let the control's reader go
        pass
    assert done.wait(5)


def test_a_proc_project_file_is_refused(project: Path) -> None:
    link = project / "parism.toml"
    link.symlink_to("/proc/self/environ")
    doc, problems = read_document(str(link))  # control: the generic reader reads the environment
    assert doc is not None or all("cannot read" not in str(p) for p in problems)
    errors = _load(project)
    assert any(str(link) in e and "/proc" in e for e in errors), errors


@pytest.mark.skipif(os.geteuid() != 0, reason="a root-only file and a project of another uid need a root server")
def test_a_root_only_project_file_is_not_read_as_root(project: Path) -> None:
    private = project.parent / "private"
    private.mkdir()
    secret = private / "secret.json"
    secret.write_text(json.dumps({"ROOT_ONLY_KEY_7c1e": {"token": "x"}}))
    for path, mode in ((private, 0o700), (secret, 0o600)):
        os.chmod(path, mode)
    (project / "prism.config.json").symlink_to(secret)
    os.lchown(project / "prism.config.json", OWNER, OWNER)
    os.chown(project, OWNER, OWNER)  # the calls here run as OWNER
    doc, _problems = read_document(str(project / "prism.config.json"))  # control: root reads it
    assert doc is not None and "ROOT_ONLY_KEY_7c1e" in doc  # (its keys then reach describe's errors)
    errors = _load(project)
    assert not any("ROOT_ONLY_KEY_7c1e" in e for e in errors), errors
    assert any("prism.config.json" in e and f"uid {OWNER}" in e for e in errors), errors


def test_an_ordinary_project_file_still_loads(project: Path) -> None:
    (project / "parism.toml").write_text('[guard]\nmax_items = 7\n')
    cfg = load_config(cwd=str(project), environ={"HOME": str(project.parent / "home")})
    assert cfg.errors == [] and cfg.settings.guard.max_items == 7


def test_a_fifo_fixture_manifest_is_refused_without_waiting(project: Path) -> None:
    """``parism test`` on a pack someone else wrote: a manifest that is a FIFO."""
    from parism.packs import fixtures

    fifo = project / "case.json"
    os.mkfifo(fifo)
    done = threading.Event()
    threading.Thread(target=lambda: (fifo.read_text(), done.set()), daemon=True).start()
    assert not done.wait(1.0), "control: reading the manifest by name did not block"
    started = time.monotonic()
    data, problem = fixtures.load(fifo)
    assert time.monotonic() - started < 2 and data is None and "FIFO" in (problem or ""), problem
    with open(fifo, "wb"):
        pass
    assert done.wait(5)
