"""systemctl list-units: unit → name; load/active/sub/description compared as is."""

from tests.parsers.corpus.mappers._util import diff


def check(parsed, expected, entry):
    problems: list[str] = []
    ours = parsed.get("units", [])
    diff(problems, "row count", len(ours), len(expected))
    for i, (o, e) in enumerate(zip(ours, expected)):
        for jc_key, our_key in (("unit", "name"), ("load", "load"), ("active", "active"), ("sub", "sub"),
                                ("description", "description")):
            if o.get(our_key) != e.get(jc_key):
                problems.append(f"units[{i}].{our_key}: parism={o.get(our_key)!r} jc={e.get(jc_key)!r}")
    return problems
