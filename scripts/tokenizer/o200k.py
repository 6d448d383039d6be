"""o200k_base token counts through node and the pinned npm ``gpt-tokenizer`` (``count.js``).

For the token benchmark and the golden token table only: Parism itself never calls node. Run
``npm ci`` in this directory first (``scripts/bootstrap --test`` does).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def available() -> str | None:
    """None when counting works, else why not (no node, ``npm ci`` not run)."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (HERE / "node_modules" / "gpt-tokenizer").is_dir():
        return f"gpt-tokenizer is not installed: run npm ci in {HERE}"
    return None


def count_many(texts: list[str]) -> list[int]:
    """One node process for all texts."""
    done = subprocess.run(["node", str(HERE / "count.js")], input=json.dumps(texts), capture_output=True,
                          text=True, check=True, timeout=300)
    return json.loads(done.stdout)


def count(text: str) -> int:
    return count_many([text])[0]
