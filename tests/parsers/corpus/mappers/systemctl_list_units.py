"""systemctl list-units: unit → name; load/active/sub/description compared as is."""

from tests.parsers.corpus.mappers._util import compare_rows, same

FIELDS = [("name", "unit", same), ("load", "load", same), ("active", "active", same), ("sub", "sub", same),
          ("description", "description", same)]


def check(parsed, expected, entry):
    return compare_rows("units", parsed.get("units", []), expected, FIELDS)
