"""includeDiff walks the working directory as the server: it must not show names only root may
list (issue 23, "reading as root, showing to nobody", applied to run/fsdiff.py).

A root-only directory (0700) inside a project that belongs to another uid: the call runs as
that uid and cannot list it; something root runs writes a file there while the call runs. The
control: the walk as the server (``snapshot`` without the call's identity) reports the new name.
Through the engine, ``fsDiff`` does not; a file the call's uid may see is still reported.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

import parism.engine as engine_mod
from parism.engine import create_engine
from parism.run.fsdiff import diff, snapshot

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="a root-only directory in another uid's project needs a root server"),
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")]
OWNER = 4242


@pytest.fixture
def project() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="parism-fsdiff-", dir="/tmp"))
    root.chmod(0o755)
    proj = root / "proj"
    (proj / "secret").mkdir(parents=True)
    (proj / "open").mkdir()
    for path in (proj, proj / "open"):
        os.chown(path, OWNER, OWNER)
    os.chmod(proj / "secret", 0o700)  # root's, private
    yield proj
    shutil.rmtree(root, ignore_errors=True)


def test_names_in_a_root_only_directory_stay_out_of_the_diff(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = [project / "secret" / "payroll-2026-LEAKED.txt", project / "open" / "visible.txt"]

    before = snapshot(str(project))  # control: the server's own walk sees the new name
    written[0].write_text("x")
    assert str(written[0]) in diff(before, snapshot(str(project))).created
    written[0].unlink()

    real = engine_mod.execute

    def root_writes_during_the_call(*args: Any, **kwargs: Any) -> Any:
        for path in written:
            path.write_text("x")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine_mod, "execute", root_writes_during_the_call)
    cfg = project.parent / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"profile": "build", "allowed_paths": [str(project)]},
                                  "sandbox": {"mode": "required"}}))
    engine = create_engine(str(cfg))
    try:
        env = engine.run("ls", ["-la"], cwd=str(project), includeDiff=True, format="json").to_wire()
    finally:
        engine.close()
    assert env["ok"] is True, env
    assert "LEAKED" not in str(env)
    assert str(written[1]) in env["diff"]["created"]
