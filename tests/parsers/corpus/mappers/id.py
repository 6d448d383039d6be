"""id: uid.id/name → uid/user, gid.id/name → gid/group, groups[] → groups[]."""

from tests.parsers.corpus.mappers._util import diff


def check(parsed, expected, entry):
    problems: list[str] = []
    diff(problems, "uid", parsed.get("uid"), expected["uid"]["id"])
    diff(problems, "user", parsed.get("user"), expected["uid"]["name"])
    diff(problems, "gid", parsed.get("gid"), expected["gid"]["id"])
    diff(problems, "group", parsed.get("group"), expected["gid"]["name"])
    diff(problems, "groups", [(g.get("id"), g.get("name")) for g in parsed.get("groups") or []],
         [(g["id"], g["name"]) for g in expected.get("groups", [])])
    return problems
