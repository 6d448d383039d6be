"""uname -a: node_name → hostname, operating_system → os (Linux); processor and
hardware_platform are not compared (README mapping: none)."""

from tests.parsers.corpus.mappers._util import diff

MAP = {"kernel_name": "kernel_name", "node_name": "hostname", "kernel_release": "kernel_release",
       "machine": "machine", "operating_system": "os"}


def check(parsed, expected, entry):
    problems: list[str] = []
    for jc_key, our_key in MAP.items():
        if jc_key in expected:
            diff(problems, our_key, parsed.get(our_key), expected[jc_key])
    # jc collapses runs of spaces inside the version (macOS "Dec  1"); compare collapsed
    diff(problems, "kernel_version", " ".join((parsed.get("kernel_version") or "").split()),
         " ".join(expected.get("kernel_version", "").split()))
    return problems
