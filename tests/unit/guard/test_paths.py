"""Path resolution with real directories and symlinks (parism/guard/paths.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parism.guard.paths import SYSTEM_DIRS, Roots, expand, is_system_ancestor, is_within, looks_like_path, real


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "a.py").write_text("x\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s\n")
    os.symlink(tmp_path / "outside", tmp_path / "proj" / "escape")
    os.symlink(tmp_path / "proj" / "src", tmp_path / "proj" / "inner")
    os.symlink(tmp_path / "proj", tmp_path / "alias")  # the project reached through a symlink
    os.symlink(tmp_path / "outside" / "missing", tmp_path / "proj" / "dangling")
    return tmp_path


def test_real_resolves_missing_paths_through_their_nearest_parent(tree: Path) -> None:
    proj = tree / "proj"
    assert real(str(proj / "escape" / "new" / "file")) == str(tree / "outside" / "new" / "file")
    assert real(str(proj / "src" / "not-yet.txt")) == str(proj / "src" / "not-yet.txt")
    assert real(str(proj / "dangling" / "x")) == str(tree / "outside" / "missing" / "x")


def test_roots_check_lexically_and_through_symlinks(tree: Path) -> None:
    proj = str(tree / "proj")
    roots = Roots([proj])
    assert roots.contains("src/a.py", proj)
    assert roots.contains("inner/a.py", proj)  # symlink that stays inside
    assert roots.contains("src/new-file", proj)  # does not exist yet
    assert not roots.contains("escape/secret", proj)  # symlink that points outside
    assert not roots.contains("escape", proj)
    assert not roots.contains("dangling", proj)
    assert not roots.contains("../outside/secret", proj)
    assert not roots.contains("src/../../outside", proj)
    assert not roots.contains(str(tree / "outside"), proj)


def test_project_reached_through_a_symlinked_root(tree: Path) -> None:
    roots = Roots([str(tree / "alias")])
    assert roots.contains(str(tree / "proj" / "src"), "/")  # real path of the allowed root
    assert roots.contains("src/a.py", str(tree / "alias"))
    assert not roots.contains("escape/secret", str(tree / "alias"))


def test_prefix_is_component_wise(tmp_path: Path) -> None:
    (tmp_path / "user").mkdir()
    (tmp_path / "user2").mkdir()
    roots = Roots([str(tmp_path / "user")])
    assert not roots.contains(str(tmp_path / "user2"), "/")
    assert is_within("/home/user/x", "/home/user")
    assert not is_within("/home/user2", "/home/user")


def test_tilde_is_expanded(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree / "proj"))
    assert expand("~/src", "/") == str(tree / "proj" / "src")
    assert Roots([str(tree / "proj")]).contains("~/src/a.py", "/tmp")


@pytest.mark.parametrize(("path", "refused"), [
    ("/", True), ("/usr", True), ("/etc", True), ("/var", True), ("/usr/lib", True),
    ("/home", False), ("/tmp/x", False), ("/usr/local/src/proj", False),
])
def test_system_ancestors(path: str, refused: bool) -> None:
    assert is_system_ancestor(path) is refused


def test_looks_like_path(tree: Path) -> None:
    proj = str(tree / "proj")
    assert looks_like_path("/x", proj) and looks_like_path("./x", proj) and looks_like_path("~/x", proj)
    assert looks_like_path("escape", proj)  # exists (a symlink)
    assert looks_like_path("dangling", proj)  # dangling symlinks count
    assert not looks_like_path("HEAD", proj)
    assert not looks_like_path("a\0b", proj)


_PARTS = ["", "/", "//", "a", "ab", "a b", ".", "..", "/.", "/a", "/ab", "/./", "/a/"]


def _defined_within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def test_is_within_agrees_with_commonpath_on_every_path_shape() -> None:
    # The prefix test is only a shortcut: on any spelling (doubled slashes, ".", "..", trailing
    # slash, relative) it must give exactly the commonpath answer.
    shapes = sorted({a + b for a in _PARTS for b in _PARTS} | {"/a/b/c", "/a/b", "/ab/c", "/a/../b"})
    for path in shapes:
        for root in shapes:
            assert is_within(path, root) is _defined_within(path, root), (path, root)


def test_system_ancestor_agrees_with_its_definition() -> None:
    shapes = {a + b for a in _PARTS for b in _PARTS} | {"/usr", "/usr/", "/var/", "/usr/lib/x", "/va", "/usr//lib"}
    shapes |= {os.path.dirname(d) for d in SYSTEM_DIRS} | set(SYSTEM_DIRS)
    for path in sorted(shapes):
        defined = path == "/" or any(_defined_within(d, path) for d in SYSTEM_DIRS)
        assert is_system_ancestor(path) is defined, path


def test_roots_resolve_again_on_the_next_check(tree: Path) -> None:
    # Within one check a path is resolved once; a symlink swapped between checks is seen.
    proj = tree / "proj"
    os.symlink(proj / "src", proj / "moving")
    before = Roots([str(proj)])
    assert before.contains("moving/a.py", str(proj))
    os.unlink(proj / "moving")
    os.symlink(tree / "outside", proj / "moving")
    assert not Roots([str(proj)]).contains("moving/secret", str(proj))
