"""``parism policy``: the shipped seccomp profile and the hardened run line, from the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "parism", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_seccomp_prints_the_committed_profile_byte_for_byte() -> None:
    out = cli("policy", "seccomp")
    assert out.returncode == 0, out.stderr
    assert out.stdout == (ROOT / "policies" / "seccomp-bwrap.json").read_text()
    assert json.loads(out.stdout)["defaultAction"] == "SCMP_ACT_ERRNO"


def test_run_line_readonly_is_the_documented_line(tmp_path: Path) -> None:
    out = cli("policy", "run-line", "--workspace", str(tmp_path), "--seccomp", "/etc/parism/seccomp.json")
    assert out.returncode == 0, out.stderr
    line = out.stdout.replace("\\\n", " ").split()
    for flag in ("-i", "--rm", "--init", "--read-only", "--cap-drop=ALL"):
        assert flag in line
    assert "-t" not in line and "--tty" not in line
    text = " ".join(line)
    for part in ("--security-opt no-new-privileges", "--security-opt seccomp=/etc/parism/seccomp.json",
                 "--security-opt systempaths=unconfined", "--network none", f"-v {tmp_path}:/workspace:ro",
                 "--user 10001:10001", "--pids-limit 256", "--memory 1g"):
        assert part in text, part
    assert line[-1] == "parism:dev"
    doc = (ROOT / "docs" / "container.md").read_text()
    assert "parism policy run-line" in doc


def test_run_line_build_uses_the_workspace_owner(tmp_path: Path) -> None:
    os.chown(tmp_path, 4242, 4243)
    out = cli("policy", "run-line", "--profile", "build", "--workspace", str(tmp_path), "--json")
    assert out.returncode == 0, out.stderr
    argv = json.loads(out.stdout)["args"]
    assert argv[argv.index("--user") + 1] == "4242:4243"
    assert f"{tmp_path}:/workspace" in argv and "PARISM_PROFILE=build" in argv


def test_run_line_refuses_a_relative_seccomp_path() -> None:
    out = cli("policy", "run-line", "--seccomp", "seccomp.json")
    assert out.returncode == 2 and "absolute path" in out.stderr


def test_package_data_holds_the_profile() -> None:
    from importlib import resources

    data = resources.files("parism").joinpath("policies/seccomp-bwrap.json").read_bytes()
    assert data == (ROOT / "policies" / "seccomp-bwrap.json").read_bytes()


def test_built_wheel_ships_the_profile(tmp_path: Path) -> None:
    """What a pip install gets: the wheel itself holds the same bytes (no source tree needed)."""
    import zipfile

    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                          "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("parism-*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert z.read("parism/policies/seccomp-bwrap.json") == (ROOT / "policies" / "seccomp-bwrap.json").read_bytes()


def test_run_line_notes_o_rx_only_when_uid_10001_cannot_enter(tmp_path: Path) -> None:
    """The note says what to fix only for a directory that needs it (issue 27: it was printed
    for a 755 directory too). The modes are set here and read back with os.stat."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for mode, needs in ((0o755, False), (0o705, False), (0o700, True), (0o751, True), (0o754, True)):
        ws.chmod(mode)
        assert os.stat(ws).st_mode & 0o777 == mode
        out = cli("policy", "run-line", "--workspace", str(ws), "--seccomp", "/etc/parism/seccomp.json")
        assert out.returncode == 0, out.stderr
        noted = [line for line in out.stderr.splitlines() if "uid 10001" in line]
        assert bool(noted) == needs, (oct(mode), out.stderr)
        if needs:
            assert f"chmod o+rx {ws}" in noted[0] and f"{mode:04o}" in noted[0]
    missing = cli("policy", "run-line", "--workspace", str(tmp_path / "nope"))
    assert "cannot be checked here" in missing.stderr  # doubt is said, not assumed away
