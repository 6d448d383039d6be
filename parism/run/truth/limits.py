"""What host-side correction cannot repair: owners the command itself compared or formatted.

Under ``host_correction`` the kernel shows the sandbox every other owner as the overflow id,
so ``find -user root`` matches nothing and ``ps -u root`` lists nothing — empty answers that
look true — and ``stat -c %U`` or ``tree -u`` print ``nobody`` in text no parser reads back.
Such calls are refused with a reason and a hint instead of being answered wrongly."""

from __future__ import annotations

import os

# flags whose meaning depends on the owners the command sees (selection or owner columns)
OWNER_FLAGS: dict[str, tuple[str, ...]] = {
    "find": ("-user", "-group", "-uid", "-gid", "-nouser", "-nogroup", "-ls", "-fls"),
    "ps": ("-u", "-U", "--user", "-g", "-G", "--group", "--User", "--Group"),
    "lsof": ("-u",),
    "tree": ("-u", "-g"),
}
# format flags, refused when the format prints an owner (%u %U %g %G)
FORMAT_FLAGS: dict[str, tuple[str, ...]] = {"find": ("-printf", "-fprintf"),
                                            "stat": ("-c", "--format", "--printf")}
OWNER_DIRECTIVES = ("%u", "%U", "%g", "%G")
HINTS = {
    "find": "list the files with `ls -ln` or `stat` (their owners are corrected from the host) and select there",
    "ps": "run `ps aux` or `ps -eo user,pid,args` (process users are corrected from the host) and select there",
    "lsof": "run `lsof` without -u and select by the corrected user column",
    "tree": "use `ls -lR` (owners are corrected from the host)",
    "stat": "use `stat` without -c (its uid/gid fields are corrected from the host)",
}


def uncorrectable(cmd: str, args: list[str]) -> str | None:
    """Why this call cannot be answered truthfully under host correction, or None."""
    name = os.path.basename(cmd)
    for i, arg in enumerate(args):
        if arg == "--":
            break
        flag = next((f for f in OWNER_FLAGS.get(name, ()) if _is(arg, f, name)), None)
        if flag:
            return f"{name} {flag} compares or prints owners inside the sandbox"
        fmt = next((f for f in FORMAT_FLAGS.get(name, ()) if _is(arg, f, name)), None)
        if fmt:
            value = arg.split("=", 1)[1] if "=" in arg else (args[i + 1] if i + 1 < len(args) and arg == fmt
                                                             else arg[len(fmt):])
            if any(d in value for d in OWNER_DIRECTIVES):
                return f"{name} {fmt} prints owners ({', '.join(d for d in OWNER_DIRECTIVES if d in value)})"
    return None


def _is(arg: str, flag: str, cmd: str) -> bool:
    if arg == flag or arg.startswith(flag + "="):
        return True
    # attached value of a short option (ps -uroot, stat -c%U); find's options are whole words
    return cmd != "find" and len(flag) == 2 and arg.startswith(flag) and not arg.startswith("--")


def hint(cmd: str) -> str:
    base = HINTS.get(os.path.basename(cmd), "use a form whose owners are corrected (ls -ln, stat, ps aux)")
    return base + "; a root server maps every id truthfully (describe.sandbox.identity.mode identity_map)"
