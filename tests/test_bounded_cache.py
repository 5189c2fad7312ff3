"""The one cache helper: bounded, least recently used first out, and the only one in use."""

import ast
from pathlib import Path

import pytest

from invariantdp._bounded_cache import BoundedCache, bounded_cache, caches, clear_caches

SRC = Path(__file__).resolve().parents[1] / "src" / "invariantdp"


def test_least_recently_used_entry_goes_first():
    cache = BoundedCache("test: lru order", maxsize=2)
    builds = []

    def build(k):
        builds.append(k)
        return k * 10

    assert cache.get("a", lambda: build("a")) == "a" * 10
    cache.get("b", lambda: build("b"))
    cache.get("a", lambda: build("a"))  # a is now the most recent
    cache.get("c", lambda: build("c"))  # evicts b
    assert "a" in cache and "c" in cache and "b" not in cache
    assert builds == ["a", "b", "c"]
    assert len(cache) == 2


def test_decorator_keys_on_arguments_and_keywords():
    calls = []

    @bounded_cache(maxsize=4)
    def f(x, *, y=0):
        calls.append((x, y))
        return x + y

    assert f(1) == 1 and f(1) == 1 and f(1, y=2) == 3 and f(1.0) == 1
    assert calls == [(1, 0), (1, 2)]  # 1 and 1.0 share an entry, as in lru_cache
    assert f.cache in caches()
    clear_caches()
    assert len(f.cache) == 0
    f(1)
    assert calls[-1] == (1, 0)


def test_maxsize_is_checked():
    with pytest.raises(ValueError, match="maxsize"):
        BoundedCache("bad", maxsize=0)


def _cache_decorators(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("lru_cache", "cache"):
            if isinstance(node.value, ast.Name) and node.value.id == "functools":
                found.append(f"functools.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            found += [f"functools.{a.name}" for a in node.names if a.name in ("lru_cache", "cache")]
    return found


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_every_cache_is_a_bounded_cache(path):
    # one way to cache: functools' caches are unbounded (cache) or hidden from clear_caches
    assert _cache_decorators(path) == []
