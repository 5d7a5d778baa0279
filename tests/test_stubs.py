"""The type stub of the compiled module stays current (regenerate with
``pybind11-stubgen directable._core -o python`` after changing bindings)."""
import ast
import inspect
import pathlib

import directable
from directable import _core

STUB = pathlib.Path(directable.__file__).with_name("_core.pyi")


def _stub_names():
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            members[node.name] = {
                n.name if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else getattr(n.targets[0] if isinstance(n, ast.Assign) else n.target, "id", None)
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign))
            }
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
    return top, members


def test_every_binding_is_in_the_stub():
    top, members = _stub_names()
    public = {n for n in dir(_core) if not n.startswith("_")}
    assert public - top == set(), f"missing from _core.pyi: {sorted(public - top)}"
    for name in public:
        obj = getattr(_core, name)
        if inspect.isclass(obj) and name in members:
            attrs = {a for a in vars(obj) if not a.startswith("_")}
            missing = attrs - members[name]
            assert not missing, f"{name}: missing from _core.pyi: {sorted(missing)}"


def test_every_binding_has_a_docstring():
    for name in (n for n in dir(_core) if not n.startswith("_")):
        obj = getattr(_core, name)
        if callable(obj) and not inspect.isclass(obj):
            assert obj.__doc__ and len(obj.__doc__.strip().splitlines()) >= 1, name
