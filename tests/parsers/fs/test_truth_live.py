"""Issue #25's live truth cases (``truth_cases.py``): a tree of hostile names — bytes that are not
UTF-8, newline, CR, tab, leading and trailing spaces, ``->``, ``*``, ``total 12``, a directory with
a newline — under every ``ls``/``find``/``du``/``stat``/``wc`` form the parsers accept, through
the real engine (sandbox included), judged against ``os.listdir(b".")``/``os.lstat``/
``os.readlink``. A case may be refused (with a hint), never wrong, never a crash.

On f4aedb0 the same 73 cases gave right 11, wrong 47, refused 7, crash 8
(``scripts/truth_count.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import tomli_w

from parism.engine import Engine, create_engine
from tests.parsers.fs import truth_cases as tc

CASES = tc.cases()
#: forms that must be read, not refused: long listings, find, du, stat, wc, one name as argument
MUST_READ = [i for i, (cmd, args) in enumerate(CASES)
             if cmd != "ls" or any(a.startswith("-l") for a in args) and "-lR" not in args]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, Path]:
    base = tmp_path_factory.mktemp("truth")
    base.chmod(0o755)
    root = base / "tree"
    root.mkdir()
    root.chmod(0o755)
    tc.build(root)
    cfg = base / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(base)]}}))
    old = os.environ.pop("TZ", None)  # the judge reads naive times as UTC
    try:
        engine = create_engine(str(cfg))
    finally:
        if old is not None:
            os.environ["TZ"] = old
    assert engine.errors == []
    return engine, root


@pytest.mark.parametrize("index", range(len(CASES)),
                         ids=[f"{c} {' '.join(a)}"[:60].replace("\n", "\\n") for c, a in CASES])
def test_case_is_right_or_refused(tree: tuple[Engine, Path], index: int) -> None:
    engine, root = tree
    cmd, args = CASES[index]
    verdict, detail = tc.run_case(engine, root, cmd, args)
    assert verdict in ("right", "refused"), detail
    if index in MUST_READ:
        assert verdict == "right", f"refused a form that can be read: {cmd} {args}"
