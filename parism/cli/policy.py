"""``parism policy``: the appliance's deployment facts from the installed package.

``parism policy seccomp`` prints the shipped seccomp profile (so ``--security-opt
seccomp=<(parism policy seccomp)`` or saving it works from a pip install); ``parism policy
run-line`` prints the hardened ``docker run`` line (``--json``: the argv list, for MCP client
configurations that take ``command`` + ``args``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from parism.cli.common import EXIT_OK, EXIT_USAGE


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("policy", help="print the container's seccomp profile or hardened run line")
    what = p.add_subparsers(dest="policy_what", metavar="WHAT", required=True)
    sec = what.add_parser("seccomp", help="print the seccomp profile the container must run under")
    sec.set_defaults(handler=_seccomp)
    line = what.add_parser("run-line", help="print the hardened docker run line")
    line.add_argument("--profile", choices=("readonly", "build"), default="readonly")
    line.add_argument("--workspace", metavar="DIR", help="the project directory to mount (default: a placeholder)")
    line.add_argument("--image", default=None, help="image reference (default parism:dev)")
    line.add_argument("--seccomp", metavar="PATH", help="absolute path of the saved seccomp profile")
    line.add_argument("--json", action="store_true", help='print {"command": "docker", "args": [...]}')
    line.set_defaults(handler=_run_line)


def _seccomp(ns: argparse.Namespace) -> int:
    from parism.appliance import seccomp_profile

    sys.stdout.write(seccomp_profile())
    return EXIT_OK


def _run_line(ns: argparse.Namespace) -> int:
    from parism.appliance import DEFAULT_IMAGE, SECCOMP_PLACEHOLDER, run_line

    if ns.seccomp is not None and not ns.seccomp.startswith("/"):
        print(f"parism: --seccomp must be an absolute path (the docker CLI reads it), got {ns.seccomp!r}",
              file=sys.stderr)
        return EXIT_USAGE
    line = run_line(image=ns.image or DEFAULT_IMAGE, workspace=ns.workspace, profile=ns.profile,
                    seccomp=ns.seccomp or SECCOMP_PLACEHOLDER)
    if ns.json:
        print(json.dumps({"command": "docker", "args": line.argv}, indent=2))
    else:
        print(_shell(line.argv))
    for note in line.notes:
        print(f"# note: {note}", file=sys.stderr)
    return EXIT_OK


def _shell(argv: list[str]) -> str:
    """One flag (with its value) per line, joined with backslashes, as docs/container.md shows."""
    parts, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("-") and "=" not in word and i + 1 < len(argv) and not argv[i + 1].startswith("-") \
                and word not in ("-i", "--rm", "--init", "--read-only"):
            parts.append(f"{word} {shlex.quote(argv[i + 1])}")
            i += 2
        else:
            parts.append(shlex.quote(word))
            i += 1
    return "docker " + " \\\n  ".join(parts)
