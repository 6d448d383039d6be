"""The appliance's facts, served from the installed package (no source tree needed).

``seccomp_profile()`` is ``policies/seccomp-bwrap.json`` itself, shipped as package data, and
``run_line()`` is the one place the hardened ``docker run`` line is spelled: ``parism policy``
prints both, ``docs/container.md`` shows the same line, and the e2e tests start the image with
it, so the documented line is the tested line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

DEFAULT_IMAGE = "parism:dev"
IMAGE_UID = 10001  # the image's user `parism` (Containerfile)
SECCOMP_PLACEHOLDER = "/abs/path/parism-seccomp.json"


def seccomp_profile() -> str:
    """The seccomp profile the container must run under (Docker's default + bwrap's syscalls)."""
    return resources.files("parism").joinpath("policies/seccomp-bwrap.json").read_text(encoding="utf-8")


@dataclass(frozen=True)
class RunLine:
    """``docker run`` arguments (without the leading ``docker``) and what the caller must know."""

    argv: list[str]
    notes: list[str]


def closed_to_image_user(path: str) -> str | None:
    """Why uid :data:`IMAGE_UID` could not list and enter ``path`` (the bits that apply to it:
    owner's, group's or others'), or None when it can. A path that cannot be stat'ed (not there
    yet, the placeholder) is reported too: what it will need is said rather than assumed."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"it cannot be checked here: {exc.strerror or exc}"
    if st.st_uid == IMAGE_UID:
        bits, whose = (st.st_mode >> 6) & 0o7, "owner"
    elif st.st_gid == IMAGE_UID:
        bits, whose = (st.st_mode >> 3) & 0o7, "group"
    else:
        bits, whose = st.st_mode & 0o7, "others"
    if bits & 0o5 == 0o5:
        return None
    return f"its mode is {st.st_mode & 0o7777:04o}, {whose} lack {'r' if not bits & 0o4 else ''}{'x' if not bits & 0o1 else ''}"


def run_line(*, image: str = DEFAULT_IMAGE, workspace: str | None = None, profile: str = "readonly",
             seccomp: str = SECCOMP_PLACEHOLDER, server_args: tuple[str, ...] = ()) -> RunLine:
    """The hardened line of docs/container.md for ``profile`` (``readonly`` or ``build``).

    ``readonly`` mounts the workspace read-only and runs as the image's uid 10001; ``build``
    mounts it read-write and runs as the workspace's owner (never root: bwrap then fails under
    ``--cap-drop=ALL``, and root in a sandbox would be real root).
    """
    if profile not in ("readonly", "build"):
        raise ValueError(f"profile must be 'readonly' or 'build', not {profile!r}")
    ws = os.path.abspath(workspace) if workspace else "/abs/project"
    notes: list[str] = []
    if profile == "build":
        try:
            st = os.stat(ws)
            user = f"{st.st_uid}:{st.st_gid}"
            if st.st_uid == 0:
                notes.append(f"{ws} is owned by root: the build profile needs a non-root owner (chown it, or pick another --user)")
        except OSError:
            user = "$(id -u):$(id -g)"
        mount, extra = f"{ws}:/workspace", ["-e", "PARISM_PROFILE=build"]
    else:
        user, mount, extra = f"{IMAGE_UID}:{IMAGE_UID}", f"{ws}:/workspace:ro", []
        mode = closed_to_image_user(ws)
        if mode is not None:
            notes.append(f"{ws} must be readable and enterable by uid {IMAGE_UID} ({mode}: chmod o+rx {ws})")
    if seccomp == SECCOMP_PLACEHOLDER:
        notes.append("save the profile first: parism policy seccomp > ~/.config/parism-seccomp.json, "
                     "and give its absolute path with --seccomp")
    argv = [
        "run", "-i", "--rm", "--init",
        "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=64m",
        "--cap-drop=ALL", "--security-opt", "no-new-privileges",
        "--security-opt", f"seccomp={seccomp}",
        "--security-opt", "systempaths=unconfined",
        "--network", "none",
        "--pids-limit", "256", "--memory", "1g", "--memory-swap", "1g",
        "-v", mount, "-w", "/workspace", *extra,
        "--user", user,
        image, *server_args,
    ]
    return RunLine(argv=argv, notes=notes)
