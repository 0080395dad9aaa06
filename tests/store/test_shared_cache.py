"""A cache shared by many machines (issue 29): a real Redis server, real maps, real processes.

A reader with an empty local cache starts from what a writer stored; readers never write; a
store that is gone, hangs, is full, or holds hostile entries never fails a map nor changes it:
every map here equals one made with a fresh local cache and no shared store.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import AsyncRepoMap, RepoMap
from hybridmap.errors import ConfigError
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import MapResult
from hybridmap.settings import load_settings
from hybridmap.store.shared import MAGIC, EnvelopeError, redacted, seal, unseal

from ..helpers import LSP_FIXTURES, TESTS, RedisServer, map_with, require, run_cli
from ..helpers import sample_repo as calling_repo

PROXY = TESTS / "fixtures" / "stores" / "cutting_proxy.py"


def sample_repo(root: Path) -> Path:
    return calling_repo(root, files=12, defs=20)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    server = RedisServer(tmp_path / "redis")
    yield server
    server.close()


def shared_kinds(result: MapResult) -> list[str]:
    return [d.kind for d in result.diagnostics if d.kind.startswith("shared_cache")]


def said(result: MapResult) -> str:
    return "\n".join(d.message for d in result.diagnostics)


def stored_tags(server: RedisServer) -> list[bytes]:
    return sorted(k for k in server.client().keys("hybridmap:*") if b":tags:" in k)


def test_an_empty_cache_starts_from_what_a_writer_stored(
    tmp_path: Path, registry: LanguageRegistry, store: RedisServer
) -> None:
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)
    written = map_with(root, tmp_path / "ci", registry, shared_cache_url=store.url, shared_cache_write=True)
    assert written.text == fresh.text and shared_kinds(written) == []
    assert len(stored_tags(store)) == 12

    reader = map_with(root, tmp_path / "agent", registry, shared_cache_url=store.url)
    assert reader.stats["files_parsed"] == 0
    assert reader.text == fresh.text and shared_kinds(reader) == []
    # What it found is kept locally: with the store gone, the next map still parses nothing.
    store.stop()
    later = map_with(root, tmp_path / "agent", registry, shared_cache_url=store.url)
    assert later.stats["files_parsed"] == 0 and later.text == fresh.text


def test_readers_never_write(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    root = sample_repo(tmp_path / "repo")
    result = map_with(root, tmp_path / "agent", registry, shared_cache_url=store.url)
    assert result.stats["files_parsed"] == 12
    assert store.client().dbsize() == 0


def test_a_repository_cannot_point_us_at_a_store(
    tmp_path: Path, registry: LanguageRegistry, store: RedisServer
) -> None:
    root = sample_repo(tmp_path / "repo")
    (root / "hybridmap.toml").write_text(f'shared_cache_url = "{store.url}"\nshared_cache_write = true\n')
    result = map_with(root, tmp_path / "cache", registry)
    assert store.client().dbsize() == 0
    left_out = [d.message for d in result.diagnostics if d.kind == "repository_config"]
    assert any("shared_cache_url" in m for m in left_out) and any("shared_cache_write" in m for m in left_out)


def test_the_store_gone_while_a_writer_maps(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    """It dies while the writer parses: the entries stay local, the map is whole, it says so."""
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)

    def kill_when_parsing(phase: str, done: int, total: int) -> None:
        if phase == "parsing":
            store.stop()

    cache = tmp_path / "ci"
    written = map_with(
        root, cache, registry, progress=kill_when_parsing, shared_cache_url=store.url, shared_cache_write=True
    )
    assert written.text == fresh.text and written.stats["files_parsed"] == 12
    assert shared_kinds(written) == ["shared_cache_unavailable"]
    assert "not used for 60 s: ConnectionError" in said(written)
    later = map_with(root, cache, registry, shared_cache_url=store.url)
    assert later.stats["files_parsed"] == 0 and later.text == fresh.text


def test_the_store_gone_mid_reply(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    """A reader's store dies in the middle of an answer (a real proxy in front of the real server
    cuts every connection after some bytes, and exits): what came whole is used, the rest parsed."""
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)
    map_with(root, tmp_path / "ci", registry, shared_cache_url=store.url, shared_cache_write=True)
    sizes = sorted(len(store.client().get(k) or b"") for k in stored_tags(store))
    listen = tmp_path / "proxy.sock"
    cut = sum(sizes[:5]) + 200  # about five entries' worth, then the connection drops
    proxy = subprocess.Popen(
        [sys.executable, str(PROXY), str(listen), str(store.socket), str(cut)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proxy.stdout is not None and proxy.stdout.readline().strip() == "ready"
        result = map_with(
            root, tmp_path / "agent", registry, shared_cache_url=f"unix://{listen}", shared_cache_batch_keys=2
        )
        assert proxy.wait(10) == 0  # it did cut
    finally:
        proxy.kill()
        proxy.wait()
    assert result.text == fresh.text
    assert 0 < result.stats["files_parsed"] < 12, result.stats  # some came whole before the cut
    assert shared_kinds(result) == ["shared_cache_unavailable"]
    assert "ConnectionError" in said(result)


def test_a_store_that_hangs_costs_one_timeout(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)
    map_with(root, tmp_path / "ci", registry, shared_cache_url=store.url, shared_cache_write=True)
    store.pause()
    started = time.monotonic()
    result = map_with(root, tmp_path / "agent", registry, shared_cache_url=store.url, shared_cache_timeout_seconds=0.3)
    took = time.monotonic() - started
    store.resume()
    assert result.text == fresh.text and result.stats["files_parsed"] == 12
    assert shared_kinds(result) == ["shared_cache_unavailable"]
    assert "Timeout" in said(result)
    assert took < 20, f"a hung store held the map up {took:.1f} s"  # gross stalls only: timing is a benchmark's


def test_a_store_slow_in_all_is_asked_no_more(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    """Each batch in time, but the lookup past its budget (0 s here: after the first batch)."""
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)
    map_with(root, tmp_path / "ci", registry, shared_cache_url=store.url, shared_cache_write=True)
    result = map_with(
        root,
        tmp_path / "agent",
        registry,
        shared_cache_url=store.url,
        shared_cache_batch_keys=2,
        shared_cache_read_budget_seconds=0,
    )
    assert result.text == fresh.text and result.stats["files_parsed"] == 10
    assert shared_kinds(result) == ["shared_cache_slow"]
    assert "gave 2 of 12 entries within shared_cache_read_budget_seconds=0" in said(result)


def test_a_hung_store_never_stalls_the_callers_loop(tmp_path: Path, store: RedisServer) -> None:
    """Server answers are looked up on the event loop: with a shared cache that is one more place
    to wait, and it must be waited for off the loop. The tags are local (a static map first), so
    the first thing to ask the hung store is an answer of ty's."""
    require("ty")
    root = tmp_path / "repo"
    shutil.copytree(LSP_FIXTURES / "python", root)
    cache = str(tmp_path / "cache")
    with RepoMap(root, overrides={"cache_dir": cache}, start_servers=False) as repo:
        repo.map(tokens=1024, mode="static")
    store.pause()
    hung = {"cache_dir": cache, "shared_cache_url": store.url, "shared_cache_timeout_seconds": 3.0}

    async def run() -> tuple[float, list[str], MapResult]:
        longest = 0.0
        done = asyncio.Event()

        async def tick() -> None:
            nonlocal longest
            last = time.monotonic()
            while not done.is_set():
                await asyncio.sleep(0.01)
                now = time.monotonic()
                longest = max(longest, now - last)
                last = now

        ticker = asyncio.create_task(tick())
        async with AsyncRepoMap(root, overrides=hung) as repo:
            result = await repo.map(tokens=1024, mode="hybrid", server_wait=20)
            said = shared_kinds(result)
            # Lookups may still be waiting on the store when the map returns: a later map says it.
            deadline = time.monotonic() + 20
            while not said and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                said += shared_kinds(await repo.map(tokens=1024, mode="hybrid"))
            await asyncio.sleep(3.5)
            said += shared_kinds(await repo.map(tokens=1024, mode="hybrid"))  # and not said again
        done.set()
        await ticker
        return longest, said, result

    longest, said_in_both, result = asyncio.run(run())
    store.resume()
    assert result.servers["python"].state == "ready", result.servers
    facts = {k: v for k, v in result.stats.items() if any(w in k for w in ("shared", "symbol", "resolv", "hover"))}
    assert said_in_both == ["shared_cache_unavailable"], f"{facts} {result.diagnostics}"  # once
    assert longest < 1.0, f"the caller's loop stood still {longest:.2f} s waiting on the shared cache"


def test_a_full_store_stops_writes_not_the_map(tmp_path: Path, registry: LanguageRegistry) -> None:
    full = RedisServer(tmp_path / "redis", "--maxmemory-policy", "noeviction")
    try:
        full.client().set("ballast", os.urandom(2 * 2**20))
        full.client().config_set("maxmemory", "1mb")  # now over the limit: every write is refused
        root = sample_repo(tmp_path / "repo")
        fresh = map_with(root, tmp_path / "fresh", registry)
        result = map_with(root, tmp_path / "ci", registry, shared_cache_url=full.url, shared_cache_write=True)
        assert result.text == fresh.text
        assert "refused a write (OutOfMemoryError" in said(result)
        assert stored_tags(full) == []
        # Everything was kept locally all the same.
        full.stop()
        later = map_with(root, tmp_path / "ci", registry, shared_cache_url=full.url)
        assert later.stats["files_parsed"] == 0 and later.text == fresh.text
    finally:
        full.close()


def test_hostile_entries_are_misses_never_code(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)
    map_with(root, tmp_path / "ci", registry, shared_cache_url=store.url, shared_cache_write=True)
    client = store.client()
    keys = stored_tags(store)
    marker = tmp_path / "pwned"

    class Exploit:
        def __reduce__(self) -> Any:
            return (os.system, (f"touch {marker}",))

    good = client.get(keys[0])
    other = client.get(keys[1])
    assert good is not None and other is not None
    envelope_of_other_key = other
    bomb_body = zlib.compress(b"\0" * (64 * 2**20), 9)
    plants: list[Any] = [
        b"garbage" * 10,
        pickle.dumps(Exploit()),
        good[: len(good) // 2],  # truncated
        good[:-1] + bytes((good[-1] ^ 1,)),  # one bit flipped
        envelope_of_other_key,  # a valid entry, moved to another file's key
        MAGIC + b"\x07" + bytes(32) + b"x",  # an unknown flag
        b"\0" * (5 * 2**20),  # past shared_cache_max_entry_bytes: never transferred whole
        MAGIC + b"\x01" + bytes(32) + bomb_body,  # a zlib bomb (its digest is wrong too)
    ]
    for key, value in zip(keys[1:], plants, strict=False):
        client.set(key, value)
    client.delete(keys[len(plants) + 1])
    client.rpush(keys[len(plants) + 1], b"a list where a string should be")  # WRONGTYPE on read
    result = map_with(root, tmp_path / "agent", registry, shared_cache_url=store.url)
    assert result.text == fresh.text
    assert not marker.exists()
    assert result.stats["files_parsed"] == len(plants) + 1
    assert shared_kinds(result) == ["shared_cache_refused"]
    assert f"{len(plants) + 1} entries of the shared cache" in said(result)


def test_a_forged_entry_fails_a_signed_store(tmp_path: Path, registry: LanguageRegistry, store: RedisServer) -> None:
    """With a signing key, an entry sealed without it (by anyone who can write the store) is a
    miss; without one, only damage is caught, which docs/security.md says."""
    root = sample_repo(tmp_path / "repo")
    fresh = map_with(root, tmp_path / "fresh", registry)
    ci = {"SIGNING_KEY": "ci-only-secret"}
    signed = {"shared_cache_url": store.url, "shared_cache_hmac_key_env": "SIGNING_KEY"}
    map_with(root, tmp_path / "ci", registry, environ=ci, shared_cache_write=True, **signed)
    client = store.client()
    key = stored_tags(store)[0]
    # A forger who can write the store re-seals another entry's payload under this key.
    other = stored_tags(store)[1]
    payload = unseal(other.decode(), client.get(other), b"ci-only-secret", 2**22)
    client.set(key, seal(key.decode(), payload, None))

    agent = map_with(root, tmp_path / "agent", registry, environ=ci, **signed)
    assert agent.text == fresh.text and agent.stats["files_parsed"] == 1
    assert "1 entry of the shared cache" in said(agent)
    wrong_key = map_with(root, tmp_path / "other", registry, environ={"SIGNING_KEY": "guess"}, **signed)
    assert wrong_key.stats["files_parsed"] == 12 and wrong_key.text == fresh.text
    unsigned = map_with(root, tmp_path / "plain", registry, shared_cache_url=store.url)
    assert unsigned.stats["files_parsed"] == 11  # the forged one verifies without a key, as documented
    missing = map_with(root, tmp_path / "missing", registry, environ={}, **signed)
    assert "shared_cache_hmac_key_env names $SIGNING_KEY, which is not set" in said(missing)
    assert missing.stats["files_parsed"] == 12


def test_credentials_are_never_shown(tmp_path: Path, registry: LanguageRegistry) -> None:
    secret = "hunter2-and-more"
    server = RedisServer(tmp_path / "redis", password=secret)
    try:
        root = sample_repo(tmp_path / "repo")
        fresh = map_with(root, tmp_path / "fresh", registry)
        url = f"unix://:{secret}@{server.socket}"
        written = map_with(root, tmp_path / "ci", registry, shared_cache_url=url, shared_cache_write=True)
        assert shared_kinds(written) == [] and len(stored_tags(server)) == 12
        from_env = map_with(
            root,
            tmp_path / "env",
            registry,
            environ={"STORE_PASSWORD": secret},
            shared_cache_url=server.url,
            shared_cache_password_env="STORE_PASSWORD",
        )
        assert from_env.stats["files_parsed"] == 0 and from_env.text == fresh.text
        wrong = f"unix://:{secret}-wrong@{server.socket}"
        refused = map_with(root, tmp_path / "wrong", registry, shared_cache_url=wrong)
        assert refused.text == fresh.text and shared_kinds(refused) == ["shared_cache_unavailable"]
        assert secret not in said(refused) and "***@" in said(refused)
        # A bad value from the user's own file is refused without being shown.
        with pytest.raises(ConfigError) as bad:
            load_settings(None, {"shared_cache_url": f"redis://:{secret}@host\n"})
        assert secret not in str(bad.value)
    finally:
        server.close()


def test_the_cli_says_what_the_store_gave(tmp_path: Path, store: RedisServer) -> None:
    root = sample_repo(tmp_path / "repo")
    config = tmp_path / "config" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f'shared_cache_url = "{store.url}"\nshared_cache_write = true\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "ci")}
    env["HYBRIDMAP_DAEMON"] = "off"
    run = run_cli("stats", str(root), env=env)
    assert run.returncode == 0, run.stderr
    assert "shared cache: 0 found of 12 asked, 0 refused, 12 written" in run.stdout
    env["XDG_CACHE_HOME"] = str(tmp_path / "agent")
    run = run_cli("stats", str(root), env=env)
    assert run.returncode == 0, run.stderr
    assert "shared cache: 12 found of 12 asked, 0 refused, 0 written" in run.stdout


# --- the envelope ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(payload=st.binary(max_size=2_000), position=st.integers(min_value=0), bit=st.integers(0, 7))
def test_any_changed_bit_is_refused(payload: bytes, position: int, bit: int) -> None:
    sealed = seal("k", payload, None)
    assert unseal("k", sealed, None, 2**20) == payload
    index = position % len(sealed)
    damaged = sealed[:index] + bytes((sealed[index] ^ (1 << bit),)) + sealed[index + 1 :]
    with pytest.raises(EnvelopeError):
        unseal("k", damaged, None, 2**20)
    with pytest.raises(EnvelopeError):
        unseal("k2", sealed, None, 2**20)
    with pytest.raises(EnvelopeError):
        unseal("k", sealed[: max(0, len(sealed) - 1 - position % 50)], None, 2**20)


def test_redacted_urls() -> None:
    assert redacted("redis://:pw@host:6379/0") == "redis://***@host:6379/0"
    assert redacted("rediss://user:pw@host/1") == "rediss://***@host/1"
    assert redacted("unix:///run/redis.sock") == "unix:///run/redis.sock"


def test_refusals_are_said_at_each_lookup_and_a_failure_once(store: RedisServer) -> None:
    """What one lookup met (refused entries) is said each time it happens, in a long-lived map as
    in a one-shot one; the store set aside is one episode, said once until it is asked again."""
    from hybridmap.settings import Settings
    from hybridmap.store.shared import open_shared_store

    shared, problems = open_shared_store(Settings(shared_cache_url=store.url, shared_cache_retry_seconds=0), {})
    assert shared is not None and problems == []
    client = store.client()
    for key in ("a", "b"):
        client.set(shared._stored_key(key), b"garbage")
    said = []
    for key in ("a", "b"):
        assert shared.get_many([key]).refused == 1
        said.append([d.kind for d in shared.take_diagnostics()])
    assert said == [["shared_cache_refused"], ["shared_cache_refused"]]
    store.stop()
    shared.get_many(["a"])
    shared.get_many(["a"])  # asked again at once (retry 0): a new episode
    assert [d.kind for d in shared.take_diagnostics()] == ["shared_cache_unavailable"] * 2
    shared.close()


def test_cache_check_says_whether_a_map_can_use_the_store(tmp_path: Path, store: RedisServer) -> None:
    """``hybridmap cache check``: a reader and a signed writer can; a wrong password, a stopped
    store and a missing secret cannot, each said in one line without the password."""
    secret = "s3cret-pass"
    guarded = RedisServer(tmp_path / "guarded", password=secret)
    config = tmp_path / "config" / "hybridmap"
    config.mkdir(parents=True)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "SIGN": "k", "HYBRIDMAP_DAEMON": "off"}

    def check(toml: str) -> Any:
        (config / "config.toml").write_text(toml)
        return run_cli("cache", "check", env=env)

    try:
        reader = check(f'shared_cache_url = "{store.url}"\n')
        assert reader.returncode == 0, reader.stderr
        assert (
            "read-only, entries checked by SHA-256, not signed" in reader.stdout
            and "ok: a map can use it" in reader.stdout
        )
        writer = check(
            f'shared_cache_url = "{store.url}"\nshared_cache_write = true\nshared_cache_hmac_key_env = "SIGN"\n'
        )
        assert writer.returncode == 0, writer.stderr
        assert "writer, entries signed (HMAC-SHA256)" in writer.stdout
        wrong = check(f'shared_cache_url = "unix://:{secret}-no@{guarded.socket}"\n')
        assert wrong.returncode == 1 and "a map could not use it" in wrong.stderr
        assert secret not in wrong.stderr + wrong.stdout and "***@" in wrong.stdout
        right = check(f'shared_cache_url = "unix://:{secret}@{guarded.socket}"\n')
        assert right.returncode == 0, right.stderr
        unsigned = check(f'shared_cache_url = "{store.url}"\nshared_cache_hmac_key_env = "NOT_SET"\n')
        assert unsigned.returncode == 2 and "names $NOT_SET, which is not set" in unsigned.stderr
        store.stop()
        gone = check(f'shared_cache_url = "{store.url}"\n')
        assert gone.returncode == 1 and "ConnectionError" in gone.stderr
        (config / "config.toml").write_text("")
        none = run_cli("cache", "check", env=env)
        assert none.returncode == 2 and "no shared cache is configured" in none.stderr
    finally:
        guarded.close()


def test_a_well_sealed_entry_with_planted_words_never_stops_a_map(
    tmp_path: Path, registry: LanguageRegistry, store: RedisServer
) -> None:
    """Without a signing key anyone who can write the store can seal an entry that verifies; word
    counts in it that are not as a parse writes them are counted again from the symbols, and a
    map with a chat file and a message (which read them) goes on: with planted names' words it is
    the fresh map exactly; with the whole text's words planted too, they are not used."""
    import dataclasses

    from hybridmap.store import codec

    root = sample_repo(tmp_path / "repo")
    map_with(root, tmp_path / "ci", registry, shared_cache_url=store.url, shared_cache_write=True)
    client = store.client()
    originals = {key: client.get(key) for key in stored_tags(store)}

    def plant(**fields: str) -> None:
        for stored, value in originals.items():
            name = stored.decode()
            outcome = codec.decode(unseal(name, value, None, 2**22))
            tags = dataclasses.replace(outcome.tags, **fields)
            client.set(stored, seal(name, codec.encode(dataclasses.replace(outcome, tags=tags)), None))

    def chat_map(cache: Path, **overrides: object) -> MapResult:
        with RepoMap(
            root, overrides={"cache_dir": str(cache), **overrides}, registry=registry, start_servers=False
        ) as repo:
            return repo.map(tokens=2048, mode="static", chat_files=["pkg/mod3.py"], message="func 7")

    expected = chat_map(tmp_path / "fresh")
    plant(name_words="retry\t-3")
    planted = chat_map(tmp_path / "agent", shared_cache_url=store.url)
    assert planted.stats["files_parsed"] == 0  # every entry was taken from the store
    assert planted.text == expected.text
    plant(name_words="retry\t-3", words="garbage")
    both = chat_map(tmp_path / "agent2", shared_cache_url=store.url)
    assert both.stats["files_parsed"] == 0 and both.files[0].path == expected.files[0].path
