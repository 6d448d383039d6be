"""Text that holds bytes that are not UTF-8 (lone surrogates, ``surrogateescape``): RE2 reads
UTF-8 only, so the old redactor raised in ``re2._encode`` on such output or argument; now the
rules read the display form (U+FFFD, one code point for one) and mask the text itself."""

from __future__ import annotations

import pytest
import re2

from parism.output.redact.redactor import Redactor

TOKEN = "ghp_" + "a1B2" * 9


def test_re2_itself_refuses_a_lone_surrogate() -> None:
    """The armed trap: what the redactor used to hand RE2 raises."""
    with pytest.raises(UnicodeEncodeError):
        re2.compile("x").search("bad\udcff")


@pytest.mark.parametrize("text", [
    f"bad\udcff GITHUB_TOKEN={TOKEN}\n",
    f"GITHUB_TOKEN={TOKEN} bad\udcfe\udcff\n",
    f"\udc80 GITHUB_TOKEN={TOKEN} \udcff",
])
def test_a_secret_beside_invalid_bytes_is_masked_and_the_bytes_stay(text: str) -> None:
    r = Redactor()
    masked = r.mask(text)
    assert TOKEN not in masked.text and "[REDACTED]" in masked.text and masked.count == 1
    kept = [c for c in text if "\udc80" <= c <= "\udcff"]
    assert [c for c in masked.text if "\udc80" <= c <= "\udcff"] == kept  # the exact bytes survive


def test_clean_text_with_invalid_bytes_is_returned_unchanged() -> None:
    r = Redactor()
    assert r.mask("bad\udcff\n").text == "bad\udcff\n"
    assert r.none_can_match(["bad\udcff", "ok"])


def test_echoes_of_an_argument_that_is_not_utf8_are_shown_text() -> None:
    r = Redactor()
    echo = r.echo(["-l", "--", "bad\udcff", f"--token={TOKEN}\udcff"], "ls", expected=("ls", "/tmp/d\udcfe"))
    args = echo.args()
    assert args[:3] == ["-l", "--", "bad\ufffd"] and TOKEN not in args[3]
    assert echo.text("cannot access 'bad\udcff'") == "cannot access 'bad\ufffd'"
    assert all(c.encode("utf-8") for a in args for c in a)
