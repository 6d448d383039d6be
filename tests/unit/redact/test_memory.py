"""The memory of masked values (``parism.output.redact.memory``): every 12+ slice found, hashed, bounded."""

from __future__ import annotations

import gc
import random
import string

from parism.output.redact import Redactor
from parism.output.redact.memory import MAX_VALUES, MAX_WINDOWS, WINDOW, SecretMemory

SECRET = "Zq8vN3xR7tLp2mKw9sYb4HcJ"


def test_every_slice_of_twelve_or_more_is_found_and_nothing_shorter() -> None:
    mem = SecretMemory()
    mem.remember(SECRET)
    for i in range(len(SECRET)):
        for j in range(i + 1, len(SECRET) + 1):
            text = f"x {SECRET[i:j]} y"
            assert mem.spans(text) == ([(2, 2 + j - i)] if j - i >= WINDOW else []), (i, j)


def test_each_line_is_remembered_on_its_own_and_armour_is_not() -> None:
    mem = SecretMemory()
    lines = ["MIIEpAIBAAKCAQEA1x2y3z4w5v6u7t8s", "9r0q1p2o3n4m5l6k7j8i9h0g1f2e3d4c"]
    mem.remember("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----")
    mem.remember('"-----BEGIN PRIVATE KEY-----\\nAbCdEfGhIjKlMnOpQrSt\\n-----END PRIVATE KEY-----\\n"')
    assert len(mem) == 3  # two body lines and the JSON-escaped one; no armour, no quotes
    text = f"grep: {lines[1][3:20]}\n-----BEGIN RSA PRIVATE KEY-----\nAbCdEfGhIjKlMnOp"
    assert [text[a:b] for a, b in mem.spans(text)] == [lines[1][3:20], "AbCdEfGhIjKlMnOp"]


def test_only_hashes_are_kept() -> None:
    mem = SecretMemory()
    mem.remember(SECRET)
    seen, todo, found = set(), [mem], []
    while todo:  # everything reachable from the memory object
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            found.append(obj)
        todo.extend(gc.get_referents(obj))
    pieces = {SECRET[i:i + 6] for i in range(len(SECRET) - 5)}
    assert [s for s in found if any(p in s for p in pieces)] == []


def test_memory_is_bounded_and_forgets_the_oldest_first() -> None:
    rng = random.Random(7)
    values = ["".join(rng.choice(string.ascii_letters) for _ in range(40)) for _ in range(3 * MAX_VALUES)]
    mem = SecretMemory()
    for v in values:
        mem.remember(v)
        assert len(mem) <= MAX_VALUES
    assert mem.spans(values[-1]) == [(0, 40)]
    assert mem.spans(values[0]) == []
    long_values = ["".join(rng.choice(string.ascii_letters) for _ in range(4000)) for _ in range(20)]
    for v in long_values:
        mem.remember(v)
    kept = sum(bool(mem.spans(v)) for v in long_values)
    assert kept * (4000 - WINDOW + 1) <= MAX_WINDOWS and mem.spans(long_values[-1]) == [(0, 4000)]


def test_redactor_masks_slices_in_later_texts_only_if_it_masked_the_value() -> None:
    token = "ghp_" + "R7tLp2mKw9sYb4HcJZq8vN3xQe5Fd1Ug6Vo0Ai"
    slice_ = token[3:30]
    remembering, fresh = Redactor(), Redactor()
    assert remembering.mask(f"GITHUB_TOKEN={token}\n").text == "GITHUB_TOKEN=[REDACTED]\n"
    assert fresh.mask(f"tail: {slice_}\n").text == f"tail: {slice_}\n"  # no rule knows the slice
    assert not remembering.none_can_match([f"tail: {slice_}", "cwd"])
    masked = remembering.mask(f"tail: {slice_}\n")
    assert (masked.text, masked.count) == ("tail: [REDACTED]\n", 1)
    assert remembering.mask(f"short: {token[3:3 + WINDOW - 1]}\n").count == 0
