"""Fold pure-Python code into one zip per location, for a smaller image (issue #14).

    python3 zip_python.py stdlib            the standard library → /usr/lib/pythonXY.zip
    python3 zip_python.py site DIR          pure packages of site-packages DIR → DIR/parism-deps.zip

Why a zip: Python imports from a zip on ``sys.path`` natively (``/usr/lib/pythonXY.zip`` is on
the default path already — it is how the Windows embeddable distribution ships its stdlib), and
a deflated zip of sources + bytecode is about a quarter of the unpacked ``.py`` + ``__pycache__``.
Each module is stored with its source (tracebacks, ``inspect.getsource`` keep working) and an
*unchecked-hash* pyc compiled by this interpreter, so nothing is compiled at start-up on the
read-only root. Kept on disk: extension modules and any package holding one, namespace packages,
``*.dist-info`` (importlib.metadata), packages listed in ``KEEP`` (they read files next to their
modules), ``os.py`` (the landmark by which the interpreter finds its prefix).
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
import zipfile

KEEP = {"parism", "cffi", "pycparser", "_distutils_hack", "pip", "setuptools", "pkg_resources"}
SKIP_DIRS = {"lib-dynload", "site-packages", "dist-packages", "__pycache__"}


def pyc(source: bytes, filename: str) -> bytes:
    code = compile(source, filename, "exec", dont_inherit=True)
    flags = (0b01).to_bytes(4, "little")  # hash-based, unchecked (PEP 552)
    return importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code)


def add_tree(z: zipfile.ZipFile, zip_path: str, base: str, top: str) -> list[str]:
    """Add every .py below ``base/top`` (``top`` may be a file); returns the files added."""
    added = []
    start = os.path.join(base, top)
    walk = [(os.path.dirname(start), [], [top])] if os.path.isfile(start) else os.walk(start)
    for dp, dns, fns in walk:
        dns[:] = sorted(d for d in dns if d not in SKIP_DIRS and not d.startswith("config-"))
        for f in sorted(fns):
            if not f.endswith(".py"):
                continue
            src = os.path.join(dp, f)
            arc = os.path.relpath(src, base)
            with open(src, "rb") as fh:
                data = fh.read()
            z.writestr(arc, data)
            z.writestr(arc[:-3] + ".pyc", pyc(data, os.path.join(zip_path, arc)))
            added.append(src)
    return added


def remove(files: list[str], keep: set[str]) -> None:
    """Delete the zipped sources, their cached bytecode, and directories left empty."""
    dirs = set()
    for src in files:
        if src not in keep:
            os.unlink(src)
        d = os.path.dirname(src)
        stem = os.path.basename(src)[:-3]
        cache = os.path.join(d, "__pycache__")
        if os.path.isdir(cache):
            for f in os.listdir(cache):
                if f.split(".")[0] == stem:
                    os.unlink(os.path.join(cache, f))
        dirs.add(cache)
        dirs.add(d)
    for d in sorted(dirs, key=len, reverse=True):  # deepest first
        if os.path.isdir(d) and not os.listdir(d):
            os.rmdir(d)


def stdlib() -> None:
    root = os.path.dirname(os.__file__)  # os is frozen in 3.11: its __file__ names the stdlib dir
    target = os.path.join(os.path.dirname(root), f"python{sys.version_info[0]}{sys.version_info[1]}.zip")
    if os.path.exists(target) or not os.path.isfile(os.path.join(root, "os.py")):
        print(f"zip_python: {target} exists already (or {root} is no unpacked stdlib); nothing done")
        return
    with zipfile.ZipFile(target + ".tmp", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        files = add_tree(z, target, root, "")
    os.replace(target + ".tmp", target)
    remove(files, keep={os.path.join(root, "os.py")})
    print(f"zip_python: {len(files)} stdlib modules → {target} ({os.path.getsize(target)} bytes)")


def _pure(path: str) -> bool:
    if os.path.isfile(path):
        return path.endswith(".py")
    if not os.path.isfile(os.path.join(path, "__init__.py")):
        return False  # namespace package: left on disk
    return not any(f.endswith((".so", ".pyd")) for _, _, fns in os.walk(path) for f in fns)


def site(site_dir: str) -> None:
    target = os.path.join(site_dir, "parism-deps.zip")
    tops = sorted(e for e in os.listdir(site_dir)
                  if e.split(".")[0] not in KEEP and not e.endswith((".dist-info", ".pth", ".zip"))
                  and e != "__pycache__" and _pure(os.path.join(site_dir, e)))
    files: list[str] = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for top in tops:
            files += add_tree(z, target, site_dir, top)
    remove(files, keep=set())
    with open(os.path.join(site_dir, "parism-deps.pth"), "w") as fh:
        fh.write(target + "\n")
    print(f"zip_python: {len(tops)} packages ({len(files)} modules) → {target} ({os.path.getsize(target)} bytes)")


if __name__ == "__main__":
    if sys.argv[1:] == ["stdlib"]:
        stdlib()
    elif len(sys.argv) == 3 and sys.argv[1] == "site":
        site(sys.argv[2])
    else:
        sys.exit("usage: zip_python.py stdlib | site DIR")
