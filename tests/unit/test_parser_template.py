"""docs/examples/parser_template.py is a working parser: it loads, its contract checks and its
parse reads the example it documents (a template that rots would teach the wrong thing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from parism.parsers.contract import ParseInput, Parser

TEMPLATE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "parser_template.py"


def _template() -> Parser:
    spec = importlib.util.spec_from_file_location("parser_template", TEMPLATE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # pydantic resolves the annotations through the module
    spec.loader.exec_module(mod)
    return mod.PARSER


def test_the_template_parses_its_example_and_refuses_what_it_does_not_read() -> None:
    parser = _template()
    tokens, problem = parser.contract.check(["-a", "-w", "80"])
    assert problem is None
    assert parser.contract.check(["-w", "eighty"])[1] is not None  # a number kind refuses a word
    pin = ParseInput(cmd="cmd", args=["-a"], sub_args=["-a"], tokens=tokens, os="linux")
    assert parser.parse is not None and parser.schema is not None
    got = parser.parse("NAME SIZE KIND\nalpha 12 file\nbeta - dir\n", pin)
    assert got == {"rows": [{"name": "alpha", "kind": "file", "size_bytes": 12}, {"name": "beta", "kind": "dir"}]}
    parser.schema.model_validate(got)
    try:
        parser.parse("NAME SIZE KIND\nnot a row at all\n", pin)
    except Exception as exc:  # Unrecognized, never an empty success
        assert type(exc).__name__ == "Unrecognized"
    else:
        raise AssertionError("a line that is not a row was accepted")
