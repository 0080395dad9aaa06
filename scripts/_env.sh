# Shared by scripts/map and scripts/test: create .venv and install hybridmap into it, idempotently.
# Re-installs only when pyproject.toml (or the requested extras) changed since the last install.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HYBRIDMAP_VENV:-$HERE/.venv}"
PYTHON="${PYTHON:-python3}"

# pip, with its chatter in a log that is shown only when it fails.
quiet_pip() {
  local log
  log="$(mktemp)"
  if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${@:2}" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

ensure_venv() {
  local extras="$1"   # "" or a list of extras, e.g. "test,mcp,tokenizers"
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  local spec="$HERE"
  [ -n "$extras" ] && spec="$HERE[$extras]"
  local stamp="$VENV/.hybridmap-install-${extras:-base}"
  local want
  want="$(cat "$HERE/pyproject.toml" | sha256sum | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    # pip is quiet (its log shows only on failure): say what is happening before the wait.
    echo "${0##*/}: installing hybridmap${extras:+[$extras]} and its dependencies into ${VENV/#"$HERE"\//}" \
         "(first time: a minute or two; later only when pyproject.toml changes)..." >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
    quiet_pip install -e "$spec"
    echo "$want" > "$stamp"
  fi
}
