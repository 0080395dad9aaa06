"""A deterministic synthetic monorepo of N files, for the scale benchmark (``bench_scale.py``).

    python benchmarks/gen_monorepo.py N [--seed S] [--out DIR] [--tiny M]

What it writes (the same bytes and the same commit hash for the same N and seed):

* four languages, by share of files: Python 42 %, TypeScript 30 %, Go 18 %, C 10 % (a header in
  ``include/<lib>/`` and a source in ``src/`` per unit);
* projects in nested directories: Python projects under ``services/py/`` (``pyproject.toml``, a
  package with ``__init__.py`` in each directory), TypeScript packages under ``packages/``
  (``package.json`` + ``tsconfig.json``), Go modules under ``go/`` (``go.mod``; one package per
  directory), C libraries under ``native/`` (``Makefile``); project sizes are heavy-tailed;
* definitions drawn partly from a small set of common names (``load``, ``parse``, ``Config``,
  ``handle_request``... in every language's casing; 12 % of top-level definitions, 35 % of
  methods, Zipf-weighted), so many files define the same names, and otherwise from verb/noun/noun
  domain names (each defined in a few files);
* imports and calls across files and projects of the same language, the imported file chosen with
  a Zipf-like popularity (weight 1 / rank^1.1; 60 % from the importer's own project);
* files of a few dozen to a few hundred lines; a git repository with one commit (fixed author,
  dates and ``core.hooksPath=/dev/null``).

``--tiny M`` adds M one-line Python files under ``bulk/`` (for the "many listed paths" test),
committed too. Output: ``DIR/repo`` (default ``benchmarks/.work/scale/nN``) and ``DIR/manifest.json``
(file counts, the edit target: a Python file at the 90th percentile of import popularity, and
generation seconds). Every line of generated code is made up here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import time
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCALE = HERE / ".work" / "scale"

SHARES = (("py", 0.42), ("ts", 0.30), ("go", 0.18), ("c", 0.10))
FILES_PER_PROJECT = 400
ZIPF_EXPONENT = 1.1
OWN_PROJECT_SHARE = 0.6
#: Shares of definitions named from COMMON (top-level ones, methods): `load` is then defined in about
#: 2 % of the files, `parse` in 1 % (a real monorepo's `get`, `run`, `close` are as common).
TOP_LEVEL_COMMON_SHARE = 0.12
METHOD_COMMON_SHARE = 0.35
#: Domain names are verb_noun (4,000 of them) or verb_noun_noun (400,000). Half are two-word up to
#: 9,600 files; above, fewer (share = 4,800 / N), so a two-word name keeps about 6 definers at every
#: size instead of ~55 at 100k files (a fixed vocabulary is not how real code grows).
TWO_WORD_FILES = 4800
GENERATOR_VERSION = 3
COMMON = (
    "load parse handle_request Config run get close validate process create update delete init Client Handler "
    "Result Options render read write start stop reset build serialize format open flush Error"
).split()
VERBS = (
    "compute fetch resolve apply merge split encode decode collect filter index publish refresh compact "
    "schedule dispatch register lookup normalize emit track sync restore snapshot rotate verify sign "
    "archive migrate expand shrink rank score batch prune route cache"
).split()
NOUNS = (
    "invoice order account ledger session token user profile report metric event queue message payload "
    "record segment shard replica tenant quota budget price cart item catalog asset blob chunk manifest "
    "schema column table cursor page window buffer stream frame packet route policy rule role grant audit "
    "trace span label tag node edge graph cluster region zone lease lock job task worker pool bucket key "
    "entry header footer layout theme widget form field filter query plan cost"
).split()
COMMON_FILE_STEMS = ("utils", "config", "types", "errors", "handler", "client", "models", "helpers", "constants")


def snake(words: list[str]) -> str:
    return "_".join(words)


def camel(words: list[str]) -> str:
    return words[0] + "".join(w.capitalize() for w in words[1:])


def pascal(words: list[str]) -> str:
    return "".join(w.capitalize() for w in words)


@dataclass
class Unit:
    """One generated source file (a C unit is a header plus a source file)."""

    index: int
    lang: str
    project: int
    directory: str
    stem: str
    defs: list[tuple[str, list[str]]] = field(default_factory=list)
    """(kind, name words) of the exported top-level definitions."""
    imports: list[int] = field(default_factory=list)
    importers: int = 0


@dataclass
class Project:
    lang: str
    index: int
    name: str
    base: str
    dirs: list[str]
    units: list[int] = field(default_factory=list)


def zipf_cum(n: int) -> list[float]:
    return list(accumulate(1.0 / (rank + 1) ** ZIPF_EXPONENT for rank in range(n)))


def pick(rng: random.Random, cum: list[float]) -> int:
    return min(bisect_left(cum, rng.random() * cum[-1]), len(cum) - 1)


def split_counts(total: int, rng: random.Random) -> dict[str, int]:
    """Source units per language so that the files (C units are two) sum to about ``total``."""
    counts = {lang: max(1, int(total * share)) for lang, share in SHARES}
    counts["c"] = max(1, counts["c"] // 2)
    return counts


def make_dirs(rng: random.Random, count: int) -> list[str]:
    """``count`` nested directory paths (depth 1 to 3) built from nouns, parents first."""
    dirs: list[str] = []
    seen: set[str] = set()
    while len(dirs) < count:
        parent = rng.choice(dirs) if dirs and rng.random() < 0.6 else ""
        if parent.count("/") >= 2:
            parent = parent.rsplit("/", 1)[0]
        name = rng.choice(NOUNS) + ("s" if rng.random() < 0.3 else "")
        path = f"{parent}/{name}" if parent else name
        if path not in seen:
            seen.add(path)
            dirs.append(path)
    return dirs


def plan_projects(lang: str, units: int, rng: random.Random) -> list[Project]:
    count = max(2, round(units / FILES_PER_PROJECT))
    projects = []
    for i in range(count):
        name = f"{rng.choice(NOUNS)}{rng.choice(NOUNS)}{i}"
        base = {"py": "services/py", "ts": "packages", "go": "go", "c": "native"}[lang] + f"/{name}"
        projects.append(Project(lang, i, name, base, []))
    return projects


# --- planning: units, names, imports ---------------------------------------------------------


def two_word_share(n_files: int) -> float:
    return min(0.5, TWO_WORD_FILES / max(1, n_files))


def name_words(rng: random.Random, common_cum: list[float], common_share: float, two_word: float = 0.5) -> list[str]:
    if rng.random() < common_share:
        return COMMON[pick(rng, common_cum)].lower().split("_")
    words = [rng.choice(VERBS), rng.choice(NOUNS)]
    if rng.random() < 1 - two_word:
        words.append(rng.choice(NOUNS))
    return words


def plan_defs(rng: random.Random, common_cum: list[float], two_word: float) -> list[tuple[str, list[str]]]:
    """Exported definitions of one file: 2 to ~18, about one in eight with a common name."""
    count = min(18, 2 + int(rng.expovariate(1 / 3.5)))
    out: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for _ in range(count):
        words = name_words(rng, common_cum, TOP_LEVEL_COMMON_SHARE, two_word)
        key = "".join(words)
        if key in seen:
            continue
        seen.add(key)
        out.append(("class" if rng.random() < 0.25 else "func", words))
    return out


def unique_stem(rng: random.Random, used: set[tuple[int, str, str]], project: int, directory: str) -> str:
    for attempt in range(100):
        stem = rng.choice(COMMON_FILE_STEMS) if rng.random() < 0.12 else f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}"
        if attempt > 20:
            stem = f"{stem}{attempt}"
        if (project, directory, stem) not in used:
            used.add((project, directory, stem))
            return stem
    raise RuntimeError("no free file name")


def plan_language(lang: str, count: int, first: int, seed: int, two_word: float) -> tuple[list[Project], list[Unit]]:
    """Projects (heavy-tailed sizes, nested directories) and the units of one language."""
    rng = random.Random(f"{seed}:{lang}")
    projects = plan_projects(lang, count, rng)
    sizes_cum = list(accumulate(1.0 / (i + 1) ** 0.8 for i in range(len(projects))))
    owner = [pick(rng, sizes_cum) for _ in range(count)]
    sizes = Counter(owner)
    for p in projects:
        p.dirs = make_dirs(rng, max(1, sizes[p.index] // 10))
    common_cum = zipf_cum(len(COMMON))
    used: set[tuple[int, str, str]] = set()
    units: list[Unit] = []
    for k in range(count):
        project = projects[owner[k]]
        directory = rng.choice(project.dirs)
        unit = Unit(first + k, lang, project.index, directory, unique_stem(rng, used, project.index, directory))
        unit.defs = plan_defs(rng, common_cum, two_word)
        project.units.append(unit.index)
        units.append(unit)
    if lang == "go":
        dedupe_go_package_names(units)
    return projects, units


def dedupe_go_package_names(units: list[Unit]) -> None:
    """Go: one package per directory, so a top-level name is defined once per directory."""
    used: dict[tuple[int, str], set[str]] = {}
    for unit in units:
        names = used.setdefault((unit.project, unit.directory), set())
        for i, (kind, words) in enumerate(unit.defs):
            if "".join(words) in names:
                words = [*words, *unit.stem.split("_")]
                unit.defs[i] = (kind, words)
            names.add("".join(words))


def plan_imports(projects: list[Project], units: dict[int, Unit], seed: int, lang: str) -> None:
    """Each file imports 1 to ~9 others of its language; popular files are picked far more often."""
    rng = random.Random(f"{seed}:{lang}:imports")
    everyone = [u for p in projects for u in p.units]
    rng.shuffle(everyone)
    global_cum = zipf_cum(len(everyone))
    own: dict[int, tuple[list[int], list[float]]] = {}
    for p in projects:
        order = list(p.units)
        rng.shuffle(order)
        own[p.index] = (order, zipf_cum(len(order)))
    for index in everyone:
        unit = units[index]
        wanted = 1 + min(8, int(rng.expovariate(1 / 2.5)))
        for _ in range(wanted):
            pool, cum = own[unit.project] if rng.random() < OWN_PROJECT_SHARE else (everyone, global_cum)
            target = pool[pick(rng, cum)]
            if target != index and target not in unit.imports:
                unit.imports.append(target)
                units[target].importers += 1


# --- rendering ---------------------------------------------------------------------------------

PARAMS = ("request", "config", "data", "context", "options", "payload", "source", "target", "limit", "key")
PY_STATEMENTS = (
    "{v} = {call}({a})",
    "{v} = {call}({a}, {b})\n{i}if {v} is None:\n{i}    return {a}",
    'for item in {call}({a}) or ():\n{i}    LOGGER.debug("%s %s", {a}, item)',
    "{a}.{method}()",
    "if {a} and not {b}:\n{i}    {v} = {call}({b})",
    'try:\n{i}    {v} = {call}({a})\n{i}except ValueError:\n{i}    LOGGER.warning("bad %s", {a})',
)
TS_STATEMENTS = (
    "const {v} = {call}({a});",
    "const {v} = {call}({a}, {b});\n{i}if (!{v}) {{\n{i}  return undefined;\n{i}}}",
    "for (const item of [{call}({a})]) {{\n{i}  console.debug({a}, item);\n{i}}}",
    "{a}.{method}();",
    "if ({a} && !{b}) {{\n{i}  {call}({b});\n{i}}}",
    "try {{\n{i}  {call}({a});\n{i}}} catch (err) {{\n{i}  console.warn(err);\n{i}}}",
)
GO_STATEMENTS = (
    "{v} := {call}({a})\n{i}_ = {v}",
    "if {v}, err := {call}({a}, {b}); err != nil {{\n{i}\treturn err\n{i}}} else {{\n{i}\t_ = {v}\n{i}}}",
    "for _, item := range []any{{{call}({a})}} {{\n{i}\tfmt.Println({a}, item)\n{i}}}",
    "{a}.{method}()",
    "if {a} != nil && {b} == nil {{\n{i}\t{call}({b})\n{i}}}",
)
C_STATEMENTS = (
    "int {v} = {call}({a});",
    "int {v} = {call}({a}, {b});\n{i}if ({v} < 0) {{\n{i}    return {v};\n{i}}}",
    "for (size_t n = 0; n < {b}; n++) {{\n{i}    {call}({a});\n{i}}}",
    "if ({a} != NULL && {b} == 0) {{\n{i}    {call}({b});\n{i}}}",
)


@dataclass
class Style:
    """How one language spells names and statements."""

    func: object
    cls: object
    statements: tuple[str, ...]
    indent: str


STYLES = {
    "py": Style(snake, pascal, PY_STATEMENTS, "    "),
    "ts": Style(camel, pascal, TS_STATEMENTS, "  "),
    "go": Style(pascal, pascal, GO_STATEMENTS, "\t"),
    "c": Style(snake, pascal, C_STATEMENTS, "    "),
}


def body(rng: random.Random, lang: str, calls: list[str], params: list[str], indent: str) -> list[str]:
    """2 to 8 statements using the given callables and parameters."""
    style = STYLES[lang]
    lines = []
    for j in range(rng.randint(2, 8)):
        template = rng.choice(style.statements)
        method_words = COMMON[min(int(rng.expovariate(0.3)), len(COMMON) - 1)].lower().split("_")
        method = snake(method_words) if lang == "py" else camel(method_words) if lang == "ts" else pascal(method_words)
        text = template.format(
            v=f"value{j}",
            call=rng.choice(calls),
            a=rng.choice(params),
            b=rng.choice(params),
            i=indent,
            method=method,
        )
        first, *rest = text.split("\n")
        lines.append(indent + first)
        lines.extend(rest)
    return lines


def imported_names(rng: random.Random, target: Unit) -> list[tuple[str, list[str]]]:
    """The 1 to 3 definitions an importer uses from ``target`` (its first ones are the most used)."""
    if not target.defs:
        return []
    count = min(len(target.defs), 1 + int(rng.expovariate(1.0)))
    chosen = {min(int(rng.expovariate(0.7)), len(target.defs) - 1) for _ in range(count)}
    return [target.defs[i] for i in sorted(chosen)]


def params_for(rng: random.Random) -> list[str]:
    return rng.sample(PARAMS, rng.randint(1, 3))


COMMON_CUM = zipf_cum(len(COMMON))


@dataclass
class Repo:
    """The plan: projects by language and every unit by index."""

    projects: dict[str, list[Project]]
    units: dict[int, Unit]
    two_word: float

    def project(self, unit: Unit) -> Project:
        return self.projects[unit.lang][unit.project]


def spelled(lang: str, kind: str, words: list[str]) -> str:
    return pascal(words) if kind == "class" else STYLES[lang].func(words)  # type: ignore[operator]


def methods(rng: random.Random, two_word: float) -> list[list[str]]:
    out: dict[str, list[str]] = {}
    for _ in range(rng.randint(1, 4)):
        words = name_words(rng, COMMON_CUM, METHOD_COMMON_SHARE, two_word)
        out.setdefault("_".join(words), words)
    return list(out.values())


def py_module(repo: Repo, unit: Unit) -> str:
    project = repo.project(unit)
    return ".".join([project.name, *unit.directory.split("/"), unit.stem])


def py_imports(rng: random.Random, repo: Repo, unit: Unit, taken: set[str]) -> tuple[list[str], list[str]]:
    lines, calls = [], []
    for target in unit.imports:
        names = [spelled("py", k, w) for k, w in imported_names(rng, repo.units[target])]
        names = sorted({n for n in names if n not in taken})
        taken.update(names)
        if names:
            lines.append(f"from {py_module(repo, repo.units[target])} import {', '.join(names)}")
            calls.extend(names)
    return sorted(lines), calls


def render_py(rng: random.Random, repo: Repo, unit: Unit) -> str:
    own = [spelled("py", k, w) for k, w in unit.defs]
    imports, calls = py_imports(rng, repo, unit, set(own))
    calls = calls + own or ["print"]
    topic = unit.stem.replace("_", " ")
    out = [f'"""The {topic} part of {repo.project(unit).name}."""', "", "from __future__ import annotations", ""]
    out += ["import logging", "", *imports, "", "LOGGER = logging.getLogger(__name__)", ""]
    for (kind, words), name in zip(unit.defs, own, strict=True):
        params = params_for(rng)
        out.append("")
        if kind == "class":
            out += [f"class {name}:", f'    """Holds the {" ".join(words)} state."""', ""]
            out += [f"    def __init__(self, {params[0]}: object) -> None:", f"        self.{params[0]} = {params[0]}"]
            for method in methods(rng, repo.two_word):
                out += ["", f"    def {snake(method)}(self, {', '.join(params)}):"]
                out += [*body(rng, "py", calls, params, "        "), "        return None"]
        else:
            out += [
                f"def {name}({', '.join(params)}):",
                f'    """{words[0].capitalize()} the {" ".join(words[1:])}."""',
            ]
            out += [*body(rng, "py", calls, params, "    "), f"    return {params[0]}"]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def ts_path(repo: Repo, unit: Unit) -> str:
    return f"{repo.project(unit).base}/src/{unit.directory}/{unit.stem.replace('_', '-')}.ts"


def ts_specifier(repo: Repo, unit: Unit, target: Unit) -> str:
    if unit.project == target.project:
        rel = os.path.relpath(ts_path(repo, target), os.path.dirname(ts_path(repo, unit)))
        rel = rel if rel.startswith(".") else f"./{rel}"
        return rel[: -len(".ts")]
    return f"@mono/{repo.project(target).name}/{target.directory}/{target.stem.replace('_', '-')}"


def render_ts(rng: random.Random, repo: Repo, unit: Unit) -> str:
    own = [spelled("ts", k, w) for k, w in unit.defs]
    taken, calls, out = set(own), [], [f"// The {unit.stem.replace('_', ' ')} part of @mono/{repo.project(unit).name}."]
    for target in unit.imports:
        names = sorted({spelled("ts", k, w) for k, w in imported_names(rng, repo.units[target])} - taken)
        taken.update(names)
        if names:
            out.append(f'import {{ {", ".join(names)} }} from "{ts_specifier(repo, unit, repo.units[target])}";')
            calls.extend(n if n[0].islower() else f"new {n}" for n in names)
    calls = calls + [n if n[0].islower() else f"new {n}" for n in own]
    for (kind, words), name in zip(unit.defs, own, strict=True):
        params = params_for(rng)
        typed = ", ".join(f"{p}: unknown" for p in params)
        out.append("")
        if kind == "class":
            out += [f"export class {name} {{", f"  constructor(private readonly {params[0]}: unknown) {{}}"]
            for method in methods(rng, repo.two_word):
                out += ["", f"  {camel(method)}({typed}): unknown {{"]
                out += [*body(rng, "ts", calls, params, "    "), "    return this;", "  }"]
            out.append("}")
        else:
            out += [f"/** {words[0].capitalize()} the {' '.join(words[1:])}. */"]
            out += [f"export function {name}({typed}): unknown {{"]
            out += [*body(rng, "ts", calls, params, "  "), f"  return {params[0]};", "}"]
    return "\n".join(out) + "\n"


def go_import_path(repo: Repo, unit: Unit) -> str:
    return f"example.com/mono/{repo.project(unit).name}/{unit.directory}"


def go_imports(rng: random.Random, repo: Repo, unit: Unit) -> tuple[list[str], list[str]]:
    aliases: dict[str, str] = {}
    calls: list[str] = []
    for index in unit.imports:
        target = repo.units[index]
        names = [spelled("go", k, w) for k, w in imported_names(rng, target)]
        if target.project == unit.project and target.directory == unit.directory:
            calls.extend(names)  # same package: no import
            continue
        path = go_import_path(repo, target)
        if path not in aliases:
            short = target.directory.rsplit("/", 1)[-1]
            clash = short in aliases.values() or short == unit.directory.rsplit("/", 1)[-1]
            aliases[path] = f"{short}{len(aliases)}" if clash else short
        calls.extend(f"{aliases[path]}.{n}" for n in names)
    lines = []
    for path, alias in sorted(aliases.items()):
        default = alias == path.rsplit("/", 1)[-1]
        lines.append(f'\t"{path}"' if default else f'\t{alias} "{path}"')
    return lines, calls


def render_go(rng: random.Random, repo: Repo, unit: Unit) -> str:
    own = [spelled("go", k, w) for k, w in unit.defs]
    imports, calls = go_imports(rng, repo, unit)
    calls = calls + own
    package = unit.directory.rsplit("/", 1)[-1]
    out = [f"// Package {package}: the {unit.stem.replace('_', ' ')} part.", f"package {package}", "", "import ("]
    out += ['\t"fmt"', *(["", *imports] if imports else []), ")", "", "var _ = fmt.Sprint"]
    for (kind, words), name in zip(unit.defs, own, strict=True):
        params = params_for(rng)
        typed = ", ".join(params) + " any"
        out.append("")
        out.append(f"// {name} {'holds' if kind == 'class' else 'does'} the {' '.join(words)} work.")
        if kind == "class":
            out += [f"type {name} struct {{", f"\t{params[0]} any", "}"]
            for method in methods(rng, repo.two_word):
                out += ["", f"func (r *{name}) {pascal(method)}({typed}) error {{"]
                out += [*body(rng, "go", calls, params, "\t"), "\treturn nil", "}"]
        else:
            out += [f"func {name}({typed}) error {{"]
            out += [*body(rng, "go", calls, params, "\t"), "\treturn nil", "}"]
    return "\n".join(out) + "\n"


def c_prefix(repo: Repo, unit: Unit) -> str:
    return f"{repo.project(unit).name}_{unit.stem}"


def c_header_name(repo: Repo, unit: Unit) -> str:
    return f"{repo.project(unit).name}/{unit.directory}/{unit.stem}.h"


def c_public(repo: Repo, unit: Unit, kind: str, words: list[str]) -> str:
    return pascal(words) if kind == "class" else f"{c_prefix(repo, unit)}_{snake(words)}"


def render_c_header(repo: Repo, unit: Unit) -> str:
    guard = c_header_name(repo, unit).upper().replace("/", "_").replace(".", "_")
    out = [f"/* The {unit.stem.replace('_', ' ')} interface. */", f"#ifndef {guard}", f"#define {guard}", ""]
    out += ["#include <stddef.h>", ""]
    for kind, words in unit.defs:
        name = c_public(repo, unit, kind, words)
        if kind == "class":
            out += [f"typedef struct {snake(words)} {{", "    long id;", "    const char *label;", f"}} {name};", ""]
        else:
            out += [
                f"/* {words[0].capitalize()} the {' '.join(words[1:])}. */",
                f"int {name}(long request, long limit);",
            ]
    out += ["", f"#endif /* {guard} */"]
    return "\n".join(out) + "\n"


def render_c_source(rng: random.Random, repo: Repo, unit: Unit) -> str:
    out = [f'#include "{c_header_name(repo, unit)}"']
    calls: list[str] = []
    for index in unit.imports:
        target = repo.units[index]
        out.append(f'#include "{c_header_name(repo, target)}"')
        calls += [c_public(repo, target, k, w) for k, w in imported_names(rng, target) if k == "func"]
    out += ["", "#include <stdio.h>", ""]
    helpers = sorted({snake(name_words(rng, COMMON_CUM, 0.7)) for _ in range(rng.randint(1, 3))})
    for helper in helpers:
        out += [
            f"static int {helper}(long request, long limit) {{",
            "    (void)limit;",
            "    return (int)request;",
            "}",
            "",
        ]
    calls = calls + helpers
    for kind, words in unit.defs:
        if kind == "class":
            continue
        out += [f"int {c_public(repo, unit, kind, words)}(long request, long limit) {{"]
        out += [*body(rng, "c", calls, ["request", "limit"], "    "), "    return 0;", "}", ""]
    return "\n".join(out).rstrip() + "\n"


# --- files on disk -----------------------------------------------------------------------------


def unit_files(rng: random.Random, repo: Repo, unit: Unit) -> list[tuple[str, str]]:
    base = repo.project(unit).base
    if unit.lang == "py":
        return [(f"{base}/src/{repo.project(unit).name}/{unit.directory}/{unit.stem}.py", render_py(rng, repo, unit))]
    if unit.lang == "ts":
        return [(ts_path(repo, unit), render_ts(rng, repo, unit))]
    if unit.lang == "go":
        return [(f"{base}/{unit.directory}/{unit.stem}.go", render_go(rng, repo, unit))]
    return [
        (f"{base}/include/{c_header_name(repo, unit)}", render_c_header(repo, unit)),
        (f"{base}/src/{unit.directory}/{unit.stem}.c", render_c_source(rng, repo, unit)),
    ]


def depends_on(repo: Repo, project: Project) -> list[str]:
    names = {repo.project(repo.units[t]).name for u in project.units for t in repo.units[u].imports}
    return sorted(names - {project.name})


def manifest_files(repo: Repo) -> list[tuple[str, str]]:
    """pyproject.toml, package.json + tsconfig.json, go.mod (+ go.work), Makefile, __init__.py, root files."""
    out: list[tuple[str, str]] = []
    for p in repo.projects["py"]:
        deps = "".join(f'    "{d}",\n' for d in depends_on(repo, p))
        text = f'[project]\nname = "{p.name}"\nversion = "0.1.0"\ndependencies = [\n{deps}]\n'
        out.append((f"{p.base}/pyproject.toml", text))
        for directory in ["", *p.dirs]:
            sub = f"/{directory}" if directory else ""
            out.append((f"{p.base}/src/{p.name}{sub}/__init__.py", f'"""{p.name}{sub.replace("/", ".")}."""\n'))
    for p in repo.projects["ts"]:
        deps = ",\n".join(f'    "@mono/{d}": "workspace:*"' for d in depends_on(repo, p))
        text = f'{{\n  "name": "@mono/{p.name}",\n  "version": "0.1.0",\n  "dependencies": {{\n{deps}\n  }}\n}}\n'
        out.append((f"{p.base}/package.json", text))
        tsconfig = '{\n  "compilerOptions": {"strict": true, "baseUrl": ".", "paths": {"@mono/*": ["../*/src"]}}\n}\n'
        out.append((f"{p.base}/tsconfig.json", tsconfig))
    for p in repo.projects["go"]:
        out.append((f"{p.base}/go.mod", f"module example.com/mono/{p.name}\n\ngo 1.21\n"))
    uses = "".join(f"\t./{p.name}\n" for p in repo.projects["go"])
    out.append(("go/go.work", f"go 1.21\n\nuse (\n{uses})\n"))
    for p in repo.projects["c"]:
        out.append((f"{p.base}/Makefile", f"CFLAGS += -Iinclude -Wall\n\nlib{p.name}.a: $(wildcard src/*/*.c)\n"))
    out.append(("README.md", "# Synthetic monorepo\n\nGenerated by hybridmap's benchmarks/gen_monorepo.py.\n"))
    out.append((".gitignore", "node_modules/\n__pycache__/\n*.o\n"))
    return out


def write_all(root: Path, files: list[tuple[str, str]], made: set[str]) -> None:
    for rel, text in files:
        parent = os.path.dirname(rel)
        if parent not in made:
            (root / parent).mkdir(parents=True, exist_ok=True)
            made.add(parent)
        (root / rel).write_text(text, encoding="utf-8")


def plan(n_files: int, seed: int) -> Repo:
    rng = random.Random(seed)
    counts = split_counts(n_files, rng)
    counts["py"] = max(2, int(counts["py"] / 1.12))  # room for __init__.py files and manifests
    projects: dict[str, list[Project]] = {}
    units: dict[int, Unit] = {}
    first = 0
    for lang, count in counts.items():
        projects[lang], planned = plan_language(lang, count, first, seed, two_word_share(n_files))
        units.update((u.index, u) for u in planned)
        first += count
    repo = Repo(projects, units, two_word_share(n_files))
    for lang in counts:
        plan_imports(projects[lang], units, seed, lang)
    return repo


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Scale Bench",
    "GIT_AUTHOR_EMAIL": "scale@bench.invalid",
    "GIT_COMMITTER_NAME": "Scale Bench",
    "GIT_COMMITTER_EMAIL": "scale@bench.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}
GIT_FLAGS = ["-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", "-c", "core.fsmonitor=false"]
GIT_FLAGS += ["-c", "gc.auto=0", "-c", "init.defaultBranch=main"]


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *GIT_FLAGS, "-C", str(root), *args],
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def commit_all(root: Path, message: str) -> str:
    if not (root / ".git").is_dir():
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)
    return git(root, "rev-parse", "HEAD")


def write_tiny(root: Path, count: int) -> None:
    """``count`` one-line Python files, 1,000 per directory, under ``bulk/``."""
    for start in range(0, count, 1000):
        directory = root / "bulk" / f"d{start // 1000:04d}"
        directory.mkdir(parents=True, exist_ok=True)
        for j in range(start, min(count, start + 1000)):
            (directory / f"f{j % 1000:03d}.py").write_text(f"VALUE_{j} = {j}\n")


def edit_target(repo: Repo) -> str:
    """A Python file at the 90th percentile of how many files import it (a mid-popularity file)."""
    python = sorted((u for u in repo.units.values() if u.lang == "py"), key=lambda u: (-u.importers, u.index))
    unit = python[len(python) // 10]
    return f"{repo.project(unit).base}/src/{repo.project(unit).name}/{unit.directory}/{unit.stem}.py"


def generate(n_files: int, seed: int = 0, out: Path | None = None, tiny: int = 0) -> dict[str, object]:
    """Write the monorepo (and its manifest); reuse it when a manifest of the same request exists."""
    out = out or SCALE / (f"n{n_files}" + (f"-tiny{tiny}" if tiny else "") + (f"-s{seed}" if seed else ""))
    manifest_path, root = out / "manifest.json", out / "repo"
    request = {"n_files": n_files, "seed": seed, "tiny": tiny, "version": GENERATOR_VERSION}
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("request") == request and (root / ".git").is_dir():
            return manifest
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    root.mkdir(parents=True)
    start = time.perf_counter()
    repo = plan(n_files, seed)
    made: set[str] = set()
    counts: Counter[str] = Counter()
    for index in sorted(repo.units):
        files = unit_files(random.Random(f"{seed}:{index}"), repo, repo.units[index])
        write_all(root, files, made)
        counts.update(os.path.splitext(rel)[1] for rel, _ in files)
    extra = manifest_files(repo)
    write_all(root, extra, made)
    counts.update(os.path.splitext(rel)[1] or os.path.basename(rel) for rel, _ in extra)
    if tiny:
        write_tiny(root, tiny)
        counts[".py (bulk)"] = tiny
    written = time.perf_counter() - start
    head = commit_all(root, f"synthetic monorepo: {n_files} files, seed {seed}")
    manifest = {
        "request": request,
        "root": str(root),
        "files": sum(counts.values()),
        "by_extension": dict(sorted(counts.items())),
        "projects": {lang: len(p) for lang, p in repo.projects.items()},
        "edit_file": edit_target(repo),
        "head": head,
        "seconds_write": round(written, 2),
        "seconds_git": round(time.perf_counter() - start - written, 2),
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n_files", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="directory for repo/ and manifest.json")
    parser.add_argument("--tiny", type=int, default=0, help="also add this many one-line files under bulk/")
    args = parser.parse_args()
    print(json.dumps(generate(args.n_files, args.seed, args.out, args.tiny), indent=2))


if __name__ == "__main__":
    main()
