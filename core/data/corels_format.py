"""The CORELS text format, read and written exactly, so problems can be swapped with the original tool.

* ``.out``: one antecedent per line, ``{name} b1 b2 ... bN`` (``bn`` is 1 when the antecedent
  captures sample n).
* ``.label``: one line per class, ``{label-name} b1 ... bN``, the lines complementary.
* ``.minor`` (optional): one line ``{group_minority} z1 ... zN``, the equivalent-points minority.

Vectors are read token by token, so leading zeros are kept (the reference tool parses a line as a
big integer and silently drops them). Files are written in the reference layout: single spaces,
no trailing space, ``\\n`` after every line; reading then writing such a file reproduces it byte
for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from glasswork.cython_ext import bitset
from glasswork.data.problem import DataError, Problem
from glasswork.data.rules import Antecedents, split_items
from glasswork.data.spec import DataSpec

MINOR_NAME = "group_minority"


@dataclass(frozen=True, eq=False)
class CorelsData:
    """What a ``.out`` / ``.label`` / ``.minor`` triple holds.

    ``y`` encodes each sample's label as the index of its ``.label`` line (``None`` without a
    label file); ``minority`` is the ``.minor`` vector as bools, or ``None``.
    """

    antecedents: Antecedents
    y: np.ndarray | None
    label_names: list[str]
    minority: np.ndarray | None
    minor_name: str = MINOR_NAME

    @property
    def n_samples(self) -> int:
        return self.antecedents.n_samples


def read_corels(
    out_path: str | Path,
    label_path: str | Path | None = None,
    minor_path: str | Path | None = None,
) -> CorelsData:
    """Read a CORELS problem. Label and minor paths default to the ``.out`` path with its suffix
    replaced by ``.label`` / ``.minor``, when those files exist."""
    out_path = Path(out_path)
    if label_path is None and out_path.with_suffix(".label").exists():
        label_path = out_path.with_suffix(".label")
    if minor_path is None and out_path.with_suffix(".minor").exists():
        minor_path = out_path.with_suffix(".minor")

    names, matrix = read_vectors(out_path)
    n = matrix.shape[1]
    antecedents = Antecedents(
        names=names,
        bits=bitset.pack_rows(matrix),
        n_samples=n,
        cardinality=np.asarray([len(split_items(nm)) for nm in names], dtype=np.int64),
    )

    y = None
    label_names: list[str] = []
    if label_path is not None:
        label_names, labels = read_vectors(label_path)
        _same_length(out_path, n, label_path, labels.shape[1])
        if len(label_names) < 2:
            raise DataError(
                f"a label file needs one line per class (at least 2), found {len(label_names)}",
                file=label_path,
                hint="write one '{name} b1 ... bN' line per class",
            )
        per_sample = labels.sum(axis=0)
        bad = np.flatnonzero(per_sample != 1)
        if bad.size:
            i = int(bad[0])
            raise DataError(
                f"sample {i + 1} has {int(per_sample[i])} labels set, expected exactly one",
                file=label_path,
                column=f"sample {i + 1}",
                hint="the label lines must be complementary: each sample in exactly one class",
            )
        y = labels.argmax(axis=0).astype(np.int64)

    minority = None
    minor_name = MINOR_NAME
    if minor_path is not None:
        minor_names, minor = read_vectors(minor_path)
        if len(minor_names) != 1:
            raise DataError(
                f"a minor file holds one line, found {len(minor_names)}",
                file=minor_path,
                hint="write a single '{group_minority} z1 ... zN' line",
            )
        _same_length(out_path, n, minor_path, minor.shape[1])
        minority = minor[0].astype(bool)
        minor_name = minor_names[0]
    return CorelsData(antecedents, y, label_names, minority, minor_name)


def write_corels(
    data: CorelsData,
    out_path: str | Path,
    label_path: str | Path | None = None,
    minor_path: str | Path | None = None,
) -> list[Path]:
    """Write ``data`` in the reference layout; returns the files written.

    The label file is written when ``data.y`` is set, the minor file when ``data.minority`` is;
    their paths default to ``out_path`` with the suffix replaced.
    """
    out_path = Path(out_path)
    a = data.antecedents
    written = [out_path]
    write_vectors(out_path, a.names, bitset.unpack_rows(a.bits, a.n_samples))
    if data.y is not None:
        k = max(len(data.label_names), int(data.y.max()) + 1 if data.y.size else 0)
        names = data.label_names or [f"label={i}" for i in range(k)]
        if len(names) < k:
            raise DataError(f"{len(names)} label names for {k} classes")
        onehot = (data.y[None, :] == np.arange(len(names))[:, None]).astype(np.uint8)
        path = Path(label_path) if label_path is not None else out_path.with_suffix(".label")
        write_vectors(path, names, onehot)
        written.append(path)
    if data.minority is not None:
        path = Path(minor_path) if minor_path is not None else out_path.with_suffix(".minor")
        write_vectors(path, [data.minor_name], np.asarray(data.minority, dtype=np.uint8)[None, :])
        written.append(path)
    return written


def read_vectors(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Parse ``{name} b1 ... bN`` lines into names and a ``(lines, N)`` uint8 matrix."""
    path = Path(path)
    if not path.exists():
        raise DataError(
            f"file not found: {path}", file=path, hint="check the path (relative paths start at the spec file's folder)"
        )
    raw = path.read_bytes()
    names: list[str] = []
    rows: list[np.ndarray] = []
    first_line = 0
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        line = line.strip()
        if not line:
            continue
        if not line.startswith(b"{") or b"}" not in line:
            raise DataError(
                f"expected a line '{{name}} b1 b2 ...', got {line[:40].decode(errors='replace')!r}",
                file=path,
                line=lineno,
                hint="wrap each antecedent or label name in braces",
            )
        close = line.index(b"}")
        name = line[1:close].decode("utf-8", errors="replace")
        bits = _parse_bits(line[close + 1 :].strip(), path, lineno)
        if rows and bits.size != rows[0].size:
            raise DataError(
                f"{bits.size} values on this line but {rows[0].size} on line {first_line}",
                file=path,
                line=lineno,
                hint="every vector must have one value per sample",
            )
        if not rows:
            first_line = lineno
        names.append(name)
        rows.append(bits)
    if not rows:
        raise DataError("the file holds no vectors", file=path, hint="expected lines of the form '{name} b1 b2 ... bN'")
    if rows[0].size == 0:
        raise DataError("the vectors are empty (no samples)", file=path, line=first_line)
    return names, np.ascontiguousarray(np.stack(rows))


def write_vectors(path: str | Path, names: list[str], matrix: np.ndarray) -> None:
    """Write one ``{name} b1 ... bN`` line per row of a 0/1 matrix."""
    matrix = np.asarray(matrix, dtype=np.uint8)
    for name in names:
        if not name or any(ch.isspace() or ch in "{}" for ch in name):
            raise DataError(
                f"the name {name!r} cannot be written in the CORELS format",
                file=path,
                hint="names must be non-empty, without spaces or braces (the reference tool "
                "splits lines on spaces); rename the column or value",
            )
    n = matrix.shape[1]
    buf = np.full(max(2 * n - 1, 0), ord(" "), dtype=np.uint8)
    with open(path, "wb") as fh:
        for name, row in zip(names, matrix):
            buf[0::2] = row + ord("0")
            fh.write(b"{" + name.encode() + b"} " + buf.tobytes() + b"\n")


def _parse_bits(body: bytes, path: Path, lineno: int) -> np.ndarray:
    arr = np.frombuffer(body, dtype=np.uint8)
    # Fast path: the reference layout "d d d ... d" with single spaces.
    if arr.size % 2 == 1:
        digits, seps = arr[0::2], arr[1::2]
        if (seps == ord(" ")).all() and ((digits == ord("0")) | (digits == ord("1"))).all():
            return (digits - ord("0")).astype(np.uint8)
    tokens = body.split()
    out = np.empty(len(tokens), dtype=np.uint8)
    for i, tok in enumerate(tokens):
        if tok == b"0":
            out[i] = 0
        elif tok == b"1":
            out[i] = 1
        else:
            raise DataError(
                f"value {tok.decode(errors='replace')!r} at position {i + 1} is not 0 or 1",
                file=path,
                line=lineno,
                hint="vectors hold one 0 or 1 per sample, space-separated",
            )
    return out


def _same_length(a: Path, n_a: int, b: str | Path, n_b: int) -> None:
    if n_a != n_b:
        raise DataError(
            f"{n_b} samples here but {n_a} in {a}",
            file=b,
            hint="the .out, .label and .minor files must describe the same samples",
        )


def _read_labelled(path: Path, which: str) -> tuple[CorelsData, np.ndarray]:
    """``path`` read with the labels it needs (``which``: "the", "the test" .out file), and them."""
    data = read_corels(path)
    if data.y is None:
        raise DataError(
            f"no label file next to {which} .out file",
            file=path,
            hint=f"put the labels in {path.with_suffix('.label').name}",
        )
    return data, data.y


def load_corels(spec: DataSpec, base_dir: Path) -> Problem:
    """A ``Problem`` from a CORELS ``.out`` source: X is the antecedent matrix, already mined.

    ``extras``: ``premined=True`` (solvers must not mine again), ``antecedents`` (the packed
    training antecedents), ``minority`` (the ``.minor`` mask, recomputed on the training rows
    after a split) and ``label_names`` (the ``.label`` names, for writing the files back).
    """
    from glasswork.data.rules import minority_mask
    from glasswork.data.sources import resolve_path
    from glasswork.data.split import split_indices

    for field_name in ("weights", "where", "binarize"):
        if getattr(spec, field_name) is not None:
            raise DataError(
                f"'{field_name}' does not apply to a CORELS .out source",
                file=spec.source,
                hint=f"remove '{field_name}'",
            )
    if spec.types:
        raise DataError(
            "'types' does not apply to a CORELS .out source (its antecedents are 0/1)",
            file=spec.source,
            hint="remove 'types'",
        )
    path = resolve_path(spec.source, base_dir)
    data, y = _read_labelled(path, "the")
    names = data.antecedents.names
    prefix, classes = _class_names(data.label_names)
    if spec.target is not None and spec.target not in (prefix, None):
        raise DataError(
            f"the label file predicts {prefix or 'its own labels'!r}, not {spec.target!r}",
            file=path.with_suffix(".label"),
            hint="remove 'target' or fix it",
        )
    if spec.task == "regression":
        raise DataError(
            "a CORELS source holds class labels, not a regression target",
            file=path,
            hint="set task: binary or multiclass",
        )
    keep = _select_antecedents(spec, names, path)

    if len(np.unique(y)) < 2:
        raise DataError(
            f"the target is constant (every sample is {classes[int(y[0])]!r})",
            file=path.with_suffix(".label"),
            hint="a model needs samples of at least two classes",
        )
    if spec.positive is not None:
        hits = [
            i for i, (full, short) in enumerate(zip(data.label_names, classes)) if str(spec.positive) in (full, short)
        ]
        if not hits:
            raise DataError(
                f"positive label {spec.positive!r} is not in the label file",
                file=path.with_suffix(".label"),
                hint=f"labels are: {', '.join(classes)}",
            )
        pos = hits[0]
        y = (y == pos).astype(np.int64)
        others = [c for i, c in enumerate(classes) if i != pos]
        classes = [others[0] if len(others) == 1 else f"not-{classes[pos]}", classes[pos]]
    task: Literal["binary", "multiclass"] = "binary" if len(classes) == 2 else "multiclass"
    if spec.task == "binary" and task != "binary":
        raise DataError(
            f"a binary task needs two labels, the label file has {len(classes)}",
            file=path.with_suffix(".label"),
            hint="set 'positive' to the label to predict, or 'task: multiclass'",
        )

    full = data.antecedents.matrix()
    matrix = np.ascontiguousarray(full[:, keep])
    train, held, folds = split_indices(spec.split, y, task)
    X = np.ascontiguousarray(matrix[train])
    problem = Problem(
        name=spec.source,
        X=X,
        y=y[train],
        feature_names=[names[i] for i in keep],
        task=task,
        classes=np.asarray(classes, dtype=object),
        train_index=train,
        test_index=held,
        folds=folds,
        fold=spec.split.fold if spec.split.kind == "kfold" else None,
        source=spec.source,
    )
    problem.extras["premined"] = True
    problem.extras["antecedents"] = Antecedents.from_matrix(X, problem.feature_names)
    problem.extras["label_names"] = list(data.label_names)
    if prefix:
        problem.extras["target"] = prefix
    if data.minority is not None:
        problem.extras["minority"] = data.minority if held is None else minority_mask(X, problem.y)
    audit_rows = {n: full[:, names.index(n)].astype(np.int64) for n in spec.audit_only}
    problem.audit = {n: v[train] for n, v in audit_rows.items()}
    if held is not None:
        problem.X_test, problem.y_test = np.ascontiguousarray(matrix[held]), y[held]
        problem.audit_test = {n: v[held] for n, v in audit_rows.items()}
    if spec.test is not None:
        test_path = resolve_path(spec.test, base_dir)
        if test_path.suffix.lower() != ".out":
            raise DataError(
                "the test file of a CORELS source must be a .out file",
                file=spec.test,
                hint="name the test .out file (its .label file sits next to it)",
            )
        test, test_y = _read_labelled(test_path, "the test")
        position = {n: i for i, n in enumerate(test.antecedents.names)}
        absent = [n for n in [*problem.feature_names, *spec.audit_only] if n not in position]
        if absent:
            raise DataError(
                f"antecedent {absent[0]!r} of the training file is not in the test file",
                file=test_path,
                hint="mine train and test with the same antecedents",
            )
        if test.label_names != data.label_names:
            raise DataError(
                f"test labels {test.label_names} differ from training labels {data.label_names}",
                file=test_path.with_suffix(".label"),
                hint="write the label lines in the same order in both files",
            )
        test_matrix = test.antecedents.matrix()
        problem.X_test = np.ascontiguousarray(test_matrix[:, [position[n] for n in problem.feature_names]])
        problem.y_test = (test_y == pos).astype(np.int64) if spec.positive is not None else test_y
        problem.audit_test = {n: test_matrix[:, position[n]].astype(np.int64) for n in spec.audit_only}
    return problem


def _class_names(label_names: list[str]) -> tuple[str | None, list[str]]:
    """Split ``target:value`` label names into the shared target and the class values."""
    heads = {n.split(":", 1)[0] for n in label_names}
    if len(heads) == 1 and all(":" in n for n in label_names):
        return heads.pop(), [n.split(":", 1)[1] for n in label_names]
    return None, list(label_names)


def _select_antecedents(spec: DataSpec, names: list[str], path: Path) -> list[int]:
    position = {n: i for i, n in enumerate(names)}
    wanted = spec.columns if spec.columns is not None else names
    unknown = [n for n in [*wanted, *spec.drop] if n not in position]
    if unknown:
        raise DataError(
            f"unknown antecedent(s) {', '.join(map(repr, unknown[:5]))}",
            file=path,
            hint=f"'columns' and 'drop' name antecedents of the .out file, e.g. {names[0]!r}",
        )
    absent = [n for n in spec.audit_only if n not in position]
    if absent:
        raise DataError(
            f"audit-only antecedent(s) {', '.join(map(repr, absent[:5]))} not in the .out file",
            file=path,
            hint=f"'audit_only' names antecedents of the .out file, e.g. {names[0]!r}",
            field="data.audit_only",
        )
    left_out = {*spec.drop, *spec.audit_only}  # an audit-only antecedent is never a feature
    keep = [position[n] for n in wanted if n not in left_out]
    if not keep:
        raise DataError("no antecedents are left", file=path, hint="check 'columns' and 'drop'")
    return keep
