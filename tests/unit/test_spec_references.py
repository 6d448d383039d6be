"""Every spec reference in ``parism/`` names a shipped file and a section that file has.

The code cites ``contract §8.7``, ``mcp-notes §1.10``, ``sandbox-notes §2.6`` and ``spec decision
11`` (docs/spec/README.md says how); the cited text ships in ``docs/spec/``. A bare ``§5.4`` or a
``decision 4`` would leave a maintainer guessing which document is meant, so both are refused.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "docs" / "spec"
FILES = {"contract": "contract.md", "mcp-notes": "mcp-notes.md", "sandbox-notes": "sandbox-notes.md"}
EXTERNAL = ("JSON-RPC 2.0",)  # other specifications, cited by their own section numbers

NUM = r"§(\d+(?:\.\d+)*)"
GROUP = re.compile(r"(contract|mcp-notes|sandbox-notes|JSON-RPC 2\.0)\s+" + NUM
                   + r"((?:(?:,\s*|/|\s+and\s+|\s+or\s+)§\d+(?:\.\d+)*)*)")
DECISIONS = re.compile(r"[Ss]pec decisions? (\d+(?:(?:,\s*|\s+and\s+)\d+)*)")


def sections(text: str) -> set[str]:
    """Heading numbers (``## 8.``, ``### 8.7``) and the numbered items of each ``## N.`` section."""
    found: set[str] = set()
    current = None
    for line in text.splitlines():
        if m := re.match(r"#{2,4} (\d+(?:\.\d+)*)\.? ", line):
            found.add(m.group(1))
            current = m.group(1) if line.startswith("## ") else current
        elif current is not None and (m := re.match(r"(\d+)\. ", line)):
            found.add(f"{current}.{m.group(1)}")
    return found


def decisions() -> set[str]:
    text = (SPEC / "README.md").read_text(encoding="utf-8")
    part = text.split("## Decisions specific to this (Python) implementation", 1)[1]
    return set(re.findall(r"(?m)^(\d+)\. \*\*", part))


def references() -> list[tuple[str, str, str]]:
    """(file:line, document, section) for every § and spec-decision reference in parism/."""
    out = []
    for path in sorted((ROOT / "parism").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = lambda pos: f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, pos) + 1}"  # noqa: E731
        for m in GROUP.finditer(text):
            for num in [m.group(2), *re.findall(NUM, m.group(3))]:
                out.append((where(m.start()), m.group(1), num))
        named = {i for m in GROUP.finditer(text) for i in range(*m.span())}
        for m in re.finditer(NUM, text):
            if m.start() not in named:
                out.append((where(m.start()), "(no document named)", m.group(1)))
        for m in DECISIONS.finditer(text):
            for num in re.findall(r"\d+", m.group(1)):
                out.append((where(m.start()), "spec decision", num))
        for m in re.finditer(r"(?<![Ss]pec )(?<!\w)[Dd]ecisions? \d+", text):
            out.append((where(m.start()), "(no document named)", m.group(0)))
    return out


def unresolved(refs: list[tuple[str, str, str]]) -> list[str]:
    known = {name: sections((SPEC / file).read_text(encoding="utf-8")) for name, file in FILES.items()}
    known["spec decision"] = decisions()
    bad = []
    for where, doc, num in refs:
        if doc in EXTERNAL:
            continue
        if doc not in known or num not in known[doc]:
            bad.append(f"{where}: {doc} {num}")
    return bad


def test_the_cited_spec_files_ship_in_docs_spec() -> None:
    for file in [*FILES.values(), "README.md"]:
        assert (SPEC / file).is_file(), file


def test_every_spec_reference_in_parism_resolves_to_a_shipped_section() -> None:
    refs = references()
    assert len(refs) > 50  # the code cites the spec; a broken scan would find nothing and pass
    assert unresolved(refs) == []


@pytest.mark.parametrize("text, expected", [
    ("the child's environment (contract §8.7).", []),
    ("the child's environment (§8.7).", ["x.py:1: (no document named) 8.7"]),
    ("see contract §99.1 and mcp-notes §1.10, §1.99", ["x.py:1: contract 99.1", "x.py:1: mcp-notes 1.99"]),
    ("deny by default, decision 4", ["x.py:1: (no document named) decision 4"]),
    ("per spec decisions 2, 3, 99", ["x.py:1: spec decision 99"]),
    ("JSON-RPC 2.0 §5 says so", []),
])
def test_the_check_refuses_what_does_not_resolve(tmp_path, monkeypatch, text: str, expected: list[str]) -> None:
    """The checker itself, on made-up sources: bare and unknown references are reported."""
    (tmp_path / "parism").mkdir()
    (tmp_path / "parism" / "x.py").write_text(f'"""{text}"""\n', encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    got = [line.replace("parism/", "") for line in unresolved(references())]
    assert got == expected
