"""Run a list of calls through one engine and print what the parity test compares (JSON).

Run as a script (``python3 parity_runner.py CONFIG CWD`` with the calls as JSON on stdin) so
the engine can run as another user than the test (the non-root route: the appliance's uid
10001), with the system Python and this checkout on ``sys.path``."""

from __future__ import annotations

import json
import sys


def main() -> None:
    config, cwd = sys.argv[1], sys.argv[2]
    import parism

    engine = parism.create_engine(config)
    out = {"describe": engine.describe().to_wire()["sandbox"], "calls": []}
    for cmd, args in json.loads(sys.stdin.read()):
        env = engine.run(cmd, args, cwd=cwd, contract_version="next").to_wire()
        review = env.get("review") or {}
        out["calls"].append({"cmd": cmd, "args": args, "ok": env["ok"], "exit": env["exitCode"],
                             "failure": env.get("failure"), "parsed": env["stdout"]["parsed"],
                             "raw": env["stdout"]["raw"], "warnings": review.get("warnings", []),
                             "level": (review.get("sandbox") or {}).get("level")})
    engine.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
