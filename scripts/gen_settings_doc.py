"""Regenerate the settings table in docs/configuration.md from hybridmap/settings.py.

python scripts/gen_settings_doc.py          # rewrite the table
python scripts/gen_settings_doc.py --check  # exit 1 if the doc is stale (used by the tests)
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "hybridmap" / "settings.py"
DOC = ROOT / "docs" / "configuration.md"
BEGIN = "<!-- settings-table:begin -->"
END = "<!-- settings-table:end -->"


def rows() -> list[tuple[str, str, str]]:
    source = SETTINGS.read_text()
    classes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
    out = []
    cls = classes["Settings"]
    for i, node in enumerate(cls.body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "setting":
                value = value.args[0]  # setting(default, rule): the rule is the "allowed" column
            default = " ".join((ast.get_source_segment(source, value) or "").split())
            doc = ""
            nxt = cls.body[i + 1] if i + 1 < len(cls.body) else None
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
                doc = " ".join(str(nxt.value.value).split())
            out.append((node.target.id, default, doc))
    return out


def allowed(name: str) -> str:
    """The setting's range (from the one validator) and who may set it."""
    sys.path.insert(0, str(ROOT))
    from hybridmap.settings import REPOSITORY_TUNABLE, rule_for

    rule = rule_for(name)
    who = (
        "; **protective**: never from a repository"
        if rule.protective
        else "; a repository may set it"
        if name in REPOSITORY_TUNABLE
        else ""
    )
    return rule.describe() + who


def table() -> str:
    lines = [BEGIN, "| setting | default | allowed | what it does |", "|---|---|---|---|"]
    for name, default, doc in rows():
        default, doc = default.replace("|", r"\|"), doc.replace("|", r"\|")
        lines.append(f"| `{name}` | `{default}` | {allowed(name).replace('|', chr(92) + '|')} | {doc} |")
    lines.append(END)
    return "\n".join(lines)


def main() -> int:
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    updated = text[:start] + table() + text[end:]
    if "--check" in sys.argv:
        if updated != text:
            print("docs/configuration.md is stale: run python scripts/gen_settings_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
