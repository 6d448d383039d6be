"""docs/parsers.md is generated from the parser contracts and must match them."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_parsers_doc_is_up_to_date() -> None:
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_parsers_doc.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_readme_links_resolve() -> None:
    import re

    text = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README links to missing {target}"
