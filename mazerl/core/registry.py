"""Name -> component registries: a decorator adds an entry, a lookup names the choices.

A registry of built-in parts names the package that holds them and the decorators that
register one (`Registry("generator", "mazerl.envs", ("GENERATORS.register",))`): a module of
that package that uses one of them is a part module. Its names are read from its source
without importing it (`known`: the config checks and `--help` need no torch), and the first
lookup (`get`, `names`, `in`) imports every part module, which registers its parts. A new
part is one new file in the package; no list names the part modules. Plug-ins register into
the same registries when `mazerl.core.plugins.load_plugins` imports them.
"""

import ast
import functools
import importlib
import importlib.util
import inspect
import pkgutil
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

from mazerl.core.errors import ConfigError

T = TypeVar("T")


@functools.cache
def _source_parts(path: Path, mtime: float) -> tuple[tuple[str, str], ...]:
    """`(decorator, name)` of every `@decorator("name", ...)` in the Python file `path` (its
    `mtime` keys the cache): the dotted decorator as written (`estimator`,
    `POLICIES.register`) and its first argument, a string; a file that does not parse is a
    `ConfigError` naming `path:line:col`."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except SyntaxError as e:  # a part module being written: one line naming the place
        raise ConfigError(f"{path}:{e.lineno}:{e.offset}: {e.msg}") from None
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.ClassDef):
            continue
        for dec in node.decorator_list:
            if not (isinstance(dec, ast.Call) and dec.args):
                continue
            arg = dec.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append((ast.unparse(dec.func), arg.value))
    return tuple(found)


def part_modules(package: str, marks: Iterable[str]) -> dict[str, list[str]]:
    """Module name -> the names it registers with one of the decorators `marks`, for every
    module of `package` (found with `pkgutil`, read with `ast`, none imported) that does."""
    spec = importlib.util.find_spec(package)
    marks = set(marks)
    found = {}
    for info in pkgutil.iter_modules(spec.submodule_search_locations or []):
        path = Path(info.module_finder.path) / f"{info.name}.py"  # type: ignore[union-attr]
        if info.ispkg or not path.is_file():
            continue
        source = path.read_bytes()
        if not any(f"@{mark}".encode() in source for mark in marks):
            continue  # cheaper than parsing: no module of parts lacks its decorator's text
        names = [n for dec, n in _source_parts(path, path.stat().st_mtime) if dec in marks]
        if names:
            found[f"{package}.{info.name}"] = names
    return found


def _where(obj) -> str:
    """The module that defines `obj` (a registered function or class), or its type's."""
    return getattr(obj, "__module__", None) or type(obj).__module__


class Registry(Generic[T]):
    """A dict of named components of one kind (generators, objectives, policies, ...).

    `@REG.register("name")` adds an entry; `REG.get("name")` returns it or raises
    `ConfigError` listing the known names; `REG.call("name", **kwargs)` calls it, an argument
    it does not take being a `ConfigError` naming the entry and its parameters. With a
    `package` and its decorators `marks`, the built-in parts are the modules of `package`
    that use one of `marks`: `known()` reads their names without importing them, any other
    lookup imports them first.
    """

    def __init__(self, kind: str, package: str | None = None, marks: tuple[str, ...] = ()):
        self.kind = kind
        self.package, self.marks = package, marks
        self._entries: dict[str, T] = {}
        self._loaded = package is None

    def load(self) -> None:
        """Import every part module of the package (once), registering its parts; a module
        that fails to import is a `ConfigError` naming it and the line that raised."""
        if self._loaded:
            return
        self._loaded = True  # first: a part module's own lookups do not import it again
        for module in part_modules(self.package, self.marks):  # type: ignore[arg-type]
            try:
                importlib.import_module(module)
            except ConfigError:
                raise
            except Exception as e:  # the part's own code: one line naming where it failed
                where = traceback.extract_tb(e.__traceback__)[-1]
                first = (str(e).splitlines() or [""])[0]
                raise ConfigError(
                    f"{self.kind} module {module} failed to import ({where.filename}:"
                    f"{where.lineno}): {type(e).__name__}: {first}"
                ) from None

    def known(self) -> list[str]:
        """The names registered so far and those the package's part modules declare, sorted,
        without importing any part module (no torch): what a config check accepts."""
        declared = part_modules(self.package, self.marks) if self.package else {}
        return sorted({*self._entries, *(n for names in declared.values() for n in names)})

    def register(self, name: str) -> Callable[[T], T]:
        def add(obj: T) -> T:
            if name in self._entries:
                raise ConfigError(
                    f"{self.kind} {name!r} is registered twice: in {_where(self._entries[name])} "
                    f"and in {_where(obj)} (give the copy a name of its own)"
                )
            self._entries[name] = obj
            return obj

        return add

    def get(self, name: str) -> T:
        self.load()
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(
                f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self._entries))}"
            ) from None

    def parameters(self, name: str) -> list[str]:
        """The names the entry `name` takes as keyword arguments."""
        return [
            p.name
            for p in inspect.signature(self.get(name)).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]

    def takes(self, name: str, key: str) -> bool:
        """Whether the entry `name` takes the keyword argument `key` (any, with `**kwargs`)."""
        params = inspect.signature(self.get(name)).parameters.values()
        return key in self.parameters(name) or any(p.kind == p.VAR_KEYWORD for p in params)

    def check_arguments(self, name: str, keys: Iterable[str]) -> None:
        """Raise `ConfigError` if the entry `name` does not take some of the arguments `keys`."""
        unknown = sorted(k for k in keys if not self.takes(name, k))
        if unknown:
            raise ConfigError(
                f"{self.kind} {name!r} takes no argument {', '.join(map(repr, unknown))}; "
                f"its parameters: {', '.join(self.parameters(name))}"
            )

    def call(self, name: str, /, *args, **kwargs):
        """`get(name)(*args, **kwargs)`, checking the keyword arguments first: one it does not
        take, or a parameter without a default that is not given, is a `ConfigError`."""
        self.check_arguments(name, kwargs)
        params = list(inspect.signature(self.get(name)).parameters.values())[len(args) :]
        named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        missing = [
            p.name
            for p in params
            if p.kind in named and p.default is p.empty and p.name not in kwargs
        ]
        if missing:
            raise ConfigError(
                f"{self.kind} {name!r} needs the argument {', '.join(map(repr, missing))}"
            )
        return self.get(name)(*args, **kwargs)

    def names(self) -> list[str]:
        self.load()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries
