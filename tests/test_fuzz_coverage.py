"""The fuzz table covers the whole public API.

Walks what tests/test_docstrings.py walks (``directable.__all__``, every
public submodule, the public methods of every public class, pybind11 classes
included) and fails for every public callable that takes array or number
arguments but has neither an entry in ``TABLE`` of tests/fuzz_table.py (or
is named by an entry's ``covers``) nor a line in its ``NOT_FUZZED`` (a
pattern with the reason it is not fuzzed). The callables that still lack
their entry are listed in tests/fuzz_debt.txt, a list that only shrinks
(``python tests/test_fuzz_coverage.py`` prints what it should hold).
"""
from __future__ import annotations

import fnmatch
import inspect
import re
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fuzz_table import NOT_FUZZED, TABLE  # noqa: E402

#: public callables that take data and still lack a table entry (tests/fuzz_debt.txt, one name a line): the list
#: only shrinks; a new public callable gets its entry, never a line here
DEBT_FILE = Path(__file__).with_name("fuzz_debt.txt")


def fuzz_debt() -> set[str]:
    if not DEBT_FILE.is_file():
        return set()
    return {line.strip() for line in DEBT_FILE.read_text().splitlines() if line.strip() and not line.startswith("#")}
from test_docstrings import _own_members, public_modules, public_names  # noqa: E402

#: parameter types (pybind11 signatures, Python annotations) that carry no array or number
_NOT_DATA = re.compile(r"^(str|bool|None|typing\.Callable.*|Callable.*|collections\.abc\.Callable.*|"
                       r"directable\.[\w.]+|[A-Z]\w*|dict.*|os\.PathLike.*|pathlib\.Path|.*\| None)$")
_DATA_WORD = re.compile(r"ndarray|numpy|float|int\b|Supports|list|tuple|Sequence|ArrayLike|Buffer|object|Iterable")
_SIG = re.compile(r"^(?:\d+\. )?[\w.]+\((?P<params>.*)\)(?: -> .+)?$")
_IMPLICIT = {"self", "cls", "args", "kwargs"}


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur] if cur.strip() else parts


def _takes_data(obj) -> bool:
    """Whether a callable has a parameter that may take an array or a number:
    from pybind11's signature lines (every overload), or a Python signature
    (an unannotated parameter counts, unless its default is a str or bool)."""
    func = getattr(obj, "__func__", obj)
    if isinstance(func, types.FunctionType):
        for p in inspect.signature(func).parameters.values():
            if p.name in _IMPLICIT or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            ann = p.annotation
            if ann is inspect.Parameter.empty:
                if not isinstance(p.default, (str, bool)) or p.default is None:
                    return True
                continue
            text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
            if _DATA_WORD.search(text) or not _NOT_DATA.match(text.strip()):
                return True
        return False
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        m = _SIG.match(line.strip())
        if not m:
            continue
        for param in _split_top(m["params"]):
            name, _, kind = param.partition(":")
            if name.strip().lstrip("*") in _IMPLICIT:
                continue
            kind = kind.split("=")[0].strip()
            if not kind or _DATA_WORD.search(kind) or not _NOT_DATA.match(kind):
                return True
    return False


def _short(module_name: str) -> str:
    return "dr" if module_name == "directable" else module_name.removeprefix("directable.")


def public_callables() -> dict[int, tuple[set[str], object]]:
    """id -> (every name the callable goes by, the object): functions as
    ``module.name``, constructors as ``module.Class``, methods as
    ``Class.method`` and ``module.Class.method``."""
    found: dict[int, tuple[set[str], object]] = {}

    def add(key, names, obj):
        found.setdefault(key, (set(), obj))[0].update(names)

    for module in public_modules():
        mod = _short(module.__name__)
        for name in public_names(module):
            obj = getattr(module, name, None)
            if obj is None or isinstance(obj, types.ModuleType):
                continue
            if inspect.isclass(obj):
                if obj.__module__.startswith("directable") and not issubclass(obj, BaseException):
                    add(id(obj), {f"{mod}.{name}", name}, obj)
                    for meth, member in _own_members(obj):
                        if isinstance(member, (property, staticmethod, classmethod)) or \
                                type(member).__name__ == "property":
                            target = getattr(member, "__func__", None)
                            if target is None:
                                continue
                            member = target
                        if not callable(member):
                            continue
                        add(id(member), {f"{name}.{meth}", f"{mod}.{name}.{meth}"}, member)
            elif callable(obj):
                add(id(obj), {f"{mod}.{name}"}, obj)
    return found


def _excluded(names: set[str]) -> bool:
    return any(fnmatch.fnmatchcase(n, pattern) for n in names for pattern in NOT_FUZZED)


def _covered_names() -> set[str]:
    names = set(TABLE)
    for entry in TABLE.values():
        names.update(entry[2].get("covers", ()) if len(entry) > 2 else ())
    return names


def _canonical(names: set[str]) -> str:
    """The name a callable is listed by: the shortest, then alphabetical."""
    return min(names, key=lambda n: (n.count("."), len(n), n))


def uncovered() -> list[tuple[str, set[str]]]:
    """(canonical name, every name) of the public callables that take data and are neither fuzzed nor excluded."""
    covered = _covered_names()
    out = []
    for names, obj in public_callables().values():
        if names & covered or _excluded(names):
            continue
        if (inspect.isclass(obj) and not _takes_data(obj.__init__)) or (not inspect.isclass(obj)
                                                                          and not _takes_data(obj)):
            continue
        out.append((_canonical(names), names))
    return sorted(out, key=lambda x: x[0])


def test_every_public_callable_taking_data_is_fuzzed():
    debt = fuzz_debt()
    missing = [f"{name}   (also: {', '.join(sorted(names - {name}))})" for name, names in uncovered()
               if name not in debt]
    assert not missing, (
        f"{len(missing)} public callables take arrays or numbers but are not fuzzed. For each, add an entry to TABLE "
        "in tests/fuzz_table.py: 'module.name' (or 'Class.method'): (the call with its arguments by name, "
        "{argument: a valid expression}), objects it needs built in SETUP (see the entries there); a call that "
        "exercises several callables lists the others under options 'covers'. Only where fuzzing cannot apply, add a "
        "pattern with its reason to NOT_FUZZED.\n" + "\n".join(sorted(missing)))


def test_the_fuzz_debt_only_shrinks():
    """A callable that got its entry leaves tests/fuzz_debt.txt, so the list never hides a new gap."""
    still = {name for name, _ in uncovered()}
    fixed = sorted(fuzz_debt() - still)
    assert not fixed, (f"{len(fixed)} lines of {DEBT_FILE.name} are fuzzed now (or no longer public); delete "
                       "them:\n" + "\n".join(fixed))


def test_table_and_exclusions_name_what_exists():
    """Every entry, 'covers' name and exclusion pattern matches something public (no stale lines)."""
    every = set().union(*(names for names, _ in public_callables().values()))
    stale = [p for p in NOT_FUZZED if not any(fnmatch.fnmatchcase(n, p) for n in every)]
    assert not stale, f"NOT_FUZZED patterns that match nothing public: {stale}"
    for entry, spec in TABLE.items():
        for name in (spec[2].get("covers", ()) if len(spec) > 2 else ()):
            assert name in every, f"{entry}: covers {name!r}, which is not a public callable"


def test_the_walk_finds_the_api():
    every = set().union(*(names for names, _ in public_callables().values()))
    assert {"lqr.solve_discrete", "Tracker.control", "mpc.HorizonOptimizer", "SPHFluid2D.step"} <= every

    def only_text(name: str, flag: bool = False) -> None:
        """Takes no data."""

    def numbers(x, n: int = 2) -> None:
        """Takes data."""

    import directable as dr

    assert not _takes_data(only_text) and _takes_data(numbers)
    assert _takes_data(dr.lqr.solve_discrete) and _takes_data(dr._core.Tracker.control)
    assert not _takes_data(dr._core.max_threads)


if __name__ == "__main__":  # print the callables that still lack an entry (the debt list's content)
    for name, _ in uncovered():
        print(name)
