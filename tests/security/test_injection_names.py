"""No false injection refusals (docs/guard.md, "Injection patterns"): newline, CR, ``>`` and
``>>`` in a path argument are characters of a name, because no shell runs.

Each case runs live through the engine (real guard, real bubblewrap when it works, real ``ls`` /
``wc`` / ``stat``): the file with that name is read exactly (checked with ``os.lstat``), and the
redirection the characters would spell in a shell does not happen — the armed trap runs the same
words through ``sh -c`` in the same test and *does* create the file. Works as non-root: every
file is made by the test in its own directory.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from typing import Any

import pytest
import tomli_w

from parism.engine import Engine, create_engine


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    root = tmp_path_factory.mktemp("inj")
    root.chmod(0o755)
    cfg = root / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(root)]}}))
    e = create_engine(str(cfg))
    assert e.errors == []
    e.root = root  # type: ignore[attr-defined]
    return e


def _wire(env: Any) -> dict[str, Any]:
    return json.loads(env.to_json())


def _name(row: dict[str, Any], key: str) -> bytes:
    return base64.b64decode(row[f"{key}_b64"]) if f"{key}_b64" in row else row[key].encode()


# (name, the file a shell creates from the same words, or None: no shell effect to arm)
CASES = [("p -> q", "q"), ("a\ntouch pwned", "pwned"), ("x>y", "y"), ("out>>log", "log"),
         ("> z", "z"), ("cr\rname", None)]


@pytest.mark.parametrize(("name", "trap"), CASES, ids=["arrow", "newline", "gt", "append", "lone-gt", "cr"])
def test_a_name_with_shell_redirection_is_data(engine: Engine, name: str, trap: str | None) -> None:
    d = engine.root / f"case-{base64.b16encode(name.encode()).decode()}"  # type: ignore[attr-defined]
    d.mkdir()
    d.chmod(0o755)
    (d / name).write_bytes(b"12345")
    before = sorted(os.listdir(d))

    if trap is not None:  # the armed trap: a shell given the same words creates the file
        subprocess.run(["sh", "-c", f"ls -l -- {name}"], cwd=d, capture_output=True)
        assert (d / trap).exists(), "the trap did not fire: the test would prove nothing"
        (d / trap).unlink()
    assert sorted(os.listdir(d)) == before

    env = _wire(engine.run("ls", ["-l", "--", name], cwd=str(d), format="json"))
    assert env["ok"] is True, env
    [row] = env["stdout"]["parsed"]["entries"]
    st = os.lstat(d / name)
    assert _name(row, "name") == name.encode() and row["size_bytes"] == st.st_size
    wc = _wire(engine.run("wc", ["-c", name], cwd=str(d), format="json"))
    assert wc["ok"] is True, wc
    assert [(_name(r, "file"), r["bytes"]) for r in wc["stdout"]["parsed"]["entries"]] == [(name.encode(), st.st_size)]
    assert sorted(os.listdir(d)) == before  # Parism redirected nothing, ran nothing else


def test_what_a_name_does_not_excuse_is_still_refused(engine: Engine) -> None:
    root = str(engine.root)  # type: ignore[attr-defined]
    for cmd, args in (("ls", ["a;id"]), ("ls", ["x | id"]), ("ls", ["$(id)"]), ("ps", ["-p", "1\n2"]),
                      ("ps", ["-p", "1>x"]), ("ls", ["a\0b"])):
        env = engine.run(cmd, args, cwd=root)
        assert env.failure is not None and env.failure.reason == "injection_pattern", (cmd, args, env.failure)
