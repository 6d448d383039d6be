"""run/sandbox/roots.py: an allowed root pinned at start is usable only while it is that directory.
Identities are checked against ``os.stat`` of the host; the engine-level attacks are in
tests/security/test_allowed_roots_fixed.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from parism.guard.paths import Roots
from parism.run.sandbox.roots import PinnedRoot, pin_roots


def test_an_unchanged_root_keeps_its_start_identity(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    pin = PinnedRoot(str(root))
    st = os.stat(root)
    assert pin.identity == (st.st_dev, st.st_ino) and pin.real == str(root.resolve())
    assert pin.changed() is None
    assert Roots([pin]).contains("a/b", str(root))


def test_each_kind_of_change_is_named_and_the_root_left_out(tmp_path: Path) -> None:
    cases = {}
    for name in ("symlink", "recreated", "moved", "parent", "deleted"):
        base = tmp_path / name
        (base / "p" / "root").mkdir(parents=True)
        cases[name] = (base, PinnedRoot(str(base / "p" / "root")))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    base, _ = cases["symlink"]
    (base / "p" / "root").rename(base / "p" / "old")
    (base / "p" / "root").symlink_to(elsewhere)
    base, _ = cases["recreated"]
    shutil.rmtree(base / "p" / "root")
    (base / "p" / "root").mkdir()
    base, _ = cases["moved"]
    (base / "p" / "root").rename(base / "p" / "moved")
    base, _ = cases["parent"]  # the parent moved and a symlink put back: the same inode, by a symlink
    (base / "p").rename(base / "q")
    (base / "p").symlink_to(base / "q")
    base, _ = cases["deleted"]
    shutil.rmtree(base / "p" / "root")

    said = {name: pin.changed() for name, (_b, pin) in cases.items()}
    assert "symbolic link" in said["symlink"], said
    assert "deleted" in said["recreated"], said  # the pinned inode is gone (its link count is 0)
    assert "deleted" in said["moved"] or "cannot be checked" in said["moved"], said
    assert "above it" in said["parent"], said
    assert "deleted" in said["deleted"], said
    roots = Roots([pin for _b, pin in cases.values()])
    assert roots.real == [] and set(roots.changed) == {pin.given for _b, pin in cases.values()}
    base, pin = cases["symlink"]
    assert not roots.contains(str(base / "p" / "root" / "x"), "/")
    assert "restart the server" in (roots.changed_holding(str(base / "p" / "root" / "x"), "/") or "")


def test_a_root_missing_at_start_is_never_usable(tmp_path: Path) -> None:
    later = tmp_path / "later"
    (pin,) = pin_roots([str(later)])
    later.mkdir()  # created after start
    assert pin.identity is None and "not an existing directory" in (pin.changed() or "")
    assert not Roots([pin]).contains(str(later), "/")
