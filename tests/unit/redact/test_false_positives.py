"""Ordinary command output (the jc corpus, real captures) must come out of the redactor unchanged.

The corpus holds `env`, `ps`, `ls -R`, `stat` (with SELinux labels such as `passwd_exec_t:s0`),
`curl -I` headers (`publickey-credentials-get=(self)`), `git log` … none of which contains a
secret, so every mask there would be a false positive that damages the parse.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parism.output.redact import Redactor

ROOT = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))
OUTPUTS = sorted(CORPUS.glob("*/*.out"))


def test_corpus_is_present() -> None:
    assert len(OUTPUTS) >= 200, f"corpus missing at {CORPUS} (set PARISM_CORPUS)"


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("path", OUTPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_output_is_not_masked(redactor: Redactor, path: Path) -> None:
    text = path.read_bytes().decode("utf-8", "replace")
    for truncated in (False, True):
        found = redactor.find(text, truncated=truncated)
        hits = [(h.name, text[max(0, h.start - 30) : h.end + 5]) for h in found.hits]
        assert hits == [], f"false positives (truncated={truncated}): {hits}"
