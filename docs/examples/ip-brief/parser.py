"""Example parser pack: `ip -br addr` (iproute2's brief address listing).

Output schema::

    {"interfaces": [{"name": str, "state": str, "addresses": [str, ...]}]}

One line per interface: the name (``eth0@if12`` keeps the part before ``@`` as the name and the
peer in ``link``), the operational state (UP, DOWN, UNKNOWN …) and zero or more CIDR addresses.
"""

from pydantic import BaseModel

from parism.packs.types import Fixture, ParserPack, UnrecognizedOutputError


class Interface(BaseModel):
    name: str
    state: str
    addresses: list[str]
    link: str | None = None


class Result(BaseModel):
    interfaces: list[Interface]


def parse(raw: str, args: list[str], ctx) -> dict:
    rows = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) < 2:
            raise UnrecognizedOutputError(f"not an `ip -br addr` line: {line!r}")
        name, _, link = parts[0].partition("@")
        row = {"name": name, "state": parts[1], "addresses": parts[2:]}
        if link:
            row["link"] = link
        rows.append(row)
    return {"interfaces": rows}


def supports(args: list[str]) -> str | None:
    if args not in (["-br", "addr"], ["-br", "a"], ["-br", "address"], ["-brief", "addr"]):
        return "reads only `ip -br addr` (brief address listing)"
    return None


PACK = ParserPack(
    name="ip", parse=parse, schema=Result, rows_key="interfaces", row_fields=("name", "state", "addresses"),
    accepted_flags={"-br": "bool", "-brief": "bool"}, accepted_positionals={"max": 1}, supports=supports,
    single_dash_long=True,
    fixtures=[Fixture(input="lo               UNKNOWN        127.0.0.1/8 ::1/128 \n",
                      args=["-br", "addr"],
                      expected={"interfaces": [{"name": "lo", "state": "UNKNOWN",
                                                "addresses": ["127.0.0.1/8", "::1/128"]}]})],
)
