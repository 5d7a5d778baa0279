"""Every public function, class, method and property has a numpydoc docstring.

The public API is what ``directable.__all__`` names, every public submodule
(``directable.<name>``, ``directable.experiments.<name>``, ...) with its own
``__all__`` (or, without one, its public names defined in directable), and
the public methods and properties of every public class, pybind11 classes
included. A callable that takes arguments documents each of them in a
``Parameters`` section (or, for a class, in the class docstring or
``__init__``'s); one that returns something has a ``Returns`` (or
``Yields``) section. Signatures come from ``inspect`` for Python code and
from pybind11's signature lines for the C++ bindings (every overload
checked on its own).
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pathlib
import pkgutil
import re
import textwrap
import types

import pytest

docscrape = pytest.importorskip("numpydoc.docscrape")

import directable  # noqa: E402

#: parameters that need no entry: the instance, the class, pybind11's own names
_IMPLICIT = {"self", "cls", "args", "kwargs"}
_SIGNATURE = re.compile(r"^(?:\d+\. )?(?P<name>[\w.]+)\((?P<params>.*)\)(?: -> (?P<ret>.+))?$")


def public_modules() -> list[types.ModuleType]:
    """``directable`` and every submodule whose dotted path has no private part."""
    mods = [directable]
    for info in pkgutil.walk_packages(directable.__path__, "directable."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        mods.append(importlib.import_module(info.name))
    return mods


def public_names(module: types.ModuleType) -> list[str]:
    """What ``module`` offers: its ``__all__``, or its public names defined in directable."""
    if hasattr(module, "__all__"):
        return [n for n in module.__all__ if not isinstance(getattr(module, n, None), types.ModuleType)]
    out = []
    for name, obj in vars(module).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        owner = getattr(obj, "__module__", None) or ""
        private = any(part.startswith("_") for part in owner.split(".")) and owner != "directable._core"
        if (inspect.isclass(obj) or callable(obj)) and owner.startswith("directable") and not private:
            out.append(name)
    return out


def _documented(doc: docscrape.NumpyDocString, *sections: str) -> set[str]:
    names = set()
    for section in sections:
        for param in doc[section]:
            for name in param.name.split(","):
                names.add(name.strip().lstrip("*"))
    return names


def _returns_value_py(func) -> bool:
    """Whether a Python function returns (or yields) something other than None."""
    ann = inspect.signature(func).return_annotation
    if ann is not inspect.Signature.empty:
        return ann not in (None, "None")
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0]
    for node in ast.walk(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not body:
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
    return False


def _pybind_overloads(doc: str) -> list[tuple[list[str], bool, str]]:
    """(parameter names, returns something, text) of each overload in a pybind11 docstring."""
    lines = doc.strip("\n").splitlines()
    if lines and lines[0].strip() == "Overloaded function.":
        blocks = re.split(r"\n(?=\d+\. [\w.]+\()", "\n".join(lines[1:]).strip("\n"))
    else:
        blocks = ["\n".join(lines)]
    out = []
    for block in blocks:
        head, _, rest = block.strip("\n").partition("\n")
        m = _SIGNATURE.match(head.strip())
        if not m:
            out.append(([], False, block))
            continue
        params = []
        depth, cur = 0, ""
        for ch in m["params"]:  # split on top-level commas only
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            if ch == "," and depth == 0:
                params.append(cur)
                cur = ""
            else:
                cur += ch
        if cur.strip():
            params.append(cur)
        names = [p.split(":")[0].split("=")[0].strip().lstrip("*") for p in params]
        ret = (m["ret"] or "None").strip()
        out.append(([n for n in names if n and n not in _IMPLICIT], ret != "None", textwrap.dedent(rest)))
    return out


def _check_text(where: str, text: str, params: list[str], returns: bool, problems: list[str],
                extra_params: set[str] = frozenset()) -> None:
    if not text or not text.strip():
        problems.append(f"{where}: no docstring")
        return
    try:
        doc = docscrape.NumpyDocString(text)
    except Exception as exc:  # a malformed section is a defect too
        problems.append(f"{where}: not numpydoc ({exc})")
        return
    if not doc["Summary"] or not "".join(doc["Summary"]).strip():
        problems.append(f"{where}: no one-line summary")
    documented = _documented(doc, "Parameters", "Other Parameters") | set(extra_params)
    missing = [p for p in params if p not in documented]
    if missing:
        problems.append(f"{where}: parameters not documented: {', '.join(missing)}")
    if returns and not (doc["Returns"] or doc["Yields"]):
        problems.append(f"{where}: no Returns section")


def check_callable(where: str, obj, problems: list[str], bound: bool = False,
                   extra_params: set[str] = frozenset()) -> None:
    """Problems of one function or method (Python or pybind11)."""
    doc = getattr(obj, "__doc__", None)
    if isinstance(obj, (types.FunctionType, types.MethodType)) or (
            inspect.isfunction(getattr(obj, "__func__", None))):
        func = getattr(obj, "__func__", obj)
        sig = inspect.signature(func)
        params = [p.name for p in sig.parameters.values()
                  if p.name not in _IMPLICIT and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        _check_text(where, inspect.getdoc(func), params, _returns_value_py(func), problems, extra_params)
        return
    if not doc:
        problems.append(f"{where}: no docstring")
        return
    for i, (params, returns, text) in enumerate(_pybind_overloads(doc)):
        name = where if i == 0 and "Overloaded function." not in doc else f"{where} (overload {i + 1})"
        _check_text(name, text, params, returns, problems, extra_params)


def _own_members(cls) -> list[tuple[str, object]]:
    out = []
    for klass in cls.__mro__:
        if klass is object or not (getattr(klass, "__module__", "") or "").startswith("directable"):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") or name in dict(out):
                continue
            out.append((name, member))
    return out


def check_class(where: str, cls, problems: list[str]) -> None:
    """Problems of a class: its docstring (with the constructor's parameters), methods and properties."""
    init = cls.__dict__.get("__init__")
    init_params: list[str] = []
    if init is not None and inspect.isfunction(init):
        sig = inspect.signature(init)
        init_params = [p.name for p in sig.parameters.values()
                       if p.name not in _IMPLICIT and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    elif init is not None and getattr(init, "__doc__", None) and "(self" in init.__doc__:
        init_params = sorted({n for params, _, _ in _pybind_overloads(init.__doc__) for n in params})
    elif hasattr(cls, "__dataclass_fields__"):
        init_params = [n for n, f in cls.__dataclass_fields__.items() if f.init]
    text = cls.__doc__ if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "(") else ""
    if hasattr(cls, "__dataclass_fields__") or (text and text.lstrip().startswith(f"{cls.__name__}(")):
        pass
    class_doc = docscrape.NumpyDocString(inspect.cleandoc(text)) if text else None
    documented = (_documented(class_doc, "Parameters", "Attributes", "Other Parameters")
                  if class_doc else set())
    if not text or not text.strip():
        problems.append(f"{where}: no class docstring")
    elif init_params:
        init_doc = init.__doc__ if init is not None else None
        init_documented = set()
        if init_doc and inspect.isfunction(init):
            init_documented = _documented(docscrape.NumpyDocString(inspect.cleandoc(init_doc)), "Parameters")
        elif init_doc:
            for _, _, t in _pybind_overloads(init_doc):
                init_documented |= _documented(docscrape.NumpyDocString(t), "Parameters")
        missing = [p for p in init_params if p not in documented | init_documented]
        if missing:
            problems.append(f"{where}: constructor parameters not documented: {', '.join(missing)}")
    for name, member in _own_members(cls):
        mwhere = f"{where}.{name}"
        if isinstance(member, property) or type(member).__name__ == "property":
            if not (member.__doc__ or "").strip():
                problems.append(f"{mwhere}: property without a docstring")
        elif isinstance(member, (staticmethod, classmethod)):
            check_callable(mwhere, member.__func__, problems)
        elif inspect.isfunction(member) or type(member).__name__ in ("instancemethod", "builtin_function_or_method"):
            check_callable(mwhere, member, problems)


@functools.lru_cache(maxsize=1)
def collect_problems() -> tuple[str, ...]:
    problems: list[str] = []
    seen: set[int] = set()
    for module in public_modules():
        for name in public_names(module):
            obj = getattr(module, name, None)
            where = f"{module.__name__}.{name}"
            if obj is None:
                problems.append(f"{where}: listed in __all__ but missing")
                continue
            if id(obj) in seen or not (inspect.isclass(obj) or callable(obj)):
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                check_class(where, obj, problems)
            else:
                check_callable(where, obj, problems)
    return tuple(problems)


def test_public_modules_found():
    names = {m.__name__ for m in public_modules()}
    assert {"directable.lqr", "directable.sim", "directable.experiments.demo", "directable.crowds"} <= names


DEBT = pathlib.Path(__file__).with_name("docstring_debt.txt")


def _where(problem: str) -> str:
    return problem.split(": ", 1)[0]


def debt() -> set[str]:
    """Objects whose docstrings are known to fall short (tests/docstring_debt.txt): the list only shrinks."""
    if not DEBT.is_file():
        return set()
    return {line.strip() for line in DEBT.read_text().splitlines() if line.strip() and not line.startswith("#")}


def test_every_public_object_has_a_numpydoc_docstring():
    problems = collect_problems()
    known = debt()
    new = [p for p in problems if _where(p) not in known]
    assert not new, (f"{len(new)} docstring defects (numpydoc: a summary, Parameters for every argument, "
                     f"Returns where something is returned):\n" + "\n".join(new))


def test_the_docstring_debt_only_shrinks():
    """An object fixed since the list was written must leave it, so the list never hides a regression."""
    still = {_where(p) for p in collect_problems()}
    fixed = sorted(debt() - still)
    assert not fixed, (f"{len(fixed)} entries of {DEBT.name} are documented now; remove them "
                       f"(python tests/test_docstrings.py rewrites the list):\n" + "\n".join(fixed))


if __name__ == "__main__":  # rewrite the debt list from the current state
    entries = sorted({_where(p) for p in collect_problems()})
    DEBT.write_text("# Public objects whose docstrings are not yet complete numpydoc (tests/test_docstrings.py).\n"
                    "# Fix one, then delete its line; never add lines by hand.\n" + "\n".join(entries) + "\n")
    print(f"{len(entries)} entries written to {DEBT}")


def test_the_checker_finds_defects():
    problems: list[str] = []

    def undocumented(a, b=1):
        return a + b

    def no_returns(a):
        """Adds one.

        Parameters
        ----------
        a : float
            The number.
        """
        return a + 1

    def good(a, *, b=2):
        """Adds b.

        Parameters
        ----------
        a : float
            The number.
        b : float, optional
            What to add.

        Returns
        -------
        float
        """
        return a + b

    check_callable("undocumented", undocumented, problems)
    check_callable("no_returns", no_returns, problems)
    check_callable("good", good, problems)
    assert problems == ["undocumented: no docstring", "no_returns: no Returns section"]
    # a pybind11 docstring: the signature line, then the numpydoc text, per overload
    text = ("Overloaded function.\n\n1. f(A: numpy.ndarray, n: int) -> float\n\nSums.\n\nParameters\n----------\n"
            "A : ndarray\n    (n, n).\nn : int\n    Size.\n\nReturns\n-------\nfloat\n\n"
            "2. f(A: numpy.ndarray) -> None\n\nNothing.\n")
    parsed = _pybind_overloads(text)
    assert [p for p, _, _ in parsed] == [["A", "n"], ["A"]]
    assert [r for _, r, _ in parsed] == [True, False]
    fake = types.SimpleNamespace(__doc__=text)
    problems = []
    check_callable("f", fake, problems)
    assert problems == ["f (overload 2): parameters not documented: A"]
