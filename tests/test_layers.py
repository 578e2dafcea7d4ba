"""The package's layers point one way: a module imports only its own layer and those below."""

import ast
import subprocess
import sys
from pathlib import Path

import mazerl

ROOT = Path(mazerl.__file__).parent
# lowest first; a layer may import itself and any layer before it in this list
LAYERS = [
    {"core"},
    {"envs"},
    {"policy"},
    {"rollout"},
    {"algos"},
    {"train", "eval", "categorical", "llm"},
    {"analysis"},
    {"apps"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """`(module, imported names)` of every `mazerl` import in a file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mazerl"):
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("mazerl")]
    return out


def layer_of(module: str) -> str:
    """`mazerl.envs.maze` -> `envs`; `mazerl.rollout` -> `rollout`."""
    return module.split(".")[1]


def test_every_module_belongs_to_a_layer():
    tops = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()}
    tops -= {"__init__", "__pycache__", "conf", "bank"}  # bank: data (the shipped base models)
    assert tops == set(RANK)


def test_no_module_imports_a_layer_above_it_or_a_private_name():
    wrong = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] == "__init__.py":
            continue
        here = RANK[rel.parts[0].removesuffix(".py")]
        for module, names in imports(path):
            if module == "mazerl":  # `from mazerl import x`: the package's own top level
                continue
            if RANK[layer_of(module)] > here:
                wrong.append(f"{rel} imports {module} (a layer above)")
            wrong += [f"{rel} imports {module}.{n} (private)" for n in names if n.startswith("_")]
    assert not wrong, wrong


def test_layers_of_the_same_rank_do_not_import_each_other_in_a_loop():
    edges = set()
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        src = rel.parts[0].removesuffix(".py")
        for module, _ in imports(path):
            if module != "mazerl" and layer_of(module) != src:
                edges.add((src, layer_of(module)))
    assert not [(a, b) for a, b in edges if (b, a) in edges]


def test_the_analysis_library_imports_no_torch():
    """Reading runs (`mazerl.analysis.runs`: metrics.json, configs, TensorBoard events) and
    every other module of the analysis library need no torch: a fresh process that imports
    all of them has not loaded torch (a board's method-by-loss check loads it when called)."""
    names = sorted(p.stem for p in (ROOT / "analysis").glob("*.py") if p.stem != "__init__")
    assert "runs" in names and "leaderboard" in names and "report" in names
    imports = "; ".join(f"import mazerl.analysis.{n}" for n in names)
    code = f"import sys; {imports}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
