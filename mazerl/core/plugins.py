"""Plug-ins: packages outside mazerl that add policies, maze generators, methods, ...

A plug-in declares an entry point in the group `mazerl.plugins` (in its pyproject.toml:
`[project.entry-points."mazerl.plugins"]`, `NAME = "its_package.module"`); the entry point
names a module whose import registers its parts (`@POLICIES.register("NAME")`,
`@GENERATORS.register("NAME")`, ...). `load_plugins` imports every such module once, before
the apps register their configs; a module that fails to import is a `ConfigError` naming the
entry point.
"""

from importlib.metadata import entry_points

from mazerl.core.errors import ConfigError

GROUP = "mazerl.plugins"
_loaded: set[str] = set()  # the entry points already imported in this process


def load_plugins() -> list[str]:
    """Import the module of every `mazerl.plugins` entry point not imported yet (idempotent).

    Returns:
        The names of the entry points loaded by this call.

    Raises:
        ConfigError: a plug-in failed to import (naming its entry point).
    """
    loaded = []
    for point in entry_points(group=GROUP):
        if point.name in _loaded:
            continue
        try:
            point.load()
        except Exception as e:  # any failure of the plug-in's own code: name the entry point
            first = (str(e).splitlines() or [""])[0]
            raise ConfigError(
                f"plug-in {point.name} = {point.value!r} (entry point group {GROUP}) failed "
                f"to load: {type(e).__name__}: {first}"
            ) from None
        _loaded.add(point.name)
        loaded.append(point.name)
    return loaded
