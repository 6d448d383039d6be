"""Kept so parser packs written against ``from parism.types import ParserPack`` keep working.

The types live in :mod:`parism.packs.types` (docs/parser-packs.md); this module only re-exports them.
"""

from parism.packs.types import Fixture, PackContext, ParserPack, UnrecognizedOutputError

__all__ = ["Fixture", "PackContext", "ParserPack", "UnrecognizedOutputError"]
