"""The shape of the package: package-level import arrows and cycles, module and function sizes.

Every import of every module under reporter/ is read (inside functions too,
relative and absolute), as tests/test_import_rules.py reads them; a
"package" is reporter's first-level part (`reporter.screening`, or a
top-level module such as `reporter.config`). Prints, for the tree given
(default: this checkout):

- the arrows between packages (A -> B: some module of A imports one of B),
  with how many imports make each;
- the package-level cycles (pairs importing each other, and longer loops);
- the modules over 400 lines, and the longest functions.

Run it on two commits to compare them (issue 31's before and after):

    .venv/bin/python bench/house.py [TREE] [--json]
    git worktree add /tmp/old 1468d88 && .venv/bin/python bench/house.py /tmp/old
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def modules(tree: Path) -> dict[str, Path]:
    """reporter's module names -> their files."""
    base = tree / "reporter"
    out = {}
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(tree).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> list[str]:
    """The reporter modules `name` imports (the longest known prefix of each imported name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                stem = ".".join(anchor + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets = [f"{stem}.{a.name}" for a in node.names] + [stem]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            while parts and ".".join(parts) not in known:
                parts.pop()
            if parts and parts[0] == "reporter" and len(parts) > 1:
                found.append(".".join(parts))
                break
    return found


def part(module: str) -> str:
    """A module's package: reporter's first-level part."""
    return ".".join(module.split(".")[:2])


def cycles(arrows: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in arrows:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def functions(path: Path) -> list[tuple[int, str]]:
    """(lines, name) of every function and method of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.end_lineno - node.lineno + 1, node.name))
    return out


def measure(tree: Path) -> dict:
    mods = modules(tree)
    known = set(mods)
    edges: Counter[tuple[str, str]] = Counter()
    count = 0
    for name, path in mods.items():
        for target in imports_of(name, path, known):
            count += 1
            a, b = part(name), part(target)
            if a != b:
                edges[(a, b)] += 1
    sizes = {str(p.relative_to(tree)): sum(1 for _ in p.open(encoding="utf-8")) for p in mods.values()}
    funcs = sorted(((n, f"{p.relative_to(tree)}:{f}") for p in mods.values() for n, f in functions(p)), reverse=True)
    return {"modules": len(mods), "imports": count,
            "arrows": {f"{a} -> {b}": n for (a, b), n in sorted(edges.items())},
            "mutual": sorted(f"{a} <-> {b}" for (a, b) in edges if (b, a) in edges and a < b),
            "cycles": cycles(set(edges)),
            "over_400": {k: v for k, v in sorted(sizes.items(), key=lambda kv: -kv[1]) if v > 400},
            "largest_module": max(sizes.items(), key=lambda kv: kv[1]),
            "longest_functions": [f"{f} {n}" for n, f in funcs[:10]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", type=Path, default=ROOT, help="a checkout (default: this one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    m = measure(args.tree.resolve())
    if args.json:
        print(json.dumps(m, indent=1))
        return
    print(f"{m['modules']} modules, {m['imports']} imports of reporter modules, {len(m['arrows'])} package arrows")
    print(f"packages importing each other: {len(m['mutual'])}")
    for pair in m["mutual"]:
        print(f"  {pair}")
    print(f"package-level cycles (strongly connected, more than one package): {len(m['cycles'])}")
    for c in m["cycles"]:
        print(f"  {len(c)}: {', '.join(c)}")
    print(f"modules over 400 lines: {len(m['over_400'])}; largest {m['largest_module'][0]} ({m['largest_module'][1]})")
    for k, v in m["over_400"].items():
        print(f"  {v:5d} {k}")
    print("longest functions:")
    for f in m["longest_functions"]:
        print(f"  {f}")


if __name__ == "__main__":
    main()
