"""Name -> component registries: a decorator adds an entry, a lookup names the choices."""

from collections.abc import Callable
from typing import Generic, TypeVar

from mazerl.core.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """A dict of named components of one kind (generators, objectives, policies, ...).

    `@REG.register("name")` adds an entry; `REG.get("name")` returns it or raises
    `ConfigError` listing the known names.
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

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries
