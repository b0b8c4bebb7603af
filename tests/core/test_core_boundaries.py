"""Dependencies point one way (docs/architecture.md), checked by parsing every import.

apps -> models, properties -> models, models -> nice_attendre; the core knows nothing of
OpenFlow. Every ``import`` and ``from ... import`` counts, at module level or inside a
function, relative ones resolved, and so do ``importlib.import_module("...")`` and
``__import__("...")`` with a literal name. A failure names the file, the line and the import.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Source folder -> installed package (pyproject's [tool.setuptools.package-dir]).
PACKAGES = {
    "nice_attendre": "nice_attendre",
    "models": "nice_attendre.models",
    "apps": "nice_attendre.apps",
    "properties": "nice_attendre.properties",
    "benchmarks": "nice_attendre.benchmarks",
}

# The front end (nice_attendre/frontend/, and discovery, nice_attendre/discover/) may import
# everything: it builds networks from names. So may the experiments (benchmarks/). Nothing
# else imports them.
FRONT_END_FOLDERS = (ROOT / "nice_attendre" / "frontend", ROOT / "nice_attendre" / "discover")

OPENFLOW = ("nice_attendre.models", "nice_attendre.apps", "nice_attendre.properties",
            "models", "apps", "properties")
APPS = ("nice_attendre.apps", "apps")


def module_name(path: Path) -> str:
    """The installed dotted name of a source file, e.g. models/protocols/x.py ->
    nice_attendre.models.protocols.x."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    dotted = ".".join([PACKAGES[parts[0]], *parts[1:]])
    return dotted.removesuffix(".__init__")


def imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``source`` imports, anywhere in it."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[:len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.append((node.lineno, base))
            # `from nice_attendre import models` imports the subpackage.
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if (name in ("import_module", "__import__") and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append((node.lineno, node.args[0].value))
    return found


def violations(folder: str, forbidden: tuple[str, ...], skip=lambda path: False) -> tuple[int, list[str]]:
    """(number of files parsed, 'file:line: module imports name' for each forbidden import)."""
    files = sorted(path for path in (ROOT / folder).rglob("*.py") if not skip(path))
    bad = []
    for path in files:
        module = module_name(path)
        for line, name in imports(path.read_text(encoding="utf-8"), module,
                                  path.name == "__init__.py"):
            if any(name == prefix or name.startswith(prefix + ".") for prefix in forbidden):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {name}")
    return len(files), bad


def is_front_end(path: Path) -> bool:
    return any(folder in path.parents for folder in FRONT_END_FOLDERS)


def test_core_imports_nothing_of_openflow() -> None:
    parsed, bad = violations("nice_attendre", OPENFLOW, skip=is_front_end)
    print("\n".join(bad))
    assert parsed >= 8  # __init__, checker, errors, property, report, result, system, trace
    assert not bad, "the core must not import the OpenFlow model, apps or properties:\n" + "\n".join(bad)


def test_models_do_not_import_apps() -> None:
    parsed, bad = violations("models", APPS)
    print("\n".join(bad))
    assert parsed >= 1
    assert not bad, "models/ must not import apps (apps -> models only):\n" + "\n".join(bad)


def test_properties_do_not_import_apps() -> None:
    parsed, bad = violations("properties", APPS)
    print("\n".join(bad))
    assert parsed >= 1
    assert not bad, "properties/ must not import apps:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, expected", [
    ("import nice_attendre.models.network", "nice_attendre.models.network"),
    ("from nice_attendre import apps", "nice_attendre.apps"),
    ("from nice_attendre.properties.flows import x", "nice_attendre.properties.flows"),
    ("def f():\n    from nice_attendre.models import app\n", "nice_attendre.models"),
    ("from .models import network", "nice_attendre.models"),
    ("from . import properties", "nice_attendre.properties"),
    ("import importlib\nimportlib.import_module('nice_attendre.apps.route_flow')",
     "nice_attendre.apps.route_flow"),
    ("import models.network", "models.network"),
])
def test_the_scanner_sees_every_kind_of_import(source: str, expected: str) -> None:
    names = [name for _line, name in imports(source, "nice_attendre.checker", False)]
    assert expected in names
    assert any(expected == p or expected.startswith(p + ".") for p in OPENFLOW)


def test_the_scanner_resolves_relative_imports_from_subpackages() -> None:
    source = "x = 1\nfrom ...apps import route_flow\nfrom .. import network\n"
    found = imports(source, "nice_attendre.models.protocols.openflow", False)
    assert (2, "nice_attendre.apps") in found and (2, "nice_attendre.apps.route_flow") in found
    assert (3, "nice_attendre.models.network") in found
    assert module_name(ROOT / "models" / "protocols" / "__init__.py") == "nice_attendre.models.protocols"
    assert module_name(ROOT / "nice_attendre" / "checker.py") == "nice_attendre.checker"


#: The front end and the experiments: the core, models, apps and properties never import them.
FRONT_END_MODULES = ("nice_attendre.frontend", "nice_attendre.discover", "nice_attendre.benchmarks")


@pytest.mark.parametrize("folder", ["models", "apps", "properties"])
def test_the_domain_does_not_import_the_front_end(folder: str) -> None:
    parsed, bad = violations(folder, FRONT_END_MODULES)
    assert parsed >= 1
    assert not bad, f"{folder}/ must not import the front end (front end -> domain only):\n" + "\n".join(bad)


def test_the_core_does_not_import_the_front_end() -> None:
    """The search and its data know nothing of the command line or the experiments."""
    # The package's __init__ re-exports the public API (verify, assert_holds) from the front end.
    package_init = ROOT / "nice_attendre" / "__init__.py"
    parsed, bad = violations("nice_attendre", FRONT_END_MODULES,
                             skip=lambda path: is_front_end(path) or path == package_init)
    assert parsed >= 8
    assert not bad, "the core must not import the front end:\n" + "\n".join(bad)


def test_no_command_module_imports_the_cli_group() -> None:
    """The CLI group registers the commands; the commands take what they share from
    ``cli_common.py``, never from ``cli.py`` (no cli <-> commands cycle)."""
    commands = {"commands.py", "variants_cmd.py", "delay_cmd.py", "replay_cmd.py", "cli_common.py"}
    parsed, bad = violations("nice_attendre", ("nice_attendre.frontend.cli",), skip=lambda path: path.name not in commands)
    assert parsed == len(commands)
    assert not bad, "a command module imports the CLI group:\n" + "\n".join(bad)


def module_level_imports(path: Path, module: str) -> list[str]:
    """What importing ``path`` imports at once: module-level imports (inside ``try`` and
    plain ``if`` blocks too), but not those under ``if TYPE_CHECKING`` (types only) nor
    those inside functions (loaded when the function runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        inner = ast.walk(node) if isinstance(node, (ast.Try, ast.If)) else [node]
        for item in inner:
            if isinstance(item, ast.Import):
                found.extend(alias.name for alias in item.names)
            elif isinstance(item, ast.ImportFrom):
                base = item.module or ""
                if item.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - (item.level - 1)]
                    base = ".".join(parts + ([item.module] if item.module else []))
                found.append(base)
                found.extend(f"{base}.{alias.name}" for alias in item.names)
    return found


def test_no_import_cycles() -> None:
    import networkx as nx

    modules = {module_name(path): path for folder in PACKAGES for path in (ROOT / folder).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, path in modules.items():
        graph.add_edges_from((module, name) for name in module_level_imports(path, module)
                             if name in modules and name != module)
    assert graph.number_of_edges() > 100  # the scanner sees the imports
    cycles = sorted((cycle for cycle in nx.simple_cycles(graph)), key=len)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles[:10])


def test_the_cycle_scanner_counts_module_level_imports_only(tmp_path: Path) -> None:
    source = "from __future__ import annotations\nfrom typing import TYPE_CHECKING\n" \
             "import nice_attendre.models.network\nif TYPE_CHECKING:\n    import nice_attendre.api\n" \
             "def f():\n    import nice_attendre.cli\n"
    path = tmp_path / "x.py"
    path.write_text(source)
    names = module_level_imports(path, "nice_attendre.x")
    assert "nice_attendre.models.network" in names
    assert "nice_attendre.api" not in names and "nice_attendre.cli" not in names
