"""Package-manager parsers. npm/pnpm/yarn/cargo fixtures were captured on this machine from tiny
projects whose dependency graph we built ourselves (demo-two: is-even 1.0.0 → is-odd 0.1.2 →
is-number 3.0.0 → kind-of 3.2.2 → is-buffer 1.1.6; is-number 6.0.0; is-odd 3.0.1 → is-number
6.0.0; left-pad installed with --no-save, hence extraneous; app → macros (proc-macro), util →
macros). apt is checked live against dpkg-query. brew cannot run here: its inputs follow
Homebrew's documented output."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from parism.parsers import registry

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "linux"
ENV = {"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}
DEMO_TWO = [("is-even", "1.0.0", 1), ("is-odd", "0.1.2", 2), ("is-number", "3.0.0", 3), ("kind-of", "3.2.2", 4),
            ("is-buffer", "1.1.6", 5), ("is-number", "6.0.0", 1), ("is-odd", "3.0.1", 1), ("is-number", "6.0.0", 2),
            ("left-pad", "1.3.0", 1)]


def ok(cmd, args, text, os="linux"):
    out = registry.parse(cmd, args, text, os)
    assert out.parse_error is None, out.parse_error
    return out.parsed


@pytest.mark.parametrize("fixture", ["ls-all-unicode.out", "ls-all-ascii.out"])
def test_npm_ls_unicode_and_ascii_trees(fixture):
    """§22 #30: parent rows (├─┬) were dropped, suffixes leaked into names, ASCII trees failed."""
    p = ok("npm", ["ls", "--all"], (FIX / "npm" / fixture).read_text())
    assert p["root"]["name"] == "demo-two" and p["root"]["version"] == "0.1.0"
    assert [(d["name"], d["version"], d["depth"]) for d in p["dependencies"]] == DEMO_TWO
    assert p["dependencies"][7].get("deduped") is True
    assert p["dependencies"][8]["problem"] == "extraneous" and p["dependencies"][8]["name"] == "left-pad"


def test_npm_unmet_and_scoped_names():
    text = "x@1.0.0 /p\n├── @scope/pkg@2.1.0\n└── UNMET DEPENDENCY left-pad@^1.3.0\n"
    deps = ok("npm", ["ls"], text)["dependencies"]
    assert deps[0] == {"depth": 1, "name": "@scope/pkg", "version": "2.1.0"}
    assert deps[1] == {"name": "left-pad", "version": "^1.3.0", "depth": 1, "problem": "missing"}


def test_npm_outdated_table():
    rows = ok("npm", ["outdated"], (FIX / "npm" / "outdated.out").read_text())["packages"]
    assert rows == [{"package": "is-number", "current": "6.0.0", "wanted": "6.0.0", "latest": "7.0.0",
                     "location": "node_modules/is-number", "depended_by": "npmproj3"}]


def test_npm_json_passes_through():
    assert ok("npm", ["ls", "--json"], '{"name": "x", "dependencies": {}}') == {"name": "x", "dependencies": {}}


def test_pnpm_ls_sections_and_depths():
    p = ok("pnpm", ["ls", "--depth", "2"], (FIX / "pnpm" / "ls-depth2.out").read_text())
    assert [(d["name"], d["version"], d["depth"]) for d in p["dependencies"]] == [
        ("is-even", "1.0.0", 1), ("is-odd", "0.1.2", 2), ("is-number", "3.0.0", 3), ("is-number", "6.0.0", 1),
        ("is-odd", "3.0.1", 1), ("is-number", "6.0.0", 2)]
    assert {d["section"] for d in p["dependencies"]} == {"dependencies"}


def test_yarn_list_marks_ranges():
    deps = ok("yarn", ["list"], (FIX / "yarn" / "list.out").read_text())["dependencies"]
    assert deps[0] == {"name": "is-buffer", "version": "1.1.6", "depth": 1}
    assert {"name": "kind-of", "version": "^3.0.2", "depth": 3, "range": True} in deps
    assert len(deps) == 12


@pytest.mark.parametrize("fixture", ["tree.out", "tree-ascii.out"])
def test_cargo_tree_flags_are_not_paths(fixture):
    """§22 #48: (proc-macro)/(*) were stored as path; the version kept its 'v'."""
    p = ok("cargo", ["tree"], (FIX / "cargo" / fixture).read_text())
    assert p["root"] == {"name": "app", "version": "0.1.0", "source": "/tmp/ctree/app"}
    assert p["crates"][0] == {"name": "macros", "version": "0.1.0", "proc_macro": True,
                              "source": "/tmp/ctree/macros", "depth": 1}
    assert [(c["name"], c["depth"]) for c in p["crates"]] == [("macros", 1), ("util", 1), ("macros", 2)]


def test_cargo_duplicate_marker():
    text = "a v1.0.0\n└── b v2.0.0\n    └── c v0.3.1 (*)\n"
    assert ok("cargo", ["tree"], text)["crates"][1] == {"name": "c", "version": "0.3.1", "duplicate": True, "depth": 2}


def _dpkg(name: str) -> tuple[str, str]:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Version} ${Architecture}", name], capture_output=True,
                         text=True, check=True).stdout
    v, a = out.split()
    return v, a


def test_apt_list_live_against_dpkg():
    """§22 #47: the name used to keep '/suite'."""
    out = subprocess.run(["apt", "list", "--installed", "bubblewrap", "git"], capture_output=True, text=True,
                         env=ENV).stdout
    pkgs = {p["name"]: p for p in ok("apt", ["list", "--installed", "bubblewrap", "git"], out)["packages"]}
    for name in ("bubblewrap", "git"):
        version, arch = _dpkg(name)
        assert pkgs[name]["version"] == version and pkgs[name]["arch"] == arch
        assert "installed" in pkgs[name]["status"] and "/" not in pkgs[name]["name"]


def test_apt_search_descriptions_and_policy_live():
    out = subprocess.run(["apt", "search", "--names-only", "^bubblewrap$"], capture_output=True, text=True,
                         env=ENV).stdout
    pkg = ok("apt", ["search", "--names-only", "^bubblewrap$"], out)["packages"][0]
    assert pkg["name"] == "bubblewrap" and pkg["description"]
    pol = subprocess.run(["apt", "policy", "bubblewrap"], capture_output=True, text=True, env=ENV).stdout
    p = ok("apt", ["policy", "bubblewrap"], pol)["packages"][0]
    assert p["installed"] == _dpkg("bubblewrap")[0]
    assert any(v["installed"] and v["version"] == p["installed"] for v in p["versions"])


def test_apt_plain_list_without_status_and_korean_header():
    text = "나열 중... 완료\nzsh/stable 5.9-4+b5 amd64\n"
    assert ok("apt", ["list"], text)["packages"] == [
        {"name": "zsh", "suite": "stable", "suites": ["stable"], "version": "5.9-4+b5", "arch": "amd64", "status": []}]


def test_brew_documented_forms():
    assert ok("brew", ["list", "--versions"], "git 2.43.0 2.44.0\n", "macos")["packages"] == [
        {"name": "git", "versions": ["2.43.0", "2.44.0"]}]
    rows = ok("brew", ["outdated", "--verbose"], "node (20.1.0, 21.0.0) < 21.6.1 [pinned at 20.1.0]\n", "macos")
    assert rows["packages"][0] == {"name": "node", "installed": ["20.1.0", "21.0.0"], "current": "21.6.1",
                                   "pinned": "20.1.0"}
    tree = ok("brew", ["deps", "--tree"], "git\n├── gettext\n│   └── libunistring\n└── pcre2\n", "macos")
    assert tree["dependencies"] == [{"name": "gettext", "depth": 1}, {"name": "libunistring", "depth": 2},
                                    {"name": "pcre2", "depth": 1}]
