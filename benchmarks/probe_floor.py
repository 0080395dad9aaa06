"""The floor: read + bare tree-sitter parse of the same files, one core. Prints one JSON line.

probe_floor.py ROOT FILELIST
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from hybridmap.languages.registry import LanguageRegistry


def main() -> None:
    root, filelist = sys.argv[1:3]
    registry = LanguageRegistry.load()
    rels = [line.strip() for line in Path(filelist).read_text().splitlines() if line.strip()]
    parsers = {}
    lines = 0
    start = time.perf_counter()
    for rel in rels:
        lang = registry.language_for(rel)
        if lang is None:
            continue
        parser = parsers.get(lang)
        if parser is None:
            parser = parsers[lang] = registry.compiled(lang).parser
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
        lines += data.count(b"\n")
        parser.parse(data)
    elapsed = time.perf_counter() - start
    print(json.dumps({"floor": elapsed, "lines": lines, "files": len(rels)}))


if __name__ == "__main__":
    main()
