"""The labelled lines of GNU/toybox ``stat``, in each language the parser reads.

coreutils translates the whole default format (``  File: %N`` → `` Datei: %N``, French puts a
no-break space before each colon) and the file type (``regular file`` → ``reguläre Datei``); the
tables are coreutils 9.1's de/fr catalogues.  toybox prints the C labels with ``IO Blocks:``.
``file_type`` is always reported in English (what ``stat`` prints under ``LC_ALL=C``), so the
same file gives the same facts whatever the language of the capture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from parism.parsers.fs._common import MODE_RE

# label key → its text (toybox spells "IO Blocks", GNU "IO Block": a tuple lists both)
_LABELS: dict[str, dict[str, str | tuple[str, ...]]] = {
    "C": {"file": "File", "size": "Size", "blocks": "Blocks", "io_block": ("IO Block", "IO Blocks"),
          "device": "Device", "inode": "Inode", "links": "Links", "device_type": "Device type",
          "access": "Access", "uid": "Uid", "gid": "Gid", "modify": "Modify", "change": "Change",
          "birth": "Birth", "context": "Context"},
    "de": {"file": "Datei", "size": "Größe", "blocks": "Blöcke", "io_block": "EA Block", "device": "Gerät",
           "inode": "Inode", "links": "Verknüpfungen", "device_type": "Gerätetyp", "access": "Zugriff",
           "uid": "Uid", "gid": "Gid", "modify": "Modifiziert", "change": "Geändert", "birth": "Geburt",
           "context": "Kontext"},
    "fr": {"file": "Fichier", "size": "Taille", "blocks": "Blocs", "io_block": "Blocs d'E/S",
           "device": "Périphérique", "inode": "Inœud", "links": "Liens", "device_type": "Type de périph.",
           "access": "Accès", "uid": "UID", "gid": "GID", "modify": "Modif.", "change": "Changt",
           "birth": "Créé", "context": "Contexte"},
}
_TIMES = {"access": "accessed", "modify": "modified", "change": "changed", "birth": "birth"}
_FILE_TYPES: dict[str, dict[str, str]] = {
    "de": {"reguläre Datei": "regular file", "reguläre leere Datei": "regular empty file",
           "Verzeichnis": "directory", "symbolische Verknüpfung": "symbolic link", "FIFO": "fifo",
           "Socket": "socket", "zeichenorientierte Spezialdatei": "character special file",
           "blockorientierte Spezialdatei": "block special file", "merkwürdige Datei": "weird file"},
    "fr": {"fichier": "regular file", "fichier vide": "regular empty file", "répertoire": "directory",
           "lien symbolique": "symbolic link", "FIFO": "fifo", "socket": "socket",
           "fichier spécial de caractères": "character special file",
           "fichier spécial de blocs": "block special file", "fichier étrange": "weird file"},
}


@dataclass(frozen=True)
class StatLines:
    """The compiled line patterns of one language."""

    lang: str
    file: re.Pattern[str]
    size: re.Pattern[str]
    device: re.Pattern[str]
    access: re.Pattern[str]
    time: re.Pattern[str]
    context: re.Pattern[str]
    time_keys: dict[str, str]  # printed time label → accessed|modified|changed|birth

    def file_type(self, printed: str) -> str:
        return _FILE_TYPES.get(self.lang, {}).get(printed, printed)

    def toybox(self, size_line: str) -> bool:
        """toybox's size line (``IO Blocks:``, which holds %B rather than GNU's %o)."""
        return self.lang == "C" and "IO Blocks:" in size_line


def _spellings(label: str | tuple[str, ...]) -> tuple[str, ...]:
    return label if isinstance(label, tuple) else (label,)


@cache
def stat_lines(lang: str) -> StatLines:
    lab = _LABELS[lang]

    def field(key: str) -> str:  # a label and its colon (French: a no-break space before it)
        return "(?:" + "|".join(map(re.escape, _spellings(lab[key]))) + r")\s?:"

    time_keys = {s: name for key, name in _TIMES.items() for s in _spellings(lab[key])}
    return StatLines(
        lang=lang,
        file=re.compile(rf"\s*{field('file')} (.*)", re.DOTALL),
        size=re.compile(rf"\s*{field('size')}\s*(\d+)\s+{field('blocks')}\s*(\d+)\s+{field('io_block')}\s*(\d+)\s*(.*)"),
        device=re.compile(rf"\s*{field('device')}\s*(\S+)\s+{field('inode')}\s*(\d+)\s+{field('links')}\s*(\d+)"
                          rf"(?:\s+{field('device_type')}\s*(\S+))?\s*"),
        access=re.compile(rf"\s*{field('access')}\s*\((\d+)/({MODE_RE})\)\s+{field('uid')}\s*\(\s*(\d+)/\s*(.*?)\)"
                          rf"\s+{field('gid')}\s*\(\s*(\d+)/\s*(.*?)\)\s*"),
        time=re.compile(r"\s*(" + "|".join(map(re.escape, time_keys)) + r")\s?:\s*(.*)"),
        context=re.compile(rf"\s*{field('context')} (.*)"),
        time_keys=time_keys,
    )


LANGUAGES = tuple(_LABELS)
