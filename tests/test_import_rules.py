"""The layers hold: which part of reporter imports which, checked against tests/import_rules.toml.

Every `import reporter...` and `from . import ...` of every module (inside
functions too) is read with `ast`; an import that breaks a rule of the table
fails, naming the importing module, the imported one and the rule. The
table's `[pending]` list holds the imports issue 31 is removing: each must
still be there (a mended one is taken off the list) and no other may appear.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = Path(__file__).with_name("import_rules.toml")


def modules(package_root: Path) -> Iterator[tuple[str, str, ast.Module]]:
    """(module name, its package, its syntax tree) of every module below package_root."""
    for path in sorted(package_root.rglob("*.py")):
        parts = path.relative_to(package_root.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        package = module if is_package else module.rpartition(".")[0]
        yield module, package, ast.parse(path.read_text(encoding="utf-8"), str(path))


def source(package: str, node: ast.ImportFrom) -> str:
    """The module a `from ... import` in `package` reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(package_root: Path) -> set[tuple[str, str]]:
    """(importing module, imported module) for every import of a `reporter` module below package_root."""
    found: set[tuple[str, str]] = set()
    for module, package, tree in modules(package_root):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = source(package, node)
                # `from .pkg import mod` names a module where one is called so: count the module itself
                names = [f"{target}.{a.name}" if _is_module(package_root, f"{target}.{a.name}") else target
                         for a in node.names]
                found |= {(module, name) for name in names if name.split(".")[0] == "reporter"}
            elif isinstance(node, ast.Import):
                found |= {(module, a.name) for a in node.names if a.name.split(".")[0] == "reporter"}
    return found


def _is_module(package_root: Path, name: str) -> bool:
    """Whether a dotted name is a module or package of the tree (not a name defined in one)."""
    path = package_root.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def part(module: str) -> str:
    """The part a module belongs to: `reporter.site.render` -> `site`, `reporter.build` -> `build`."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "reporter"


def broken(edges: set[tuple[str, str]], table: dict) -> set[str]:
    """Every import that breaks a rule, as `importer -> imported: rule name`."""
    out = set()
    for rule in table["rule"]:
        for importer, imported in edges:
            src, dst = part(importer), part(imported)
            if src not in rule["from"]:
                continue
            if src == dst:
                continue
            if dst in rule.get("never", ()):
                out.add(f"{importer} -> {imported}: {rule['name']}")
            through = rule.get("through", {})
            if dst in through and not any(imported == m or imported.startswith(m + ".") for m in through[dst]):
                out.add(f"{importer} -> {imported}: {rule['name']}")
    return out


def test_no_import_breaks_the_layers():
    table = tomllib.loads(RULES.read_text(encoding="utf-8"))
    found = broken(imports(ROOT / "reporter"), table)
    pending = set(table.get("pending", {}).get("imports", []))
    new, mended = sorted(found - pending), sorted(pending - found)
    assert not new, "imports that break a rule of tests/import_rules.toml:\n" + "\n".join(new)
    assert not mended, "mended: take these off [pending] in tests/import_rules.toml:\n" + "\n".join(mended)


def test_a_forbidden_import_is_caught(tmp_path):
    """The check itself: a stage importing the site, pool importing a stage, the site reading a stage's
    internals, at module level or inside a function, absolute or relative, are each reported."""
    package = tmp_path / "reporter"
    for name in ("site", "routing", "pool", "digest"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "routing" / "artifacts.py").write_text("")
    (package / "routing" / "engine.py").write_text("def f():\n    from ..site import links\n")
    (package / "pool" / "reader.py").write_text("import reporter.digest.records\n")
    (package / "site" / "render.py").write_text("from ..routing.artifacts import Release\n"
                                                "from ..routing import engine\n")
    (package / "digest" / "merge.py").write_text("from . import records\nfrom ..pool import reader\n")
    table = tomllib.loads(RULES.read_text(encoding="utf-8"))
    assert broken(imports(package), table) == {
        "reporter.routing.engine -> reporter.site: no stage imports the site, the build, the command-line modules or "
        "the configuration loader",
        "reporter.routing.engine -> reporter.site: routing never imports screening, the site or fetch",
        "reporter.pool.reader -> reporter.digest.records: the pool readers are the bottom layer: they import "
        "no stage",
        "reporter.site.render -> reporter.routing.engine: the site reads the stages only through their readers",
    }


def test_fetch_reading_the_digest_or_the_pool_reading_a_stage_is_caught(tmp_path):
    """The check itself (issue 31, item 3): fetch reading the digest or routing, the pool reading fetch."""
    package = tmp_path / "reporter"
    for name in ("fetch", "digest", "routing", "pool", "pool/sources"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "fetch" / "run.py").write_text("from ..digest import records\nfrom ..pool.sources import fold\n")
    (package / "fetch" / "pages.py").write_text("def f():\n    import reporter.routing\n")
    (package / "pool" / "sources" / "fold.py").write_text("from ...fetch import run\n")
    table = tomllib.loads(RULES.read_text(encoding="utf-8"))
    fetch_rule = "fetch never imports routing or the digest: its source readers and the paper record are the pool's"
    assert broken(imports(package), table) == {
        f"reporter.fetch.run -> reporter.digest: {fetch_rule}",
        f"reporter.fetch.pages -> reporter.routing: {fetch_rule}",
        "reporter.pool.sources.fold -> reporter.fetch.run: the pool readers are the bottom layer: they import no stage",
    }


def test_the_panel_and_the_two_that_ask_it_are_kept_apart(tmp_path):
    """Issue 31, item 1: the panel importing a stage (screening, the digest, the configuration loader), the digest
    importing screening and screening the digest, at module level or inside a function, absolute or relative, are
    each reported; the two asking the panel is not."""
    package = tmp_path / "reporter"
    for name in ("panel", "screening", "digest", "digest/judge"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text("")
    (package / "panel" / "runner.py").write_text("from ..screening import answer\n")
    (package / "panel" / "store.py").write_text("def f():\n    import reporter.digest.records\n")
    (package / "panel" / "plan.py").write_text("from ..config import load_workspace\n")
    (package / "screening" / "answer.py").write_text("from ..panel.votes import Vote\n")
    (package / "screening" / "report.py").write_text("def f():\n    from ..digest import archive\n")
    (package / "digest" / "records.py").write_text("")
    (package / "digest" / "archive.py").write_text("")
    (package / "digest" / "judge" / "run.py").write_text("from ...panel.runner import run_tasks\n"
                                                          "from ...screening.answer import SCREEN_ANSWER\n")
    table = tomllib.loads(RULES.read_text(encoding="utf-8"))
    assert broken(imports(package), table) == {
        "reporter.panel.runner -> reporter.screening.answer: the panel imports no stage",
        "reporter.panel.store -> reporter.digest.records: the panel imports no stage",
        "reporter.panel.plan -> reporter.config: the panel imports no stage",
        "reporter.screening.report -> reporter.digest.archive: the digest never imports screening, nor screening "
        "the digest",
        "reporter.digest.judge.run -> reporter.screening.answer: the digest never imports screening, nor screening "
        "the digest",
    }

def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """Every group of modules that import each other round a loop (Tarjan's strongly connected components)."""
    graph: dict[str, set[str]] = {}
    for importer, imported in edges:
        graph.setdefault(importer, set()).add(imported)
        graph.setdefault(imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so a deep chain of imports cannot overflow the stack
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle():
    # The settings parser is a leaf (reporter.settings) that each stage's config.py imports, and the workspace
    # (reporter.config) imports each stage's config.py: a stage's settings never import the workspace back.
    loops = cycles(imports(ROOT / "reporter"))
    assert not loops, "modules importing each other round a loop:\n" + "\n".join(" <-> ".join(g) for g in loops)


def package_of(module: str) -> str:
    """A module's package for the package-level graph: reporter's first-level part (`reporter.site.render` ->
    `reporter.site`; a top-level module, `reporter.config`, is its own)."""
    return ".".join(module.split(".")[:2])


def package_arrows(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """(importing package, imported package) for every import between two packages of reporter/."""
    arrows = {(package_of(a), package_of(b)) for a, b in edges}
    return {(a, b) for a, b in arrows if a != b and a != "reporter" and b != "reporter"}


def package_cycles(edges: set[tuple[str, str]]) -> list[str]:
    """Each group of packages that import each other round a loop, with the module imports that make it."""
    arrows = package_arrows(edges)
    out = []
    for group in cycles(arrows):
        members = set(group)
        why = sorted(f"{a} -> {b}" for a, b in edges
                     if package_of(a) in members and package_of(b) in members and package_of(a) != package_of(b))
        out.append(" <-> ".join(group) + ":\n  " + "\n  ".join(why))
    return out


def test_no_package_level_cycle():
    """Issue 31, item 4: between any two packages of reporter/, imports run one way (the stages below the edge,
    reporter/commands/, which alone imports the configuration loader and every stage)."""
    loops = package_cycles(imports(ROOT / "reporter"))
    assert not loops, "packages importing each other round a loop:\n" + "\n".join(loops)


def test_a_package_level_cycle_is_caught(tmp_path):
    """The check itself: two stages importing each other through different modules (no module-level loop), and
    the configuration loader importing a stage whose module imports it back, are each reported, naming the loop
    and its imports; the command line importing both is not a loop."""
    package = _tree(tmp_path, {
        "reporter.config": "from .digest import config\n",
        "reporter.commands.screen": "from ..config import load\nfrom ..screening import run\nfrom ..digest import weeks\n",
        "reporter.screening.config": "",
        "reporter.screening.run": "def f():\n    from ..certify import gate\n",
        "reporter.digest.config": "",
        "reporter.digest.weeks": "from ..config import Workspace\n",
        "reporter.certify.gate": "",
        "reporter.certify.strata": "from ..screening.config import ScreenSettings\n",
    })
    edges = imports(package)
    assert not cycles(edges), "no module-level loop: only the packages loop"
    assert package_cycles(edges) == [
        "reporter.certify <-> reporter.screening:\n"
        "  reporter.certify.strata -> reporter.screening.config\n"
        "  reporter.screening.run -> reporter.certify.gate",
        "reporter.config <-> reporter.digest:\n"
        "  reporter.config -> reporter.digest.config\n"
        "  reporter.digest.weeks -> reporter.config",
    ]


# Names with one home (issue 31, item 3): the calendar, the paper record, the one JSON parser. No other module
# defines them, and every module imports them from their home, never through a module that imports them itself.
HOMES = {**{name: "reporter.isoweek" for name in
            ("parse_week", "is_week", "week_start", "week_of", "shift_week", "week_range")},
         "Record": "reporter.pool.record", "parse_json": "reporter.files", "json_loads": "reporter.text"}
# Read through another module by code another branch of issue 31 is rewriting (reporter/digest/judge/); each must
# still be there (a mended one is taken off, with the line that served it) and no other may appear.
PENDING_DETOURS: set[str] = set()


def detours(package_root: Path) -> set[str]:
    """`M defines N` for a name of HOMES defined outside its home; `M imports N from X` for one imported from
    elsewhere."""
    found: set[str] = set()
    for module, package, tree in modules(package_root):
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and HOMES.get(node.name, module) != module:
                found.add(f"{module} defines {node.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = source(package, node)
                found |= {f"{module} imports {a.name} from {target}" for a in node.names
                          if target.split(".")[0] == "reporter" and HOMES.get(a.name, target) != target}
    return found


def test_shared_names_are_read_from_their_home():
    found = detours(ROOT / "reporter")
    new, mended = sorted(found - PENDING_DETOURS), sorted(PENDING_DETOURS - found)
    assert not new, "read these from their home (HOMES in tests/test_import_rules.py):\n" + "\n".join(new)
    assert not mended, "mended: take these off PENDING_DETOURS, and the import that served them:\n" + "\n".join(mended)


def test_a_detour_is_caught(tmp_path):
    """The check itself: a second week_start, and week_start read through the digest's archive, are reported."""
    package = tmp_path / "reporter"
    for name in ("digest", "fetch"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "isoweek.py").write_text("def week_start(week):\n    pass\n")
    (package / "digest" / "archive.py").write_text("from ..isoweek import week_start\n")
    (package / "fetch" / "run.py").write_text("def f():\n    from ..digest.archive import week_start\n")
    (package / "fetch" / "pages.py").write_text("def week_start(week):\n    pass\n")
    assert detours(package) == {"reporter.fetch.run imports week_start from reporter.digest.archive",
                                "reporter.fetch.pages defines week_start"}


def _tree(root: Path, modules: dict[str, str]) -> Path:
    """A fake `reporter` package below root: each dotted module name with its source, packages made on the way."""
    for name, text in modules.items():
        parts = name.split(".")
        for depth in range(1, len(parts)):
            package = root.joinpath(*parts[:depth])
            package.mkdir(exist_ok=True)
            (package / "__init__.py").touch()
        root.joinpath(*parts).with_suffix(".py").write_text(text)
    return root / "reporter"


def test_every_never_of_the_table_fails_on_a_deliberate_break(tmp_path):
    """Issue 31, item 7: for every rule, every part it is from and every part it names as never (or reads only
    through a reader), a module of that part importing the forbidden one, inside a function, is reported under
    that rule's name; so no rule of the table is one the check cannot see broken."""
    table = tomllib.loads(RULES.read_text(encoding="utf-8"))
    packages = set(table["stages"]) | set(table["panel"])
    for number, rule in enumerate(table["rule"]):
        for src in rule["from"]:
            targets = [f"reporter.{dst}" for dst in rule.get("never", ()) if dst != src]
            targets += [f"reporter.{dst}.internals" for dst in rule.get("through", {}) if dst != src]
            if not targets:
                continue
            body = "def f():\n" + "".join(f"    import {t}\n" for t in targets)
            # a module inside the part: reporter.<stage>.breaks for a package, reporter.<leaf> for a top-level one
            importer = f"reporter.{src}.breaks" if src in packages else f"reporter.{src}"
            root = tmp_path / f"{number}-{src}"
            root.mkdir()
            found = broken(imports(_tree(root, {importer: body})), table)
            missing = {f"{importer} -> {t}: {rule['name']}" for t in targets} - found
            assert not missing, f"rule {rule['name']!r} does not see these breaks:\n" + "\n".join(sorted(missing))


def test_a_stage_importing_a_command_line_module_is_caught(tmp_path):
    """Issue 31, item 4: the command-line modules are `cli` and the `commands` package (one module per verb, at the
    edge); a stage, the site, the panel, the pool or the build importing one, or a stage the configuration loader,
    is reported; `cli` importing them, and a verb importing the configuration loader and any stage, is not."""
    package = _tree(tmp_path, {
        "reporter.cli": "import reporter.commands.route\n",
        "reporter.config": "from .commands import digest\n",
        "reporter.build": "def f():\n    from .commands.render import register\n",
        "reporter.commands.route": "from ..config import load_workspace\nfrom ..routing import engine\n"
                                   "from ..digest.archive import published_weeks\nfrom . import digest\n",
        "reporter.commands.digest": "from ..site import manifest\nfrom ..screening import plan\n",
        "reporter.routing.engine": "def f():\n    from ..commands import route\n",
        "reporter.digest.archive": "",
        "reporter.digest.weeks": "from ..config import Workspace\nimport reporter.commands.build\n",
        "reporter.site.render": "from .. import cli\n",
        "reporter.site.manifest": "",
        "reporter.mail.send": "from ..commands.fetch import register\n",
        "reporter.routing.release": "from ..screening import plan\nfrom ..fetch import pages\n",
        "reporter.panel.runner": "from ..commands.digest import register\n",
        "reporter.pool.overlay": "from ..config import Workspace\n",
        "reporter.screening.plan": "",
        "reporter.fetch.pages": "",
    })
    table = tomllib.loads(RULES.read_text(encoding="utf-8"))
    stage = "no stage imports the site, the build, the command-line modules or the configuration loader"
    routing = "routing never imports screening, the site or fetch"
    edge = "the build and the workspace loader never import the command line: the commands call them, not back"
    assert broken(imports(package), table) == {
        f"reporter.config -> reporter.commands.digest: {edge}",
        f"reporter.build -> reporter.commands.render: {edge}",
        f"reporter.routing.engine -> reporter.commands.route: {stage}",
        f"reporter.digest.weeks -> reporter.config: {stage}",
        f"reporter.digest.weeks -> reporter.commands.build: {stage}",
        "reporter.site.render -> reporter.cli: the site never imports the command-line modules, the build or the "
        "configuration loader",
        "reporter.mail.send -> reporter.commands.fetch: mail reads the site only through its manifest reader, and "
        "imports no command line, build or configuration loader",
        f"reporter.routing.release -> reporter.screening.plan: {routing}",
        f"reporter.routing.release -> reporter.fetch.pages: {routing}",
        "reporter.panel.runner -> reporter.commands.digest: the panel imports no stage",
        "reporter.pool.overlay -> reporter.config: the pool readers are the bottom layer: they import no stage",
        f"reporter.pool.overlay -> reporter.config: {stage}",
    }
