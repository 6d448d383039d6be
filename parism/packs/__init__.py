"""Parser packs: the table the registry consults first, one bwrap-isolated worker per pack, fixtures (docs/parser-packs.md)."""
