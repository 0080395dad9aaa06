"""A host that configures logging must never receive file contents or message bodies from us
or the libraries we drive (pygls logs every JSON-RPC message it sends at INFO). A fresh
interpreter per case (logging is process-wide), a real ty server, real files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hybridmap.sources.lsp.session import find_command

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lsp" / "python"
SECRET = "hunter2-SECRET-IN-SOURCE-4f1c"

HOST = """
import io, json, logging, sys
buffer = io.StringIO()
logging.basicConfig(level=getattr(logging, sys.argv[2]), stream=buffer, format="%(name)s %(message)s")
if sys.argv[3] != "-":
    logging.getLogger("pygls").setLevel(getattr(logging, sys.argv[3]))  # the host asks for pygls' records
from hybridmap import RepoMap
with RepoMap(sys.argv[1], overrides={"use_cache": False}) as repo:
    for _ in range(2):
        result = repo.map(server_wait=30)
print(json.dumps({"log": buffer.getvalue(), "lsp_edges": result.edges.get("lsp", 0),
                  "state": {k: str(v.state) for k, v in result.servers.items()}}))
"""


@pytest.mark.skipif(find_command("ty") is None, reason="ty is installed by scripts/install-servers")
@pytest.mark.parametrize(("root_level", "pygls_level"), [("INFO", "-"), ("DEBUG", "-"), ("DEBUG", "DEBUG")])
def test_no_file_content_reaches_the_hosts_logs(tmp_path: Path, root_level: str, pygls_level: str) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)
    app = root / "app.py"
    app.write_text(f"# {SECRET}\n" + app.read_text())
    proc = subprocess.run(
        [sys.executable, "-c", HOST, str(root), root_level, pygls_level], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["state"] == {"python": "ready"} and out["lsp_edges"] > 0  # the server really talked
    assert SECRET not in out["log"] and SECRET not in proc.stderr
    assert "def " not in out["log"]  # no source at all, not just the marked line
    # pygls no longer carries the wire (sources/lsp/wire.py is ours and logs no message), so even
    # a host asking pygls for DEBUG gets none of its per-message records; logs.py still guards
    # any record pygls or lsprotocol might emit.
    assert "Sending data" not in out["log"]
    if pygls_level == "-":  # not asked for: nothing of pygls reaches an INFO or DEBUG root
        assert "pygls" not in out["log"]
