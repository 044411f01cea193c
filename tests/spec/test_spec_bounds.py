"""A spec is data from anyone (issue 17): the loader is bounded (size, alias expansion, depth),
refuses folders and devices, and never fails with anything but a ``SpecError``, which the CLI
turns into exit 2. The fuzz tests run thousands of random documents through the loader in this
process, and a few hostile files through the real command line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import toy_plugin
from glasswork.hooks.registry import Registry
from glasswork.spec.document import MAX_SPEC_BYTES, MAX_SPEC_NODES, SpecError
from glasswork.spec.load import load_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REGISTRY = Registry(builtins=False, entry_points=False, disabled=(), extra=[("toy", toy_plugin)])
FUZZ = settings(
    max_examples=1000,
    deadline=2000,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
VALID = "name: x\nsolver: toy\ndata: {source: sklearn:iris}\n"


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + f"\nname: *a{levels}\nsolver: toy\n"


def refused(path: Path, match: str) -> float:
    started = time.monotonic()
    with pytest.raises(SpecError, match=match):
        load_spec(path, REGISTRY)
    return time.monotonic() - started


def test_an_alias_bomb_is_refused_in_under_a_second(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb())
    assert refused(path, f"more than {MAX_SPEC_NODES:,} values") < 1.0


def test_a_self_referencing_alias_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("name: &a [x, *a]\nsolver: toy\n")
    assert refused(path, ".") < 1.0  # refused or simply invalid: no hang, no RecursionError


def test_a_huge_file_is_refused_unread(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB that cost nothing to make
    assert refused(path, f"at most {MAX_SPEC_BYTES:,} bytes") < 1.0


def test_deep_nesting_is_refused(tmp_path):
    for text in ("[" * 5000 + "]" * 5000, "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 200))):
        path = tmp_path / "deep.yaml"
        path.write_text(text)
        assert refused(path, "deeper|invalid YAML|must be a mapping") < 1.0
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert refused(path, "deeper|invalid JSON|at most") < 1.0


def test_a_folder_and_a_device_are_refused(tmp_path):
    assert refused(tmp_path, "folder") < 1.0
    if Path("/dev/zero").exists():
        assert refused(Path("/dev/zero"), "not a regular file") < 1.0


@pytest.mark.parametrize("what", ["folder", "device", "bomb", "binary"])
def test_the_command_line_says_so_with_exit_2(what, tmp_path, toy_env):
    target = {
        "folder": tmp_path,
        "device": Path("/dev/zero"),
        "bomb": tmp_path / "b.yaml",
        "binary": tmp_path / "g.yaml",
    }[what]
    if what == "bomb":
        target.write_text(alias_bomb())
    if what == "binary":
        target.write_bytes(bytes(range(256)) * 4)
    if not target.exists():
        pytest.skip("no /dev/zero here")
    for command in (["validate", str(target)], ["run", "--no-store", str(target)]):
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "glasswork", *command], capture_output=True, text=True, env=toy_env, timeout=60
        )
        assert proc.returncode == 2, proc.stderr
        assert str(target) in proc.stderr and "Traceback" not in proc.stderr
        assert time.monotonic() - started < 30


def _load(path: Path) -> None:
    """Load; only ``SpecError`` may come out (anything else fails the fuzz test)."""
    try:
        load_spec(path, REGISTRY)
    except SpecError as exc:
        assert exc.issues and all(str(issue) for issue in exc.issues)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=40,
)
spec_keys = st.sampled_from(
    [
        "name",
        "solver",
        "data",
        "source",
        "target",
        "where",
        "objective",
        "search",
        "limits",
        "store",
        "sweep",
        "grid",
        "behaviour",
        "regularization",
        "toy",
        "sklearn:iris",
        "endless",
        "path",
        "time",
    ]
)
spec_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | spec_keys | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(spec_keys, inner, max_size=6),
    max_leaves=30,
)
yaml_tokens = st.sampled_from(
    [
        "name: x\n",
        "solver: toy\n",
        "data:\n",
        "  source: sklearn:iris\n",
        "&a ",
        "*a ",
        "*b ",
        "&b ",
        "<<: *a\n",
        "!!python/object:os.system ",
        "!!binary ",
        "!tag ",
        "!!set ",
        "!!omap ",
        "!!timestamp ",
        "? ",
        ": ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "\n",
        "  ",
        "\t",
        "'",
        '"',
        "%YAML 1.1\n",
        "%TAG ! tag:x,2000:\n",
        "---\n",
        "...\n",
        "|\n",
        ">-\n",
        "# c\n",
        "\\u0000",
        "\ufeff",
        "\x85",
        "0x1F",
        "1e400",
        ".nan",
        "~",
        "null",
        "yes",
        "2001-12-14",
        "a" * 50,
        "\u2028",
        "@",
        "`",
    ]
)


@FUZZ
@given(text=st.text(max_size=300), suffix=st.sampled_from([".yaml", ".json", ".yml"]))
def test_fuzz_random_text(text, suffix, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / f"fuzz_text{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _load(path)


@FUZZ
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".yaml", ".json"]))
def test_fuzz_binary_garbage(data, suffix, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / f"fuzz_bytes{suffix}"
    path.write_bytes(data)
    _load(path)


@FUZZ
@given(tokens=st.lists(yaml_tokens, max_size=40))
def test_fuzz_yaml_tokens_tags_and_aliases(tokens, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / "fuzz_tokens.yaml"
    path.write_text("".join(tokens), encoding="utf-8", errors="surrogatepass")
    _load(path)


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
@settings(FUZZ, max_examples=600)
@given(document=st.one_of(json_values, spec_like), as_json=st.booleans())
def test_fuzz_structured_documents(document, as_json, tmp_path_factory):
    base = tmp_path_factory.getbasetemp()
    if as_json:
        path = base / "fuzz_doc.json"
        path.write_text(json.dumps(document, allow_nan=True))
    else:
        from ruamel.yaml import YAML

        path = base / "fuzz_doc.yaml"
        with path.open("w", encoding="utf-8") as fh:
            YAML(typ="safe").dump(document, fh)
    _load(path)


@pytest.mark.slow  # (over 3 s: the README's command stays under 5 minutes; .ci/run's slow step runs it)
@settings(FUZZ, max_examples=300)
@given(document=st.dictionaries(spec_keys, spec_like, max_size=8))
def test_fuzz_specs_around_a_valid_one(document, tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / "fuzz_near.yaml"
    from ruamel.yaml import YAML

    base = {"name": "x", "solver": "toy", "data": {"source": "sklearn:iris"}}
    base.update(document)
    with path.open("w", encoding="utf-8") as fh:
        YAML(typ="safe").dump(base, fh)
    _load(path)


# -- integers that reach compiled code or the run store (issue 23, item 6) ------------------------

INT64_MAX = 2**63 - 1


def _integer_nodes(node, path: str = "", inherited: float | None = None):
    """Every schema node that admits an integer, with where it is and its maximum (pydantic
    writes the bound of a ``ByteSize`` as ``le`` on the enclosing union)."""
    if isinstance(node, dict):
        inherited = node.get("le", inherited)
        if node.get("type") == "integer":
            yield path, node, node.get("maximum", node.get("exclusiveMaximum", inherited))
        for key, value in node.items():
            yield from _integer_nodes(value, f"{path}.{key}" if path else key, inherited)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _integer_nodes(value, f"{path}[{i}]", inherited)


def test_every_integer_of_the_specs_is_bounded_within_int64():
    """The data section, the built-in solvers' sections, limits and sweep: each integer has a
    minimum and a maximum inside int64 (``data.split.seed`` had none: 2^70 reached scikit-learn).
    ``data.positive`` is a label, compared with the target's values and never computed with."""
    from glasswork.spec.load import json_schema

    schema = json_schema(Registry(entry_points=False, disabled=()))
    unbounded = []
    for name, definition in schema["$defs"].items():
        for path, node, top in _integer_nodes(definition, name):
            if path.startswith("DataSpec.properties.positive."):
                continue
            bottom = node.get("minimum", node.get("exclusiveMinimum"))
            if top is None or bottom is None or top > INT64_MAX or bottom < -INT64_MAX - 1:
                unbounded.append(path)
    assert not unbounded, f"integers without a bound inside int64: {unbounded}"


BUILTIN = Registry(entry_points=False, disabled=())
HUGE = [
    (f"limits: {{nodes: {2**63}}}", "limits.nodes"),
    (f"limits: {{nodes: {2**64}}}", "limits.nodes"),
    ("limits: {time: .inf}", "limits.time"),
    (f"limits: {{memory: {2**70}}}", "limits.memory"),
    (f"sweep: {{folds: {2**63}}}", "sweep.folds"),
    (f"data: {{source: sklearn:iris, split: {{seed: {2**70}}}}}", "data.split.seed"),
    (f"data: {{source: sklearn:iris, split: {{seed: {2**32}}}}}", "data.split.seed"),
]  # a data line takes the place of VALID's


@pytest.mark.parametrize("line,field", HUGE)
def test_huge_limits_are_refused_with_the_field(line, field, tmp_path):
    path = tmp_path / "huge.yaml"
    base = VALID.replace("data: {source: sklearn:iris}\n", "") if line.startswith("data:") else VALID
    path.write_text(base + line + "\n")
    with pytest.raises(SpecError, match=field.replace(".", r"\.")):
        load_spec(path, REGISTRY)


@pytest.mark.parametrize(
    "section,field,value",
    [
        ("objective", "candidates.seed", 2**32),
        ("objective", "candidates.max_candidates", 2**63),
        ("constraints", "stability_rank", 2**63),
        ("constraints", "frontier.choose", 0),
        ("constraints", "frontier.choose", 2**63),
    ],
)
def test_huge_moss_integers_are_refused(section, field, value, tmp_path):
    head, _, leaf = field.rpartition(".")
    inner = {leaf: value}
    for part in reversed(head.split(".") if head else []):
        inner = {part: inner}
    path = tmp_path / "moss.json"
    path.write_text(json.dumps({"name": "m", "solver": "moss", "data": {"source": "sklearn:diabetes"}, section: inner}))
    with pytest.raises(SpecError, match=f"{section}.{head or leaf}"):
        load_spec(path, BUILTIN)


@pytest.mark.parametrize(
    "section,value",
    [
        ("search", {"pool_size": 2**63}),
        ("constraints", {"coefficient_bounds": [-(10**400), 5]}),
        ("constraints", {"coefficient_bounds": {"a*": [0, 2**64]}}),
    ],
)
def test_huge_fasterrisk_integers_are_refused(section, value, tmp_path):
    path = tmp_path / "fr.json"
    path.write_text(
        json.dumps({"name": "f", "solver": "fasterrisk", "data": {"source": "sklearn:breast_cancer"}, section: value})
    )
    with pytest.raises(SpecError, match=section):
        load_spec(path, BUILTIN)


@pytest.mark.parametrize("command", ["validate", "run"])
def test_limits_nodes_of_2_63_is_exit_2_on_the_command_line(command, tmp_path, toy_env):
    spec = tmp_path / "nodes.yaml"
    spec.write_text(VALID + f"limits: {{nodes: {2**63}}}\n")
    args = [command, str(spec)] if command == "validate" else [command, "--no-store", str(spec)]
    proc = subprocess.run(
        [sys.executable, "-m", "glasswork", *args], capture_output=True, text=True, env=toy_env, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert "limits.nodes" in proc.stderr and "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr
