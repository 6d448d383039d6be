"""A command that failed and printed nothing is never an empty success (issue 11).

Two places: a form that always prints something (ps's header, df's, a long listing's total)
refuses empty text in ``registry.parse`` (``parse_output`` knows no exit code), and the pipeline
does not parse the empty stdout of a process that failed.
"""

from __future__ import annotations

import pytest

from parism.run.executor import Capture
from parism.parsers import registry
from parism.pipeline import failed_silently


@pytest.mark.parametrize("cmd,args", [("ps", ["aux"]), ("ps", ["-ef"]), ("df", ["-h"]), ("free", []),
                                      ("stat", ["x"]), ("ls", ["-la"]), ("wc", ["-l", "f"])])
def test_empty_text_of_an_always_printing_form_is_refused(cmd: str, args: list[str]) -> None:
    out = registry.parse(cmd, args, "", "linux")
    assert out.parsed is None
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"
    assert "failed" in out.parse_error.message


@pytest.mark.parametrize("cmd,args", [("ps", ["--no-headers", "-p", "1"]), ("ls", []), ("find", [".", "-name", "x"])])
def test_forms_that_may_print_nothing_still_answer_empty(cmd: str, args: list[str]) -> None:
    out = registry.parse(cmd, args, "", "linux")
    assert out.parse_error is None


def test_failed_silently() -> None:
    assert failed_silently("ps", Capture(exit_code=1), "")
    assert failed_silently("ps", Capture(signal="SIGKILL", output_limit=True, stderr_truncated=True), "\n")
    assert not failed_silently("ps", Capture(exit_code=1), "  PID TTY TIME CMD\n")
    assert not failed_silently("ps", Capture(exit_code=0), "")
    assert not failed_silently("grep", Capture(exit_code=1), "")  # grep 1: no line matched is an answer
