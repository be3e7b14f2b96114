"""YAML text -> Python data, refusing what would hang, exhaust memory or silently mislead.

PyYAML alone expands alias bombs in whatever walks the result (exponential), recurses in its
composer (deep nesting -> RecursionError), lets a repeated key win silently, and raises a bare
ValueError for an integer of 5000 digits or a date such as 2001-13-45. Here every such input is a
PlanError naming the line, and the limits are checked before anything is expanded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from arraybench.errors import PlanError

MAX_PLAN_BYTES = 1 << 20  # the largest template is 10 KiB; a plan of 1 MiB is a mistake
MAX_DEPTH = 32  # the deepest real key (workloads[i].events[j].run.argv[k]) is 6 levels
MAX_NODES = 100_000  # values after expanding aliases
MAX_ALIASES = 1_000


@dataclass(frozen=True)
class Limits:
    max_bytes: int = MAX_PLAN_BYTES
    max_depth: int = MAX_DEPTH
    max_nodes: int = MAX_NODES
    max_aliases: int = MAX_ALIASES


class _PyParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    def __init__(self, text: str) -> None:
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


try:  # libyaml's parser (PyYAML's wheels carry it): its events 7x faster than Python's
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]
except ImportError:  # a PyYAML built without libyaml
    _Parser = _PyParser  # type: ignore[misc,assignment]


class _Loader(Composer, _Parser, SafeConstructor, Resolver):
    """SafeLoader's parts on the parser's events, composed in Python (where _Counting counts
    them), its scalar constructors failing with a located YAML error, not ValueError."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


def _located(name: str) -> Any:
    base = getattr(yaml.SafeLoader, name)

    def construct(loader: _Loader, node: yaml.Node) -> Any:
        try:
            return base(loader, node)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {str(node.value)[:40]!r}: {exc}"[:160], node.start_mark
            ) from None

    return construct


for _tag, _name in (
    ("int", "construct_yaml_int"),
    ("float", "construct_yaml_float"),
    ("timestamp", "construct_yaml_timestamp"),
):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _located(_name))


def _line(node: yaml.Node | yaml.Event) -> int:
    mark = node.start_mark
    return mark.line + 1 if mark else 1


class _Counting(_Loader):
    """Depth, node and alias counts of each event as the composer takes it: a limit is met
    before the graph grows past it (no composer recursion, no alias bomb)."""

    def __init__(self, text: str, source: str, limits: Limits) -> None:
        super().__init__(text)
        self.source, self.limits = source, limits
        self.depth = self.nodes = self.aliases = 0

    def get_event(self) -> yaml.Event | None:
        event = super().get_event()
        if event is not None:
            self._count(event)
        return event

    def _count(self, event: yaml.Event) -> None:
        limits, source = self.limits, self.source
        if isinstance(event, yaml.CollectionStartEvent):
            self.depth += 1
            if self.depth > limits.max_depth:
                raise _nests_deeper(f"{source}:{_line(event)}", limits)
        elif isinstance(event, yaml.CollectionEndEvent):
            self.depth -= 1
        elif isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > limits.max_aliases:
                raise PlanError(
                    f"{source}:{_line(event)} more than {limits.max_aliases} YAML aliases (*name)",
                    "write the values out instead of repeating aliases",
                )
        if isinstance(event, yaml.NodeEvent):
            self.nodes += 1
            if self.nodes > limits.max_nodes:
                raise PlanError(
                    f"{source}:{_line(event)} the plan has more than {limits.max_nodes} values",
                    "split it into several plans",
                )


def _data(loader: _Loader, node: yaml.Node | None, text: str) -> Any:
    """The data of the graph composed, unless the text has a merge key (`<<`): constructing
    one flattens the graph in place, and callers read the graph's lines as written."""
    if "<<" in text:
        again = _Loader(text)
        try:
            return again.get_single_data()
        finally:
            again.dispose()
    return None if node is None else loader.construct_document(node)


class _Measure:
    """Expanded size and height of the node graph (aliases counted as the copies they make),
    duplicate keys, without ever expanding: each node is measured once (memo)."""

    def __init__(self, source: str, limits: Limits) -> None:
        self.source, self.limits = source, limits
        self.memo: dict[int, tuple[int, int]] = {}  # id(node) -> (values, height)

    def __call__(self, node: yaml.Node, depth: int = 1) -> int:
        known = self.memo.get(id(node))
        if known is None:
            if depth > self.limits.max_depth:  # also how a recursive alias (&a [*a]) ends
                self._too_deep(node)
            known = self._measure(node, depth)
            self.memo[id(node)] = known
        values, height = known
        if depth - 1 + height > self.limits.max_depth:
            self._too_deep(node)
        return values

    def _measure(self, node: yaml.Node, depth: int) -> tuple[int, int]:
        children: list[yaml.Node] = []
        if isinstance(node, yaml.MappingNode):
            self._no_duplicates(node)
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        values = 1
        for child in children:
            values += self(child, depth + 1)
            if values > self.limits.max_nodes:
                raise PlanError(
                    f"{self.source}:{_line(node)} the plan expands to more than "
                    f"{self.limits.max_nodes} values (YAML aliases)",
                    "write the values out instead of nesting aliases",
                )
        height = 1 + max((self.memo[id(c)][1] for c in children), default=0)
        return values, height

    def _too_deep(self, node: yaml.Node) -> None:
        raise PlanError(
            f"{self.source}:{_line(node)} the plan nests deeper than {self.limits.max_depth} "
            "levels (counting what aliases repeat)",
            "a plan is a few levels deep: check the aliases (*name) and brackets",
        )

    def _no_duplicates(self, node: yaml.MappingNode) -> None:
        seen: dict[str, int] = {}
        for key, _ in node.value:
            if key.tag == "tag:yaml.org,2002:merge" or not isinstance(key, yaml.ScalarNode):
                continue  # `<<: *base` may be overridden by the keys beside it, as YAML says
            name = str(key.value)
            if name in seen:
                raise PlanError(
                    f"{self.source}:{_line(key)} duplicate key {name[:60]!r} "
                    f"(first at line {seen[name]})",
                    "keep one of them: YAML would silently use the last",
                )
            seen[name] = _line(key)


def _line_at(text: str, position: int) -> int:
    if _Parser is _PyParser:
        return text.count("\n", 0, position) + 1
    return text.encode("utf-8", "surrogatepass")[:position].count(b"\n") + 1  # libyaml: bytes


def _nests_deeper(where: str, limits: Limits) -> PlanError:
    return PlanError(
        f"{where} the plan nests deeper than {limits.max_depth} levels",
        "a plan is a few levels deep: check the brackets and indentation",
    )


def _syntax_error(exc: yaml.YAMLError, source: str, text: str, limits: Limits) -> PlanError:
    mark = getattr(exc, "problem_mark", None)
    where = f"{source}:{mark.line + 1}" if mark else source
    if isinstance(exc, yaml.reader.ReaderError):  # a NUL or control character: no mark
        where = f"{source}:{_line_at(text, exc.position)}"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if "maximum nesting depth" in problem:  # libyaml's scanner, ahead of the events counted
        return _nests_deeper(where, limits)
    return PlanError(f"{where} YAML syntax error: {problem}", "fix the YAML syntax")


def compose_and_load(
    text: str, source: str, limits: Limits = Limits()
) -> tuple[yaml.Node | None, Any]:
    """The node graph (for line numbers) and the data, or one located PlanError."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise PlanError(
            f"{source}: larger than the limit of {limits.max_bytes} bytes",
            "a plan is a few KiB: check that this is the right file",
        )
    try:
        loader = _Counting(text, source, limits)  # one parse: counted as it is composed
        try:
            node = loader.get_single_node()
            if node is not None:
                _Measure(source, limits)(node)
            data = _data(loader, node, text)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, source, text, limits) from None
    return node, data


def load_value(text: str, source: str, limits: Limits = Limits()) -> Any:
    """One YAML value (a `--set` value), with the same limits."""
    return compose_and_load(text, source, limits)[1]
