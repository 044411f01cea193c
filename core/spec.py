"""Problem specs: the Pydantic models, the YAML/JSON loader that keeps line numbers, and the schema.

A spec file holds one problem: ``name``, ``data``, ``solver``, ``objective``, ``constraints``,
``search``, ``limits`` and ``store``. ``solver`` is the discriminator: each solver plugin brings
a ``SolverSpec`` subclass, and the union of those models is built at run time from the
registry, so a third-party solver gets validation, error messages and JSON Schema for free.

Every error comes out as ``FILE:LINE:COL: field.path: message``.

One module, a little over 400 lines, on purpose: the models, the loader's position map and the
error formatting are one concept (a spec file and what is wrong with it, where) and share the
position bookkeeping; split, each half would import the other's internals.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import math
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ByteSize,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from glasswork.data import DataSpec

if TYPE_CHECKING:
    from glasswork.registry import Registry

# A spec is data from anyone: bounded before it is parsed (size) and while it is unfolded (nodes,
# depth), so a hostile file (an alias bomb, a device, a huge document) is refused in well under a
# second instead of hanging a sweep or a service that validates uploads. docs/security.md.
MAX_SPEC_BYTES = 64 * 1024
MAX_SPEC_NODES = 100_000
MAX_SPEC_DEPTH = 64

# A sweep runs every point it expands to, each a whole solve recorded in the run store: 10,000
# runs are already hours of CPU at a second each and 10,000 spec documents held and validated
# before the first runs (a few hundred MB at worst). A grid beyond that is a typo or a plan for
# another tool, and is refused before anything is expanded.
MAX_SWEEP_RUNS = 10_000

TOP_LEVEL_KEYS = ("name", "data", "solver", "objective", "constraints", "search", "limits", "store", "sweep")


class StrictModel(BaseModel):
    """Base of every spec section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


# Limits reach the compiled searches (64-bit node counters), setrlimit and the run store (DuckDB
# BIGINT and DOUBLE): bounded far above any real run and far below where those overflow.
MAX_LIMIT_SECONDS = 1e9  # about 31 years
MAX_LIMIT_NODES = 10**15  # 3 years at 10 million nodes a second; int64 holds 9.2e18
MAX_LIMIT_BYTES = 2**50  # 1 PiB


class LimitsSpec(StrictModel):
    """Resource limits. A run stopped by one still finishes, with status ``stopped_*`` and a gap."""

    time: PositiveFloat | None = Field(None, le=MAX_LIMIT_SECONDS, description="Wall-clock seconds.")
    nodes: PositiveInt | None = Field(
        None, le=MAX_LIMIT_NODES, description="Search nodes (as the solver counts them), at most 10^15."
    )
    memory: ByteSize | None = Field(
        None,
        le=MAX_LIMIT_BYTES,
        description="Resident memory of the process, e.g. 4GB, 512MiB or a number of bytes (at most 1PiB).",
    )


class StoreSpec(StrictModel):
    """Where the run history goes (the DuckDB run store).

    A spec is data from anyone, so the file it names stays inside the spec's own folder: a
    relative ``.duckdb`` path without ``..``. Any other place is the user's choice, made with
    ``--db`` or ``$GLASSWORK_DB`` (docs/security.md).
    """

    enabled: bool = Field(True, description="Record this run in the run store.")
    path: str | None = Field(
        None,
        description="Database file inside the spec's folder (a relative .duckdb path without '..'); "
        "default glasswork.duckdb here. Use --db or $GLASSWORK_DB for any other place.",
    )

    @field_validator("path")
    @classmethod
    def _inside_the_spec_folder(cls, value: str | None) -> str | None:
        if value is None:
            return value
        path = PurePosixPath(value.replace("\\", "/"))
        if (
            path.is_absolute()
            or value.startswith("~")
            or "$" in value
            or ".." in path.parts
            or ":" in value
            or path.suffix.lower() not in (".duckdb", ".db")
        ):
            raise ValueError(
                "a spec may only name a .duckdb file inside its own folder (e.g. runs/history.duckdb); "
                "choose any other place with --db PATH or $GLASSWORK_DB"
            )
        return value


class SweepSpec(StrictModel):
    """Many runs of one spec: a grid or a list of points over its fields, optionally cross-validated.

    ``grid: {objective.regularization: [0.02, 0.01]}`` runs every combination of the listed
    values; ``points`` lists combinations explicitly; both may be given. ``folds: K`` runs each
    point on K seeded folds (the data's split becomes ``kfold``). ``glasswork sweep SPEC`` runs it.
    """

    grid: dict[str, list[Any]] = Field(
        default_factory=dict, description="Dotted field path -> values; every combination is a point."
    )
    points: list[dict[str, Any]] = Field(
        default_factory=list, description="Explicit points, each a mapping of dotted field paths to values."
    )
    folds: int | None = Field(None, ge=2, le=100, description="Cross-validate every point on this many folds.")
    metric: str | None = Field(
        None,
        description="What picks the best point: a metric such as test_auc, or objective "
        "(default: test_accuracy or test_r2 when there is test data, else objective).",
    )
    goal: Literal["min", "max"] | None = Field(
        None, description="Whether the metric is better low or high (inferred from its name when omitted)."
    )

    @model_validator(mode="after")
    def _something_to_sweep(self) -> SweepSpec:
        for path, values in self.grid.items():
            if not values:
                raise ValueError(f"grid entry {path!r} has no values")
            if path.split(".")[0] in ("sweep", "name", "solver"):
                raise ValueError(f"{path!r} cannot be swept")
        if not self.grid and not self.points and self.folds is None:
            raise ValueError("a sweep needs a grid, points or folds")
        combos = math.prod(len(values) for values in self.grid.values()) if self.grid else 0
        runs = max(combos + len(self.points), 1) * (self.folds or 1)
        if runs > MAX_SWEEP_RUNS:
            sizes = " x ".join(f"{path!r}: {len(values)}" for path, values in self.grid.items())
            parts = [f"grid {sizes} = {combos:,} points"] if self.grid else []
            parts += [f"{len(self.points):,} listed points"] if self.points else []
            folds = f", x {self.folds} folds" if self.folds else ""
            raise ValueError(
                f"this sweep would run {runs:,} times ({' + '.join(parts)}{folds}), over the "
                f"limit of {MAX_SWEEP_RUNS:,} runs per sweep; sweep fewer values, or split it "
                "into several sweeps"
            )
        return self


class SolverSpec(StrictModel):
    """Base of every solver's spec model.

    A plugin subclasses it, narrows ``solver`` to ``Literal["its-name"]`` and replaces
    ``objective``, ``constraints`` and ``search`` with its own ``StrictModel`` sections.
    """

    name: str = Field(min_length=1, description="A name for this problem, shown in run lists.")
    data: DataSpec
    solver: str
    objective: StrictModel = Field(default_factory=StrictModel)
    constraints: StrictModel = Field(default_factory=StrictModel)
    search: StrictModel = Field(default_factory=StrictModel)
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    store: StoreSpec = Field(default_factory=StoreSpec)
    sweep: SweepSpec | None = Field(None, description="Run a grid of variants of this spec (glasswork sweep).")

    def resolved(self) -> dict[str, Any]:
        """The spec with every default filled in, as plain JSON values."""
        return self.model_dump(mode="json")

    def spec_hash(self) -> str:
        """A stable hash of the resolved spec (key order and formatting do not matter)."""
        canonical = json.dumps(self.resolved(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


# -- errors --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpecIssue:
    """One problem in a spec file, located as precisely as the file allows."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.path, "message": self.message}


class SpecError(Exception):
    """A spec that cannot be used; carries every issue found, not just the first."""

    def __init__(self, issues: Sequence[SpecIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(map(str, self.issues)))


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec together with the file it came from (data paths resolve against it)."""

    spec: SolverSpec
    path: Path | None

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


# -- reading files with positions ----------------------------------------------------------------


class _Positions:
    """Maps a field path to the (line, column) of its key and of its value, 1-based."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def locate(self, loc: Sequence[int | str], *, key: bool = False) -> tuple[int, int]:
        node = self.root
        pos = _node_start(node) or (1, 1)
        for i, part in enumerate(loc):
            last = i == len(loc) - 1
            lc = getattr(node, "lc", None)
            if isinstance(node, dict) and part in node and lc is not None:
                try:
                    line, col = lc.key(part) if (key and last) else lc.value(part)
                    pos = (line + 1, col + 1)
                except (KeyError, TypeError):
                    pass
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                if lc is not None:
                    try:
                        line, col = lc.item(part)
                        pos = (line + 1, col + 1)
                    except (KeyError, TypeError):
                        pass
                node = node[part]
            else:
                break
        return pos


def _node_start(node: Any) -> tuple[int, int] | None:
    lc = getattr(node, "lc", None)
    if lc is None or lc.line is None:
        return None
    return lc.line + 1, lc.col + 1


class _TooBig(Exception):
    """The document unfolds (through aliases) into more nodes, or deeper, than a spec may."""


def _plain(node: Any, budget: list[int] | None = None, depth: int = 0) -> Any:
    """ruamel's commented containers and scalar subclasses as plain Python values.

    Aliases are unfolded here, so ``budget`` (nodes left) and ``depth`` bound the work: an alias
    bomb or a self-referencing alias raises ``_TooBig`` instead of eating time and memory.
    """
    budget = [MAX_SPEC_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig(f"it unfolds into more than {MAX_SPEC_NODES:,} values (YAML aliases?)")
    if depth > MAX_SPEC_DEPTH:
        raise _TooBig(f"it nests deeper than {MAX_SPEC_DEPTH} levels")
    if isinstance(node, dict):
        return {
            (_plain(k, budget, depth + 1) if not isinstance(k, str) else str(k)): _plain(v, budget, depth + 1)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_plain(v, budget, depth + 1) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _flow_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest, counted over the raw text (quotes not understood, so it can
    only over-count, and a real spec never comes near the limit)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def _read_bounded(path: Path) -> str:
    """The file's text, refusing folders, devices and files over ``MAX_SPEC_BYTES`` unread."""
    import stat

    file = str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SpecError([SpecIssue(file, 1, 1, "", "file not found")]) from None
    except OSError as exc:
        raise SpecError([SpecIssue(file, 1, 1, "", f"cannot read the file: {exc}")]) from None
    if stat.S_ISDIR(info.st_mode):
        raise SpecError(
            [
                SpecIssue(
                    file,
                    1,
                    1,
                    "",
                    "this is a folder, not a spec file; name a .yaml or "
                    ".json file (glasswork validate DIR/*.yaml checks every spec in it)",
                )
            ]
        )
    if not stat.S_ISREG(info.st_mode):
        raise SpecError(
            [
                SpecIssue(
                    file, 1, 1, "", "not a regular file (a device, pipe or socket); a spec is a .yaml or .json file"
                )
            ]
        )
    if info.st_size > MAX_SPEC_BYTES:
        raise SpecError(
            [
                SpecIssue(
                    file,
                    1,
                    1,
                    "",
                    f"the file is {info.st_size:,} bytes; a spec may be at "
                    f"most {MAX_SPEC_BYTES:,} bytes (is this really a spec?)",
                )
            ]
        )
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecError([SpecIssue(file, 1, 1, "", f"cannot read the file: {exc}")]) from None
    if len(data) > MAX_SPEC_BYTES:  # it grew since stat
        raise SpecError([SpecIssue(file, 1, 1, "", f"a spec may be at most {MAX_SPEC_BYTES:,} bytes")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(
            [SpecIssue(file, line, 1, "", f"cannot read the file: not UTF-8 text ({exc.reason} at byte {exc.start})")]
        ) from None


def read_spec_document(path: Path) -> tuple[dict[str, Any], _Positions]:
    """Parse a YAML or JSON spec file; syntax errors become a ``SpecError`` with a position."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    file = str(path)
    text = _read_bounded(path)
    if _flow_depth(text) > MAX_SPEC_DEPTH:  # the YAML parser takes seconds to fail on these
        raise SpecError([SpecIssue(file, 1, 1, "", f"refused: it nests deeper than {MAX_SPEC_DEPTH} levels")])

    if path.suffix.lower() == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError([SpecIssue(file, exc.lineno, exc.colno, "", f"invalid JSON: {exc.msg}")]) from None
        except RecursionError:
            raise SpecError([SpecIssue(file, 1, 1, "", f"it nests deeper than {MAX_SPEC_DEPTH} levels")]) from None

    yaml = YAML(typ="rt")
    try:
        document = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        what = " ".join(p for p in (exc.context, exc.problem) if p)
        raise SpecError([SpecIssue(file, line, col, "", f"invalid YAML: {what}")]) from None
    except YAMLError as exc:
        raise SpecError([SpecIssue(file, 1, 1, "", f"invalid YAML: {exc}")]) from None
    except RecursionError:
        raise SpecError([SpecIssue(file, 1, 1, "", f"it nests deeper than {MAX_SPEC_DEPTH} levels")]) from None
    except Exception as exc:  # noqa: BLE001 - ruamel fails on some garbage with plain Python errors
        raise SpecError([SpecIssue(file, 1, 1, "", f"invalid YAML: {type(exc).__name__}: {exc}")]) from None

    if not isinstance(document, dict):
        kind = "an empty file" if document is None else f"a {type(document).__name__}"
        raise SpecError(
            [
                SpecIssue(
                    file,
                    1,
                    1,
                    "",
                    f"a spec must be a mapping with the keys {', '.join(TOP_LEVEL_KEYS)}; found {kind}",
                )
            ]
        )
    try:
        plain = _plain(document)
    except (_TooBig, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, _TooBig) else f"it nests deeper than {MAX_SPEC_DEPTH} levels"
        raise SpecError([SpecIssue(file, 1, 1, "", f"refused: {reason}; a spec is small data")]) from None
    return plain, _Positions(document)


# -- validation ----------------------------------------------------------------------------------


def set_path(document: dict[str, Any], path: str, value: Any) -> None:
    """Set ``a.b.c`` in a spec document, creating the sections on the way (``--set`` and sweeps)."""
    keys = path.split(".")
    node = document
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[keys[-1]] = value


def flatten(document: Any, prefix: str = "") -> dict[str, Any]:
    """A nested spec as ``{"objective.regularization": 0.01, ...}`` (for comparing specs)."""
    if isinstance(document, dict):
        out: dict[str, Any] = {}
        for key, inner in document.items():
            out.update(flatten(inner, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: document}


def spec_union(models: Sequence[type[SolverSpec]]) -> Any:
    """The discriminated union of solver spec models, tagged by ``solver``."""
    if len(models) == 1:
        return models[0]
    return Annotated[Union[tuple(models)], Field(discriminator="solver")]  # noqa: UP007


@functools.lru_cache(maxsize=16)
def _adapter(models: tuple[type[SolverSpec], ...]) -> TypeAdapter[Any]:
    """Building the union's validator costs far more than using it: once per set of solvers."""
    return TypeAdapter(spec_union(models))


def validate_spec(
    document: dict[str, Any],
    registry: Registry,
    *,
    file: str = "<spec>",
    positions: _Positions | None = None,
) -> SolverSpec:
    """Validate a parsed document against the registered solvers' models."""
    positions = positions or _Positions(None)

    def issue(loc: Sequence[int | str], message: str, *, key: bool = False) -> SpecIssue:
        line, col = positions.locate(loc, key=key)
        return SpecIssue(file, line, col, ".".join(str(p) for p in loc), message)

    solver = document.get("solver")
    if "solver" not in document:
        raise SpecError([issue([], f"missing key 'solver'; installed solvers: {_names(registry.solvers)}")])
    if not isinstance(solver, str):
        raise SpecError([issue(["solver"], f"must be a solver name (a string); installed: {_names(registry.solvers)}")])
    if solver not in registry.solvers:
        raise SpecError([issue(["solver"], registry.explain_unknown(solver))])

    models = [cls.spec_model for cls in registry.solvers.values()]
    adapter = _adapter(tuple(models))
    try:
        return adapter.validate_python(document)
    except ValidationError as exc:
        single = len(models) == 1
        issues = []
        for err in exc.errors(include_url=False):
            loc = list(err["loc"])
            if not single and loc and loc[0] == solver:
                loc = loc[1:]  # the union's tag is not part of the user's path
            issues.append(_explain(err, loc, registry.solvers[solver].spec_model, issue))
        raise SpecError(issues) from None


def _explain(err: Any, loc: list[Any], model: type[BaseModel], issue: Any) -> SpecIssue:
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        bad = str(loc[-1])
        message = f"unknown key {bad!r}"
        close = difflib.get_close_matches(bad, allowed, n=1)
        if close:
            message += f"; did you mean {close[0]!r}?"
        if allowed:
            message += f" Allowed keys here: {', '.join(allowed)}"
        return issue(loc, message, key=True)
    if kind == "missing":
        return issue(loc, "required key is missing")
    message = err["msg"]
    if kind.startswith("value_error") and message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    value = err.get("input")
    if kind not in ("missing",) and not isinstance(value, (dict, list)) and "input" in err:
        message += f" (got {value!r})"
    return issue(loc, message)


def _allowed_keys(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """The field names of the model found at ``loc`` (best effort through optionals and lists)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            current = _inner_model(current, list_item=True)
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(str(part))
        if field is None:
            return []
        current = _inner_model(field.annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _inner_model(annotation: Any, *, list_item: bool = False) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def _names(names: Iterable[str]) -> str:
    listed = sorted(names)
    return ", ".join(listed) if listed else "none (see 'glasswork plugins')"


def load_spec(path: str | Path, registry: Registry | None = None, *, overrides: Sequence[str] = ()) -> LoadedSpec:
    """Read and validate one spec file, with ``--set PATH=VALUE`` overrides applied first.

    Raises ``SpecError`` listing every problem found.
    """
    from glasswork.registry import get_registry

    registry = registry or get_registry()
    path = Path(path)
    document, positions = read_spec_document(path)
    apply_overrides(document, overrides)
    spec = validate_spec(document, registry, file=str(path), positions=positions)
    return LoadedSpec(spec=spec, path=path.resolve())


def apply_overrides(document: dict[str, Any], overrides: Sequence[str]) -> None:
    """``objective.regularization=0.01`` style edits (``--set``), values parsed as YAML scalars."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="safe")
    for item in overrides:
        path, sep, raw = item.partition("=")
        if not sep or not path.strip():
            raise SpecError([SpecIssue("--set", 1, 1, "", f"expected PATH=VALUE, got {item!r}")])
        try:
            value = yaml.load(raw) if raw.strip() else None
        except YAMLError as exc:
            problem = str(getattr(exc, "problem", None) or exc).splitlines()[0]
            name = path.strip()
            quoted = "'" + raw.replace("'", "''") + "'"
            shell = (name + "=" + quoted).replace("\\", "\\\\").replace('"', '\\"')
            raise SpecError(
                [
                    SpecIssue(
                        "--set",
                        1,
                        1,
                        name,
                        f"the value {raw!r} is not a YAML value ({problem}); to give it as text, "
                        f"quote it in YAML, so that the argument reads {name}={quoted} "
                        f'(in a shell: --set "{shell}")',
                    )
                ]
            ) from None
        set_path(document, path.strip(), value)


def json_schema(registry: Registry | None = None) -> dict[str, Any]:
    """JSON Schema of a spec file for every installed solver (for editor completion)."""
    from glasswork.registry import get_registry

    registry = registry or get_registry()
    models = [registry.solvers[name].spec_model for name in sorted(registry.solvers)]
    if not models:
        schema: dict[str, Any] = {"type": "object", "description": "No solver plugin is installed."}
    else:
        schema = TypeAdapter(spec_union(models)).json_schema()
    return {
        **schema,
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "glasswork problem spec",
        "description": "One optimization problem: data, solver, objective, constraints, search, limits, store.",
    }
