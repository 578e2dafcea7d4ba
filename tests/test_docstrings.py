"""The API reference's docstrings are Google style (`docstring_style: google` in mkdocs.yml):
they parse without a warning, no Markdown list is glued to the line before it (it would render
as one paragraph), and every registered part documents each of its arguments and what it
returns, so the reference shows them as tables."""

import functools
import inspect
import logging
import re
from itertools import pairwise
from pathlib import Path

import griffe
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
HANDLER = MKDOCS["plugins"][1]["mkdocstrings"]["handlers"]["python"]["options"]
STYLE, OPTIONS = HANDLER["docstring_style"], HANDLER["docstring_options"]
ITEM = re.compile(r" {0,3}(?:[-*+]|\d+\.) ")  # a Markdown list item


@functools.cache
def package() -> griffe.Module:
    """The `mazerl` package as griffe reads it (statically, from the sources), once."""
    return griffe.GriffeLoader(search_paths=[str(ROOT)]).load("mazerl")


def rendered_modules() -> list[str]:
    """The modules the API reference renders (its `::: module` lines)."""
    pages = sorted((ROOT / "docs/reference/api").glob("*.md"))
    return [m for page in pages for m in re.findall(r"^::: (\S+)", page.read_text(), re.M)]


def public(obj: griffe.Object):
    """`obj` and its public members, as the reference shows them (`filters: ["!^_"]`)."""
    yield obj
    for name, member in obj.members.items():
        if not name.startswith("_") and not member.is_alias:
            yield from public(member)


class Warnings(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def glued_lists(text: str) -> list[str]:
    """The list items that follow a line of prose without a blank line (Markdown then reads
    the list as part of the paragraph: "Dict with - grid: ... - position: ...")."""
    lines = text.splitlines()
    return [
        b.strip()
        for a, b in pairwise(lines)
        if ITEM.match(b) and a.strip() and not ITEM.match(a) and not a[0].isspace()
    ]


def test_glued_lists_finds_a_list_after_prose_only():
    assert glued_lists("`Dict` with\n- `grid`: walls\n- `position`: cell") == ["- `grid`: walls"]
    assert glued_lists("`Dict` with\n\n- `grid`: walls\n- `position`: cell\n  more") == []
    assert glued_lists("- a\n  more\n- b") == []  # an item's second line, then the next item


def split_returns(obj: griffe.Object, section: griffe.DocstringSectionReturns) -> list[str]:
    """What went wrong in a Returns section: one value described in prose, whose type is the
    function's annotation, not words before a colon taken for a name or a type."""
    (value,) = section.value
    annotation = obj.returns if obj.is_function else None
    if value.name or str(value.annotation) != str(annotation):
        return [f"Returns split at a colon: {value.name or value.annotation!s}"]
    return []


def test_a_returns_section_is_one_value_in_prose():
    fn = package()["algos.w_reinforce.w_reinforce"]
    text = "Sum.\n\nReturns:\n    `[P, G]` advantages: `w` where the reward is > 0,\n    else 0.\n"
    (section,) = griffe.Docstring(text, parent=fn).parse(STYLE, **OPTIONS)[1:]
    assert split_returns(fn, section) == []
    assert section.value[0].description.startswith("`[P, G]` advantages: `w`")
    assert section.value[0].description.endswith("else 0.")


def test_mkdocs_renders_google_docstrings():
    assert STYLE == "google"


@pytest.mark.parametrize("module", rendered_modules())
def test_rendered_docstrings_parse_as_google_without_warnings(module):
    handler, log = Warnings(), logging.getLogger("griffe")
    log.addHandler(handler)
    try:
        problems = []
        for obj in public(package()[module.removeprefix("mazerl.")]):
            if obj.docstring is None:
                continue
            before = len(handler.messages)
            sections = obj.docstring.parse(STYLE, **OPTIONS)
            problems += [f"{obj.path}: {m}" for m in handler.messages[before:]]
            for section in sections:
                if section.kind is griffe.DocstringSectionKind.text:
                    problems += [
                        f"{obj.path}: list after prose: {x}" for x in glued_lists(section.value)
                    ]
                if section.kind is griffe.DocstringSectionKind.returns:
                    problems += [f"{obj.path}: {x}" for x in split_returns(obj, section)]
    finally:
        log.removeHandler(handler)
    assert not problems, "\n".join(problems)


def registered_parts() -> list[tuple[str, str, object]]:
    """(registry, name, function) of every part that mazerl itself registers."""
    from mazerl.algos import ADVANTAGES, AGGREGATIONS, POLICY_LOSSES, REWARD_TRANSFORMS
    from mazerl.envs.generators import GENERATORS, PLACEMENTS

    registries = (
        ADVANTAGES,
        REWARD_TRANSFORMS,
        POLICY_LOSSES,
        AGGREGATIONS,
        GENERATORS,
        PLACEMENTS,
    )
    return [
        (r.kind, name, r.get(name))
        for r in registries
        for name in r.names()
        if r.get(name).__module__.startswith("mazerl.")
    ]


def _shared_loss_arguments(parts) -> set[str]:
    """The arguments every policy loss takes (the composed loss's, `mazerl.algos.losses`):
    documented once in that module; a loss's docstring documents its surrogate's own."""
    losses = [fn for _, _, fn in parts if hasattr(fn, "reads_every_row")]
    return set.intersection(*(set(inspect.signature(fn).parameters) for fn in losses))


def test_every_registered_part_documents_its_arguments_and_what_it_returns():
    parts = registered_parts()
    assert {kind for kind, _, _ in parts} >= {"advantage estimator", "policy loss", "generator"}
    shared = _shared_loss_arguments(parts)
    for kind, name, fn in parts:
        sections = griffe.Docstring(inspect.getdoc(fn)).parse(STYLE, **OPTIONS)
        by_kind = {s.kind: s for s in sections}
        args = by_kind.get(griffe.DocstringSectionKind.parameters)
        documented = {p.name for p in args.value} if args else set()
        arguments = set(inspect.signature(fn).parameters)
        if hasattr(fn, "reads_every_row"):  # a composed policy loss
            arguments -= shared
        missing = arguments - documented
        assert not missing, f"{kind} {name!r}: Args does not document {sorted(missing)}"
        assert griffe.DocstringSectionKind.returns in by_kind, f"{kind} {name!r}: no Returns"


# the modules whose whole public API is in Google style; the exceptions were being edited on
# other branches when the rest was converted
GOOGLE_PACKAGES = (
    "mazerl.envs.",
    "mazerl.algos.",
    "mazerl.policy.",
    "mazerl.rollout",
    "mazerl.eval.",
    "mazerl.categorical.",
    "mazerl.core.errors",
    "mazerl.core.plugins",
    "mazerl.core.streams",
    "mazerl.train.bank",
)
NOT_YET = (
    "mazerl.envs.spec",
    "mazerl.eval.evaluate.sampled_metrics",
)


def _undocumented(fn: griffe.Function) -> list[str]:
    """What the docstring of `fn` leaves out: arguments missing from Args, and Returns for a
    function that returns something."""
    kinds = griffe.DocstringSectionKind
    sections = {s.kind: s for s in fn.docstring.parse(STYLE, **OPTIONS)}
    documented = (
        {p.name for p in sections[kinds.parameters].value}
        if kinds.parameters in sections
        else set()
    )
    stars = {"variadic positional": "*", "variadic keyword": "**"}
    wanted = {
        stars.get(p.kind.value, "") + p.name for p in fn.parameters if p.name not in ("self", "cls")
    }
    out = [f"Args: {name}" for name in sorted(wanted - documented)]
    returns_none = fn.name == "__init__" or str(fn.returns) == "None"
    if not returns_none and kinds.returns not in sections:
        out.append("Returns")
    return out


def test_public_functions_of_the_converted_packages_document_arguments_and_return():
    """Every public function or method with a docstring, in the rendered modules of the
    environments, methods, policies, rollouts, evaluation, the categorical simulation and
    some of the core, documents each argument in Args and what it returns in Returns (the
    reference renders both as tables)."""
    problems = []
    for module in rendered_modules():
        if not module.startswith(GOOGLE_PACKAGES) or module.startswith(NOT_YET):
            continue
        for obj in public(package()[module.removeprefix("mazerl.")]):
            if not obj.is_function or obj.docstring is None or obj.path.startswith(NOT_YET):
                continue
            if "property" in obj.labels:
                continue
            problems += [f"{obj.path}: {gap}" for gap in _undocumented(obj)]
    assert not problems, "\n".join(problems)
