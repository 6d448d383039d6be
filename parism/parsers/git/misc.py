"""Small ``git`` subcommands whose output is one value per line.

Schemas::

    rev-parse   {values: [str]}                  one line per requested value, in order
    ls-files    {files: [str]} | {files: [{mode, object, stage, path}]} (-s); quoted?: true
    remote      {remotes: [{name, fetch?: url, push?: url}]}  (-v; plain: name only)
    tag         {tags: [{name, message?}]}       (-n: first annotation line)
    describe    {description, tag?, distance?, hash?, dirty?: true}
    shortlog    {authors: [{count, name, email?}]}  (-s required; -n, -e)
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.git._quote import unquote
from parism.parsers.git.log import person
from parism.parsers.text._common import split_lines, split_records


def _lines(text: str) -> list[str]:
    return [ln for ln in split_lines(text)[0] if ln]


class RevParse(BaseModel):
    values: list[str]


def parse_rev_parse(text: str, pin: ParseInput) -> RevParse:
    return RevParse(values=_lines(text))


class StagedFile(BaseModel):
    mode: str
    object: str
    stage: int
    path: str


class LsFiles(BaseModel):
    files: list[str] | list[StagedFile]
    quoted: bool | None = None


_STAGE = re.compile(r"^(\d{6}) ([0-9a-f]{40,64}) (\d)\t(.*)$", re.S)


def parse_ls_files(text: str, pin: ParseInput) -> LsFiles:
    nul = pin.tokens.has("-z")
    recs = [r for r in split_records(text)] if nul else _lines(text)
    any_quoted = False
    if pin.tokens.has("-s", "--stage"):
        staged: list[StagedFile] = []
        for rec in recs:
            m = _STAGE.match(rec)
            if not m:
                raise Unrecognized(f"git ls-files -s: unexpected line {rec[:80]!r}")
            path, q = (m.group(4), False) if nul else unquote(m.group(4))
            any_quoted |= q
            staged.append(StagedFile(mode=m.group(1), object=m.group(2), stage=int(m.group(3)), path=path))
        return LsFiles(files=staged, quoted=any_quoted or None)
    paths: list[str] = []
    for rec in recs:
        path, q = (rec, False) if nul else unquote(rec)
        any_quoted |= q
        paths.append(path)
    return LsFiles(files=paths, quoted=any_quoted or None)


class Remote(BaseModel):
    name: str
    fetch: str | None = None
    push: str | None = None


class Remotes(BaseModel):
    remotes: list[Remote]


_REMOTE_V = re.compile(r"^(\S+)\t(.*) \((fetch|push)\)$")


def parse_remote(text: str, pin: ParseInput) -> Remotes:
    verbose = pin.tokens.has("-v", "--verbose")
    out: dict[str, Remote] = {}
    for line in _lines(text):
        if not verbose:
            if " " in line or "\t" in line:
                raise Unrecognized(f"git remote: unexpected line {line[:80]!r}")
            out.setdefault(line, Remote(name=line))
            continue
        m = _REMOTE_V.match(line)
        if not m:
            raise Unrecognized(f"git remote -v: expected 'name<TAB>url (fetch|push)', got {line[:80]!r}")
        setattr(out.setdefault(m.group(1), Remote(name=m.group(1))), m.group(3), m.group(2))
    return Remotes(remotes=list(out.values()))


class Tag(BaseModel):
    name: str
    message: str | None = None


class Tags(BaseModel):
    tags: list[Tag]


def parse_tag(text: str, pin: ParseInput) -> Tags:
    annotated = any(t.name == "-n" for t in pin.tokens.flags)
    tags: list[Tag] = []
    for line in split_lines(text)[0]:
        if not line:
            continue
        if annotated and line.startswith("    ") and tags:
            tags[-1].message = (tags[-1].message or "") + "\n" + line.strip()  # -nN continuation
            continue
        name, _, msg = line.partition(" ") if annotated else (line, "", "")
        if not name or (not annotated and " " in line):
            raise Unrecognized(f"git tag: unexpected line {line[:80]!r}")
        tags.append(Tag(name=name, message=msg.strip() or None))
    return Tags(tags=tags)


class Describe(BaseModel):
    description: str
    tag: str | None = None
    distance: int | None = None
    hash: str | None = None
    dirty: bool | None = None


_DESCRIBE = re.compile(r"^(?:(.+)-(\d+)-g([0-9a-f]{4,64})|([0-9a-f]{4,64})|(.+?))(-dirty|-broken)?$")


def parse_describe(text: str, pin: ParseInput) -> Describe:
    lines = _lines(text)
    if len(lines) != 1 or " " in lines[0]:
        raise Unrecognized("git describe: expected one description line")
    d = lines[0]
    m = _DESCRIBE.match(d)
    assert m is not None  # the last alternative matches any non-empty line
    out = Describe(description=d, dirty=True if m.group(6) else None)
    always = pin.tokens.has("--always")
    if m.group(1):
        out.tag, out.distance, out.hash = m.group(1), int(m.group(2)), m.group(3)
    elif m.group(4) and always and not pin.tokens.has("--tags", "--all"):
        out.hash = m.group(4)  # --always fell back to an abbreviated hash
    else:
        out.tag = m.group(4) or m.group(5)
    return out


class Author(BaseModel):
    count: int
    name: str
    email: str | None = None


class Shortlog(BaseModel):
    authors: list[Author]


def parse_shortlog(text: str, pin: ParseInput) -> Shortlog:
    """``<count><TAB><name>[ <email>]`` per author (``-s``; ``-e`` adds the email)."""
    authors: list[Author] = []
    emails = pin.tokens.has("-e", "--email")
    for line in _lines(text):
        count, tab, who = line.strip(" ").partition("\t")
        if not tab or not count.isdigit():
            raise Unrecognized(f"git shortlog -s: unexpected line {line[:80]!r}")
        name, email = person(who) if emails else (who, None)
        authors.append(Author(count=int(count), name=name or "", email=email))
    return Shortlog(authors=authors)


_REV_FLAGS = ("--show-toplevel --show-prefix --show-cdup --git-dir --git-common-dir --absolute-git-dir "
              "--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository "
              "--short --verify -q --quiet --symbolic-full-name --show-superproject-working-tree").split()
_LS_FLAGS = ("-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u --unmerged "
             "-k --killed --exclude-standard -z --full-name --directory --no-empty-directory --deduplicate "
             "--recurse-submodules").split()

SUBCOMMANDS: dict[str, Parser] = {
    "rev-parse": Parser(
        id="git-rev-parse",
        contract=Contract(flags={f: "bool" for f in _REV_FLAGS} | {"--abbrev-ref": "attached",
                                                                   "--short": "attached"}),
        parse=parse_rev_parse, schema=RevParse, rows_key="values",
        examples=(("--show-toplevel",), ("--abbrev-ref", "HEAD"))),
    "ls-files": Parser(
        id="git-ls-files",
        contract=Contract(flags={f: "bool" for f in _LS_FLAGS} | {"-x": "data", "--exclude": "data"}),
        parse=parse_ls_files, schema=LsFiles, rows_key="files",
        examples=((), ("-z",), ("--others", "--exclude-standard"))),
    "remote": Parser(
        id="git-remote",
        contract=Contract(flags={"-v": "bool", "--verbose": "bool"}, max_positionals=0),
        parse=parse_remote, schema=Remotes, rows_key="remotes", row_fields=("name", "fetch", "push"),
        examples=(("-v",),)),
    "tag": Parser(
        id="git-tag",
        contract=Contract(flags={"-l": "bool", "--list": "bool", "-n": "attached", "--sort": "value",
                                 "--contains": "attached", "--no-contains": "attached",
                                 "--points-at": "attached", "--merged": "attached", "--no-merged": "attached",
                                 "--no-column": "bool", "-i": "bool", "--ignore-case": "bool",
                                 "--color": "attached"},
                          values={"-n": r"\d*", "--color": "never|"},
                          supports=lambda t: None if not t.positionals or t.has("-l", "--list")
                          else "creating a tag prints nothing to parse; use --list"),
        parse=parse_tag, schema=Tags, rows_key="tags", row_fields=("name", "message"),
        examples=((), ("-n", "--sort=-creatordate"))),
    "describe": Parser(
        id="git-describe",
        contract=Contract(flags={f: "bool" for f in ("--tags", "--all", "--always", "--long", "--first-parent",
                                                     "--exact-match")}
                          | {"--dirty": "attached", "--abbrev": "attached", "--match": "data",
                             "--exclude": "data", "--candidates": "attached"},
                          values={"--dirty": "|-dirty"}, max_positionals=1),
        parse=parse_describe, schema=Describe,
        examples=(("--tags",), ("--always", "--dirty"))),
    "shortlog": Parser(
        id="git-shortlog",
        contract=Contract(flags={f: "bool" for f in ("-s", "--summary", "-n", "--numbered", "-e", "--email",
                                                     "--all", "--no-merges", "--merges", "-c", "--committer")}
                          | {"--since": "value", "--until": "value", "--author": "data"},
                          required=(("-s", "--summary"),), min_positionals=1,
                          hint=lambda args: [*(["-s"] if "-s" not in args else []), *args,
                                             *([] if any(not a.startswith("-") for a in args) else ["HEAD"])]),
        parse=parse_shortlog, schema=Shortlog, rows_key="authors", row_fields=("count", "name", "email"),
        examples=(("-sn", "HEAD"), ("-sne", "HEAD"))),
}
