# Shared by scripts/map and scripts/test: create .venv and install hybridmap into it, idempotently.
# Re-installs only when pyproject.toml (or the requested extras) changed since the last install.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HYBRIDMAP_VENV:-$HERE/.venv}"
PYTHON="${PYTHON:-python3}"

ensure_venv() {
  local extras="$1"   # "" or "test"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  local spec="$HERE"
  [ -n "$extras" ] && spec="$HERE[$extras]"
  local stamp="$VENV/.hybridmap-install-${extras:-base}"
  local want
  want="$(cat "$HERE/pyproject.toml" | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$spec" 2>&1 \
      | { grep -v -e "^WARNING: Location" -e "is ignored: it is neither" || true; }
    echo "$want" > "$stamp"
  fi
}
