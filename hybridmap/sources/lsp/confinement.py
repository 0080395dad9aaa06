"""The sandbox one server runs in: its policy, its scratch directory, its pinned toolchain.

Every server gets the base policy (``hybridmap/infra/sandbox/policy.toml``: system programs, our own
installs), read access to the repository, its own files (the program, and the scripts its
arguments name), and one scratch directory it may write: ``<cache_dir>/servers/<server>-<key>``,
one per server and repository, kept between runs so caches stay warm (jdtls's workspace data,
Go's build cache, cargo's target directory). ``HOME``, ``TMPDIR`` and the XDG directories point
into it, so what a server writes "at home" lands there. Its config's ``sandbox`` table adds
what it needs (``{go-mod-cache}`` to read, ``{rust-sysroot}`` to run). The repository is never
writable and never executable, whatever the roots above contain.

``toolchain = "rust"`` resolves the Rust toolchain once per start from the program we run (the
real binary in ``$RUSTUP_HOME/toolchains/<name>/bin``, never the rustup proxy, which obeys the
repository's ``rust-toolchain.toml``) and pins it: cargo and rustc by absolute path, every
wrapper a ``.cargo/config.toml`` can name emptied, build output in the scratch directory.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...infra.sandbox import Policy, base_policy, confined, expand, support, system_policy
from ...infra.sandbox.landlock import Support
from ...settings import Settings
from .config import ServerConfig
from .launch import FROM_SOURCE_TREE, PROJECT_DIR, SERVERS_DIR, user_servers_dir

#: Seconds resolving a toolchain through rustup may take.
RUSTUP_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Confinement:
    """What one server start needs from the sandbox."""

    policy: Policy
    program: str = ""
    """What to run: the program found, or the toolchain's own binary behind a proxy."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Set in the server's environment after everything else (a config cannot undo it)."""
    problem: str = ""
    """Why the server cannot start confined ('' when it can)."""


def scratch_for(cache_dir: Path, server: str, repository: Path) -> Path:
    """``<cache_dir>/servers/<server>-<key of the repository>``, created owner-only."""
    key = hashlib.sha256(str(repository).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    scratch = cache_dir / "servers" / f"{server}-{key}"
    for sub in ("home", "tmp", "cache", "config", "data", "state"):
        (scratch / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
    return scratch


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def _user_cargo_home(environ: Mapping[str, str]) -> str:
    """The user's ``CARGO_HOME`` (cargo's default: ``~/.cargo``)."""
    return environ.get("CARGO_HOME") or os.path.join(_home(environ), ".cargo")


def places(environ: Mapping[str, str], scratch: Path, repository: Path) -> dict[str, tuple[str, ...]]:
    """The ``{name}`` places a server's sandbox table and environment may use."""
    home = _home(environ)
    gopath = (environ.get("GOPATH") or os.path.join(home, "go")).split(os.pathsep)[0]
    installs = [str(SERVERS_DIR), str(user_servers_dir(environ))]
    if FROM_SOURCE_TREE:
        installs.append(str(PROJECT_DIR / ".venv"))
    return {
        "install-dirs": tuple(installs),
        "scratch": (str(scratch),),
        "repository": (str(repository),),
        "python": (sys.executable,),
        "go-mod-cache": (environ.get("GOMODCACHE") or os.path.join(gopath, "pkg", "mod"),),
        "cargo-home": (_user_cargo_home(environ),),
    }


def confinement(
    config: ServerConfig, executable: str, repository: Path, scratch: Path, environ: Mapping[str, str]
) -> Confinement:
    """The policy and environment for ``config`` started as ``executable`` on ``repository``."""
    where = places(environ, scratch, repository)
    env: dict[str, str] = {
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "XDG_CACHE_HOME": str(scratch / "cache"),
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "XDG_DATA_HOME": str(scratch / "data"),
        "XDG_STATE_HOME": str(scratch / "state"),
    }
    program = executable  # as found: a launcher may find its files beside the link it was run as
    if config.sandbox.toolchain == "rust":
        rust = rust_toolchain(executable, environ)
        if isinstance(rust, str):
            return Confinement(Policy(), problem=rust)
        where["rust-sysroot"] = (str(rust.sysroot),)
        env.update(rust.environment(scratch, environ))
        program = str(rust.program)
    needs = config.sandbox
    own_files = [a for a in config.args if os.path.isabs(a) and os.path.isfile(a)]
    policy = base_policy(where).extended(
        execute=[os.path.realpath(program), *expand(needs.execute, where)],
        read=[str(repository), *own_files, *expand(needs.read, where)],
        write=[str(scratch), *expand(needs.write, where)],
        protected=[str(repository)],
    )
    # The config's own environment may name places too (GOMODCACHE = "{go-mod-cache}").
    for name, value in config.environment.items():
        if "{" in value:
            expanded = expand([value], where)
            env[name] = expanded[0] if expanded else ""
    return Confinement(policy, program, env)


@dataclass(frozen=True, slots=True)
class RustToolchain:
    name: str
    sysroot: Path
    program: Path
    """The server's own binary in ``sysroot/bin``."""

    def environment(self, scratch: Path, environ: Mapping[str, str]) -> dict[str, str]:
        """Cargo reads environment variables before any ``.cargo/config.toml``: each program a
        repository's config could name is pinned or emptied here (cargo treats an empty
        wrapper as none)."""
        bin_dir = self.sysroot / "bin"
        cargo, rustc = str(bin_dir / "cargo"), str(bin_dir / "rustc")
        return {
            "RUSTUP_TOOLCHAIN": self.name,  # a proxy reached anyway obeys this, not the repository
            "RUSTUP_AUTO_INSTALL": "0",
            "CARGO": cargo,
            "RUSTC": rustc,
            "CARGO_BUILD_RUSTC": rustc,
            "RUSTC_WRAPPER": "",
            "RUSTC_WORKSPACE_WRAPPER": "",
            "CARGO_BUILD_RUSTC_WRAPPER": "",
            "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER": "",
            "RUSTDOC": str(bin_dir / "rustdoc"),
            "CARGO_BUILD_RUSTDOC": str(bin_dir / "rustdoc"),
            "CARGO_TARGET_DIR": str(scratch / "target"),
            "CARGO_HOME": str(self.cargo_home(scratch, environ)),
            "CARGO_NET_OFFLINE": "true",
            "RUST_SRC_PATH": str(self.sysroot / "lib" / "rustlib" / "src" / "rust" / "library"),
            "PATH": os.pathsep.join([str(bin_dir), *_path_without_rustup(environ)]),
        }

    def cargo_home(self, scratch: Path, environ: Mapping[str, str]) -> Path:
        """A ``CARGO_HOME`` of ours in the scratch directory. rust-analyzer prefers
        ``$CARGO_HOME/bin/cargo`` (the rustup proxy, which would read the repository's
        rust-toolchain.toml) over ``$CARGO``: here that name is the toolchain's own cargo. The
        user's fetched crates and config are linked in (read-only to the server); their
        credentials are not."""
        user = Path(_user_cargo_home(environ))
        home = scratch / "cargo-home"
        (home / "bin").mkdir(parents=True, exist_ok=True, mode=0o700)
        links = {f"bin/{tool}": self.sysroot / "bin" / tool for tool in ("cargo", "rustc", "rustdoc")}
        links.update({name: user / name for name in ("registry", "git", "config.toml")})
        for name, target in links.items():
            link = home / name
            if link.is_symlink() and os.readlink(link) == str(target):
                continue
            if link.is_symlink() or link.exists():
                link.unlink()
            if target.exists():
                link.symlink_to(target)
        return home


def _path_without_rustup(environ: Mapping[str, str]) -> list[str]:
    cargo_bin = os.path.join(_user_cargo_home(environ), "bin")
    return [p for p in environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p) and p != cargo_bin]


def rust_toolchain(executable: str, environ: Mapping[str, str]) -> RustToolchain | str:
    """The toolchain whose ``bin`` holds the real ``executable``; through rustup when the
    program found is rustup's proxy (asked from ``/``, so no repository file decides). A
    string says why none was found."""
    real = Path(os.path.realpath(executable))
    if not _is_sysroot(real.parent.parent):
        # rustup's proxies are hard links to rustup itself, beside it in ~/.cargo/bin.
        rustup = real.parent / "rustup"
        if not rustup.is_file():
            return f"{real} is not in a Rust toolchain (no lib/rustlib beside its bin) and no rustup is beside it"
        real_or_problem = _ask_rustup(str(rustup), environ)
        if isinstance(real_or_problem, str):
            return real_or_problem
        real = real_or_problem
    sysroot = real.parent.parent
    if not (_is_sysroot(sysroot) and (sysroot / "bin" / "cargo").is_file() and (sysroot / "bin" / "rustc").is_file()):
        return f"no cargo and rustc beside {real} (not a rustup toolchain's own binary)"
    return RustToolchain(sysroot.name, sysroot, real)


def _is_sysroot(path: Path) -> bool:
    return (path / "lib" / "rustlib").is_dir()


def _ask_rustup(rustup: str, environ: Mapping[str, str]) -> Path | str:
    home = _home(environ)
    rustup_home = environ.get("RUSTUP_HOME") or os.path.join(home, ".rustup")
    env = {k: v for k, v in environ.items() if k in ("PATH", "HOME", "RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN")}
    env["RUSTUP_AUTO_INSTALL"] = "0"
    policy = system_policy().extended(execute=[rustup], read=[rustup_home, os.path.dirname(rustup)])
    with confined(policy) as start:
        try:
            done = subprocess.run(  # our rustup, from /, sandboxed; it only reads its settings
                [rustup, "which", "rust-analyzer"],
                cwd="/",
                env=env,
                capture_output=True,
                timeout=RUSTUP_TIMEOUT,
                check=False,
                preexec_fn=start.preexec,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"rustup could not be asked for rust-analyzer ({exc})"
    found = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not found:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"rustup has no rust-analyzer for its default toolchain ({said[-1] if said else 'no answer'})"
    return Path(os.path.realpath(found))


def kernel_support(settings: Settings) -> Support:
    """The sandbox this process can give its servers: the kernel's, unless the user turned it off."""
    if not settings.sandbox:
        return Support(0, "the sandbox is turned off (sandbox = false)")
    return support()


def unsandboxed_refusal(config: ServerConfig, settings: Settings, kernel: Support) -> str:
    """Why ``config`` may not start here ('' when it may): without a sandbox, only servers
    marked safe without one, or any server the user allowed."""
    if kernel.abi or config.sandbox.safe_without_sandbox or settings.allow_unsandboxed_servers:
        return ""
    return f"untrusted: no OS sandbox here ({kernel.reason}); opt in with allow_unsandboxed_servers"


def tool_policy(repository: Path, scratch: Path, environ: Mapping[str, str]) -> Policy:
    """The sandbox of a tool we run on the repository outside the language servers (the SCIP
    indexers): the base policy, the repository to read, ``scratch`` to write."""
    where = places(environ, scratch, repository)
    return base_policy(where).extended(read=[str(repository)], write=[str(scratch)], protected=[str(repository)])
