"""Names of a package imported from their modules on first use (a module `__getattr__`,
PEP 562), so importing the package loads none of its heavy modules."""

import importlib
from collections.abc import Callable


def lazy_getattr(package: str, modules: dict[str, str]) -> Callable[[str], object]:
    """The `__getattr__` of `package` that imports `package.<modules[name]>` on the first use
    of `name` and returns its attribute `name`.

    Args:
        package: the package's `__name__`.
        modules: each lazy name -> the submodule that defines it.

    Returns:
        The function to assign to the package's `__getattr__`; another name raises
        `AttributeError` as a module does.
    """

    def __getattr__(name: str) -> object:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{modules[name]}"), name)

    return __getattr__
