"""A cache shared by many machines, on a Redis (or Valkey) server, beneath the local disk cache.

A fleet of agents, CI jobs and developer machines maps the same code: the entries are keyed by
content (``store/cache.py``), so one machine's parse is every machine's. :class:`Cache` reads
local first and falls through to this store for what it misses, keeping what it finds locally;
it writes here only when the user says this machine is a writer (``shared_cache_write``, CI).

Why Redis: tens of thousands of small entries per cold map (one per file, ~3 KB) want pipelined
round trips on one connection, not one HTTP request each as an object store would need; it is
run almost everywhere, speaks one protocol with Valkey, and its client (``redis``) is a kept
library. It is imported on first use, never at start-up.

Trust (``docs/security.md``): the store is configured by the user only (every ``shared_cache_*``
setting is protective: never from a repository), and readers never write. What comes back is
untrusted bytes:

* each value is an envelope: a magic, a flag, a digest, our codec's bytes (zlib-compressed). The
  digest covers the key the value was stored under and the payload: SHA-256, or HMAC-SHA256 with
  a key from the environment variable ``shared_cache_hmac_key_env`` names, so that only holders of
  the key (the writers) can make an entry a reader accepts. A truncated, tampered, foreign or
  moved entry is a miss and the file is parsed here;
* reads are ``GETRANGE`` up to ``shared_cache_max_entry_bytes``: a planted gigabyte is never
  transferred, and decompression stops at the same bound;
* the payload is decoded by our codec, which builds records and never runs anything.

A slow or absent store never fails a map nor holds it up for long: each wait on it (connect,
every reply) has ``shared_cache_timeout_seconds``, and an error or a wait past it sets the store
aside for ``shared_cache_retry_seconds``, and the map goes on with its local cache and parses
(``shared_cache_unavailable``, said once per episode). A store that answers each batch in time
but slowly in all stops being asked, for that lookup, after ``shared_cache_read_budget_seconds``
(``shared_cache_slow``): the rest is parsed here. (The whole of a round trip is not timed
against the timeout: on a loaded machine our own packing of 512 commands can take a second.)
A store that refuses writes (full: Redis's ``OOM`` under ``noeviction``, or a read-only user)
stops this process's writes, not its reads.
Credentials are never shown: the URL is redacted in every message.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..model import Diagnostic
from ..settings import Settings
from . import codec

#: Envelope: MAGIC, a flag byte, the 32-byte digest, then the payload.
MAGIC = b"hmS1"
_PLAIN, _ZLIB = 0, 1
_DIGEST_BYTES = 32
_HEADER_BYTES = len(MAGIC) + 1 + _DIGEST_BYTES
#: zlib level 1: our codec's JSON shrinks ~4x at ~300 MB/s; higher levels gain a few per cent for
#: several times the writer's CPU.
_ZLIB_LEVEL = 1
_SCHEMES = ("redis", "rediss", "unix")
_DIAGNOSTIC_PATH = "<shared cache>"


class EnvelopeError(ValueError):
    """Bytes from the store that are not an entry this store accepts under that key."""


@dataclass(frozen=True, slots=True)
class SharedStoreConfig:
    """What the user configured (``shared_cache_*`` settings, the environment's secrets)."""

    url: str
    write: bool
    timeout_seconds: float
    read_budget_seconds: float
    retry_seconds: float
    max_entry_bytes: int
    batch_keys: int
    ttl_seconds: int
    key_prefix: str
    password: str | None
    hmac_key: bytes | None

    @staticmethod
    def from_settings(settings: Settings, environ: Mapping[str, str]) -> SharedStoreConfig | None:
        """The configuration, or None when no shared cache is set. Raises :class:`ValueError`
        (said as a diagnostic by :func:`open_shared_store`) for a URL or secret it cannot use."""
        url = settings.shared_cache_url
        if not url:
            return None
        if urlsplit(url).scheme not in _SCHEMES:
            raise ValueError(f"shared_cache_url must start with one of {', '.join(s + '://' for s in _SCHEMES)}")
        password = _secret(environ, settings.shared_cache_password_env, "shared_cache_password_env")
        key = _secret(environ, settings.shared_cache_hmac_key_env, "shared_cache_hmac_key_env")
        return SharedStoreConfig(
            url=url,
            write=settings.shared_cache_write,
            timeout_seconds=settings.shared_cache_timeout_seconds,
            read_budget_seconds=settings.shared_cache_read_budget_seconds,
            retry_seconds=settings.shared_cache_retry_seconds,
            max_entry_bytes=settings.shared_cache_max_entry_bytes,
            batch_keys=settings.shared_cache_batch_keys,
            ttl_seconds=settings.shared_cache_ttl_seconds,
            key_prefix=settings.shared_cache_key_prefix,
            password=password,
            hmac_key=key.encode() if key is not None else None,
        )


def _secret(environ: Mapping[str, str], variable: str, setting: str) -> str | None:
    """The value of the environment variable a setting names; a named variable that is unset or
    empty is an error (a reader configured to verify signatures must not silently stop)."""
    if not variable:
        return None
    value = environ.get(variable, "")
    if not value:
        raise ValueError(f"{setting} names ${variable}, which is not set")
    return value


def redacted(url: str) -> str:
    """``url`` with its password (and a user name beside it) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        if parts.password is None and parts.username is None:
            return url
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        return urlunsplit(parts._replace(netloc=f"***@{host}"))
    except ValueError:  # an unparsable URL: show nothing of it
        return "<shared_cache_url>"


def seal(stored_key: str, payload: bytes, hmac_key: bytes | None) -> bytes:
    """The envelope of ``payload`` (our codec's bytes) stored under ``stored_key``."""
    body = zlib.compress(payload, _ZLIB_LEVEL)
    return MAGIC + bytes((_ZLIB,)) + _digest(stored_key, _ZLIB, body, hmac_key) + body


def unseal(stored_key: str, data: bytes, hmac_key: bytes | None, max_bytes: int) -> bytes:
    """The payload of an envelope read under ``stored_key``; :class:`EnvelopeError` unless it is
    whole, unaltered, stored under this very key, and at most ``max_bytes`` decompressed."""
    if len(data) < _HEADER_BYTES or not data.startswith(MAGIC):
        raise EnvelopeError("not an entry of ours")
    if len(data) > max_bytes:
        raise EnvelopeError(f"larger than shared_cache_max_entry_bytes ({max_bytes})")
    flag = data[len(MAGIC)]
    digest = data[len(MAGIC) + 1 : _HEADER_BYTES]
    body = data[_HEADER_BYTES:]
    if flag not in (_PLAIN, _ZLIB):
        raise EnvelopeError(f"unknown flag {flag}")
    if not hmac.compare_digest(digest, _digest(stored_key, flag, body, hmac_key)):
        raise EnvelopeError("digest mismatch (truncated, altered, moved, or signed with another key)")
    if flag == _PLAIN:
        return body
    inflate = zlib.decompressobj()
    try:
        payload = inflate.decompress(body, max_bytes)
    except zlib.error as exc:
        raise EnvelopeError(f"does not decompress ({exc})") from None
    if inflate.unconsumed_tail or not inflate.eof:
        raise EnvelopeError(f"decompresses past shared_cache_max_entry_bytes ({max_bytes}), or is cut short")
    return payload


def _digest(stored_key: str, flag: int, body: bytes, hmac_key: bytes | None) -> bytes:
    # The key is inside the digest: an entry copied to another file's key does not verify there.
    message = stored_key.encode("utf-8", "surrogatepass") + b"\0" + bytes((flag,)) + body
    if hmac_key is None:
        return hashlib.sha256(message).digest()
    return hmac.new(hmac_key, message, hashlib.sha256).digest()


@dataclass(frozen=True, slots=True)
class Fetched:
    """What one read of the store gave: payloads by key, and how many entries were refused."""

    payloads: dict[str, bytes]
    refused: int = 0


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """What :meth:`SharedStore.check` found: whether a map could use the store, as configured."""

    where: str
    """The URL, credentials redacted."""
    writer: bool
    signed: bool
    seconds: float
    """The probe's round trips, in all."""
    problem: str | None
    """Why a map could not use it (None: it can)."""


#: The key the check reads (and a writer writes, for a minute) under the prefix.
_PROBE_KEY = "probe:hybridmap-cache-check"


class SharedStore:
    """One client of the shared store, for one :class:`Cache`; thread-safe (the client's pool is,
    and the state below is behind a lock)."""

    def __init__(self, config: SharedStoreConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._client: Any = None
        self._aside_until = 0.0
        self._writes_refused = False
        self._said: set[str] = set()
        self.diagnostics: list[Diagnostic] = []
        self.stats = {"asked": 0, "found": 0, "refused": 0, "written": 0}
        """Entries asked for, found (verified), refused, and written, since this store opened."""

    @property
    def where(self) -> str:
        return redacted(self.config.url)

    def get_many(self, keys: Iterable[str]) -> Fetched:
        """Verified payloads (our codec's bytes) of those ``keys`` the store holds; nothing when
        it is set aside. Never raises."""
        wanted = list(keys)
        if not wanted or not self._usable():
            return Fetched({})
        payloads: dict[str, bytes] = {}
        refused = 0
        # One more byte than the bound, to tell an entry at the bound from one past it.
        last = self.config.max_entry_bytes + _HEADER_BYTES
        deadline = self._clock() + self.config.read_budget_seconds
        for start in range(0, len(wanted), self.config.batch_keys):
            if start and self._clock() > deadline:
                self._say(
                    None,
                    "shared_cache_slow",
                    f"the shared cache at {self.where} gave {start} of {len(wanted)} entries within "
                    f"shared_cache_read_budget_seconds={self.config.read_budget_seconds:g}; the rest were parsed here",
                )
                break
            batch = wanted[start : start + self.config.batch_keys]
            stored = [self._stored_key(key) for key in batch]
            replies = self._round_trip("read", lambda pipe, names=stored: [pipe.getrange(n, 0, last) for n in names])
            if replies is None:
                break
            for key, name, data in zip(batch, stored, replies, strict=True):
                if not data:
                    continue
                if not isinstance(data, bytes):  # an error for this key alone (a planted list: WRONGTYPE)
                    refused += 1
                    continue
                try:
                    payloads[key] = unseal(name, data, self.config.hmac_key, self.config.max_entry_bytes)
                except EnvelopeError:
                    refused += 1
        with self._lock:
            self.stats["asked"] += len(wanted)
            self.stats["found"] += len(payloads)
            self.stats["refused"] += refused
        if refused:
            self._say(
                None,
                "shared_cache_refused",
                f"{refused} entr{'y' if refused == 1 else 'ies'} of the shared cache at {self.where} refused "
                "(truncated, altered, too large, or signed with another key); those files were parsed here",
            )
        return Fetched(payloads, refused)

    def put_many(self, items: Mapping[str, bytes]) -> None:
        """Store payloads (our codec's bytes), when this machine is a writer. Never raises."""
        if not self.config.write or not items or not self._usable():
            return
        with self._lock:
            if self._writes_refused:
                return
        sealed = []
        for key, payload in items.items():
            name = self._stored_key(key)
            data = seal(name, payload, self.config.hmac_key)
            if len(data) <= self.config.max_entry_bytes:  # a reader would refuse it
                sealed.append((name, data))
        ttl = self.config.ttl_seconds or None
        for start in range(0, len(sealed), self.config.batch_keys):
            batch = sealed[start : start + self.config.batch_keys]
            if self._round_trip("write", lambda pipe, b=batch: [pipe.set(n, d, ex=ttl) for n, d in b]) is None:
                return
            with self._lock:
                self.stats["written"] += len(batch)

    def check(self) -> StoreCheck:
        """Probe the store as a map would use it: a read (connect, authenticate, ``GETRANGE``) and,
        on a writer, a write of a probe entry (kept a minute) read back and verified."""
        started = time.perf_counter()
        name = self._stored_key(_PROBE_KEY)
        payload = b"probe"
        if self.config.write:
            sealed = seal(name, payload, self.config.hmac_key)
            self._round_trip("write", lambda pipe: [pipe.set(name, sealed, ex=60)])
        bound = self.config.max_entry_bytes
        replies = self._round_trip("read", lambda pipe: [pipe.getrange(name, 0, bound)])
        problem = next((d.message for d in self.take_diagnostics()), None)
        if problem is None and replies is not None and self.config.write:
            try:
                unseal(name, replies[0] if isinstance(replies[0], bytes) else b"", self.config.hmac_key, bound)
            except EnvelopeError as exc:
                problem = f"the probe entry written was not read back whole: {exc}"
        if problem is None and replies is None:
            problem = "no answer"
        writer, signed = self.config.write, self.config.hmac_key is not None
        return StoreCheck(self.where, writer, signed, time.perf_counter() - started, problem)

    def take_diagnostics(self) -> list[Diagnostic]:
        """What went wrong since the last call (each episode is said once)."""
        with self._lock:
            taken, self.diagnostics = self.diagnostics, []
        return taken

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):  # closing a dead connection is no news
                client.close()

    # --- internals -----------------------------------------------------------------------------

    def _stored_key(self, key: str) -> str:
        return self.config.key_prefix + codec.format_key(key)

    def _usable(self) -> bool:
        with self._lock:
            return self._clock() >= self._aside_until

    def _connected(self) -> Any:
        with self._lock:
            if self._client is None:
                import redis  # ~0.1 s: only once a shared cache is configured and first asked
                from redis.backoff import NoBackoff
                from redis.retry import Retry

                config = self.config
                self._client = redis.Redis.from_url(
                    config.url,
                    password=config.password,
                    socket_timeout=config.timeout_seconds,
                    socket_connect_timeout=config.timeout_seconds,
                    # The client's default retries three times with backoff of up to 10 s: a store
                    # that is gone would hold the map up. One try; a failure sets the store aside.
                    retry=Retry(NoBackoff(), 0),
                    health_check_interval=0,
                )
            return self._client

    def _round_trip(self, what: str, commands: Any) -> list[Any] | None:
        """Run one pipeline: its replies, an error object in place of each refused command; None
        (the store set aside, or this process's writes stopped) when it fails or a wait on it
        passes the timeout (the client raises ``TimeoutError``)."""
        try:
            pipe = self._connected().pipeline(transaction=False)
            commands(pipe)
            replies: list[Any] = pipe.execute(raise_on_error=False)
        except Exception as exc:  # noqa: BLE001 - the client's errors, and any other: a store never fails a map
            self._set_aside(f"{type(exc).__name__}: {self._scrub(exc)}")
            return None
        if what == "write":
            refusal = next((r for r in replies if isinstance(r, Exception)), None)
            if refusal is not None:  # the store answered and refused: full (OOM), a read-only user
                with self._lock:
                    self._writes_refused = True
                self._say(
                    "write",
                    "shared_cache_unavailable",
                    f"the shared cache at {self.where} refused a write "
                    f"({type(refusal).__name__}: {self._scrub(refusal)}); this process stops writing to it "
                    "and keeps reading",
                )
                return None
        return replies

    def _set_aside(self, why: str) -> None:
        with self._lock:
            # Lookups in other threads that were waiting on it fail too (their connection is
            # closed under them): one episode, said once.
            already = self._clock() < self._aside_until
            self._aside_until = self._clock() + self.config.retry_seconds
            if not already:
                self._said.discard("aside")  # a new episode is said again
        if already:
            return
        self._say(
            "aside",
            "shared_cache_unavailable",
            f"shared cache at {self.where} not used for {self.config.retry_seconds:g} s: {why}; "
            "mapping on with the local cache",
        )
        self.close()

    def _scrub(self, exc: BaseException) -> str:
        text = str(exc)[:300]
        for secret in (self.config.password, self.config.url):
            if secret:
                text = text.replace(secret, "***")
        return text

    def _say(self, episode: str | None, kind: str, message: str) -> None:
        """Say something once per ``episode`` (the store set aside, writes stopped), or each time
        for None (what one lookup met: refused entries, a spent budget)."""
        with self._lock:
            if episode is not None:
                if episode in self._said:
                    return
                self._said.add(episode)
            self.diagnostics.append(Diagnostic(_DIAGNOSTIC_PATH, kind, message))


def open_shared_store(settings: Settings, environ: Mapping[str, str]) -> tuple[SharedStore | None, list[Diagnostic]]:
    """The shared store the user configured, if any, and what is wrong with the configuration."""
    try:
        config = SharedStoreConfig.from_settings(settings, environ)
    except ValueError as exc:
        message = f"shared cache not used: {exc}"
        return None, [Diagnostic(_DIAGNOSTIC_PATH, "shared_cache_unavailable", message)]
    return (SharedStore(config) if config is not None else None), []
