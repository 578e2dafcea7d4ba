"""Name -> component registries: a decorator adds an entry, a lookup names the choices."""

import inspect
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from mazerl.core.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A dict of named components of one kind (generators, objectives, policies, ...).

    `@REG.register("name")` adds an entry; `REG.get("name")` returns it or raises
    `ConfigError` listing the known names; `REG.call("name", **kwargs)` calls it, an argument
    it does not take being a `ConfigError` naming the entry and its parameters.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(obj: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = obj
            return obj

        return add

    def get(self, name: str) -> T:
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
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries
