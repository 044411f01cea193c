"""``data.where`` is data, not code (issue 17): every escape from the file's rows is refused at
validation with exit 2 naming the field, and the connection that runs the filter is locked down
on its own, so an escape the checker missed would still fail."""

from __future__ import annotations

import json
import os

import duckdb
import pytest
from click.testing import CliRunner
from glasswork.cli import cli
from glasswork.data import DataError, DataSpec, LimitReached, load_problem, sandbox
from glasswork.data.sources import read_file

ESCAPES = {
    "read_csv": "1=1 AND (SELECT count(*) FROM read_csv('/etc/passwd', header=false, sep=':')) > 0",
    "read_csv in FROM-first": "(FROM read_csv('/etc/passwd')) IS NOT NULL",
    "read_text": "length(read_text('/etc/passwd')) > 0",
    "read_text subquery": "a IN (SELECT length(content) FROM read_text('/etc/passwd'))",
    "read_blob": "(SELECT count(*) FROM read_blob('/etc/hostname')) > 0",
    "glob": "a IN (SELECT 1 FROM glob('/*'))",
    "getenv": "getenv('HOME') IS NOT NULL",
    "current_setting": "current_setting('home_directory') <> ''",
    "getvariable": "getvariable('x') IS NULL",
    "ATTACH": "1=1; ATTACH '/tmp/gw_attack.duckdb' AS x",
    "INSTALL": "1=1; INSTALL httpfs",
    "LOAD": "1=1; LOAD httpfs",
    "COPY": "1=1; COPY (SELECT 42) TO '/tmp/gw_attack.csv'",
    "second statement": "1=1; SELECT 1",
    "UNION": "1=1 UNION ALL SELECT * FROM read_csv('/etc/passwd')",
    "ORDER BY": "1=1 ORDER BY 1",
    "LIMIT": "1=1 LIMIT 1",
    "EXISTS": "EXISTS (SELECT 1 FROM duckdb_settings())",
    "catalog function": "(SELECT count(*) FROM duckdb_tables()) = 0",
    "parameter": "a = $1",
    "other table": "other.a = 1",
    "https": "(SELECT count(*) FROM read_csv('https://example.com/x.csv')) > 0",
    "nextval": "nextval('s') > 0",
    "unbalanced": "a = 1) OR (1=1",
}


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,label\n1,0,1\n0,1,0\n1,1,1\n0,0,0\n")
    return path


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_every_escape_is_refused_by_the_checker(name):
    with pytest.raises(sandbox.UnsafeFilter):
        sandbox.check_where(ESCAPES[name])


@pytest.mark.parametrize("name", ["read_csv", "read_text", "glob", "getenv", "ATTACH", "INSTALL", "COPY"])
def test_validate_refuses_the_spec_with_exit_2_naming_the_field(name, tmp_path, csv, toy_env):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: x\nsolver: toy\ndata:\n  source: {csv.name}\n  target: label\n  where: {json.dumps(ESCAPES[name])}\n"
    )
    result = CliRunner().invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 2, result.output
    assert "data.where" in result.stderr and ":6:" in result.stderr
    run = CliRunner().invoke(cli, ["run", "--no-store", str(spec)])
    assert run.exit_code == 2 and "data.where" in run.stderr and "nothing was run" in run.stderr
    assert not (tmp_path / "gw_attack.csv").exists()


def test_plain_conditions_still_filter(csv):
    for where, rows in [
        ("a = 1", [1, 3]),
        ("a = 1 AND b = 1", [3]),
        ("label IN (0) OR b > 0", [2, 3, 4]),
        ("lower(CAST(a AS VARCHAR)) = '0'", [2, 4]),
        ("a = 1 -- why", [1, 3]),
    ]:
        table = read_file(csv, "d.csv", where)
        assert table.rows.tolist() == rows, where


def test_the_connection_is_locked_even_if_the_checker_let_something_through(csv, monkeypatch):
    """The second wall on its own: with the checker switched off, the escapes still fail."""
    monkeypatch.setattr(sandbox, "check_where", lambda text: text)
    for name in ("read_csv", "read_text", "glob", "https"):
        with pytest.raises(DataError, match="where"):
            read_file(csv, "d.csv", ESCAPES[name])
    con = duckdb.connect(config=sandbox.SANDBOX_CONFIG)
    sandbox.filter_rows(con, "SELECT 1 AS __gw_row", {}, "TRUE")
    for statement in (
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "ATTACH '/tmp/gw_attack.duckdb' AS x",
        "INSTALL httpfs",
        "LOAD httpfs",
        "COPY (SELECT 1) TO '/tmp/gw_attack.csv'",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(statement)
    con.close()


def test_a_missing_column_is_a_data_error_naming_the_filter(csv, tmp_path):
    spec = DataSpec(source=str(csv), target="label", where="nosuch = 1")
    with pytest.raises(DataError, match="'where' filter 'nosuch = 1' failed"):
        load_problem(spec, tmp_path)


def test_an_overlong_filter_is_refused():
    with pytest.raises(sandbox.UnsafeFilter, match="characters"):
        sandbox.check_where("a = 1 OR " * 1000 + "a = 2")


@pytest.mark.parametrize(
    "condition",
    [
        "d > current_date - 30",
        "year(d) = 2020 AND strftime(d, '%Y') = '2020'",
        "regexp_matches(s, '^a') OR s ILIKE 'b%'",
        "list_contains([1, 2], a)",
        "CASE WHEN a > 1 THEN b ELSE 0 END = 1",
        "a::INTEGER BETWEEN 1 AND 3",
    ],
)
def test_ordinary_conditions_pass_the_checker(condition):
    assert sandbox.check_where(condition)


@pytest.mark.parametrize("where", ["CAST(s AS INTEGER) > 1", "regexp_matches(s, '(')", "strptime(s, '%Y') IS NULL"])
def test_a_filter_failing_on_the_rows_is_blamed_on_the_filter_not_the_file(where, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,s\n1,apple\n2,pear\n")
    with pytest.raises(DataError) as info:
        read_file(path, "t.csv", where)
    message = str(info.value)
    assert f"the 'where' filter {where!r} failed: " in message
    assert "cannot read the file" not in message and "well-formed" not in message
    assert read_file(path, "t.csv", "TRY_CAST(s AS INTEGER) IS NULL AND a > 1").rows.tolist() == [2]


@pytest.mark.parametrize(
    "where, rows",
    [
        ("a = ANY([1, 3])", [1, 3]),
        ("b <> ALL([1])", [1, 4]),
        ("a = ANY([0]) AND label = ANY([0, 5])", [2, 4]),
        ("label = ANY(list_value(b, 1))", [1, 3, 4]),
    ],
)
def test_any_and_all_over_a_list_are_plain_filters(csv, where, rows):
    """DuckDB parses ``x = ANY([...])`` as a subquery over ``unnest`` of the list; it reads only the row."""
    assert sandbox.check_where(where)
    assert read_file(csv, "d.csv", where).rows.tolist() == rows


@pytest.mark.parametrize(
    "where",
    [
        "a = ANY(SELECT 1)",
        "a = ANY(SELECT unnest([1]) FROM read_csv('/etc/passwd'))",
        "a > ANY(SELECT a FROM gw_rows)",
        "a = ALL(SELECT length(content) FROM read_text('/etc/passwd'))",
        "a = ANY(SELECT unnest([1]) WHERE getenv('HOME') IS NOT NULL)",
        "a = ANY([length(getenv('HOME'))])",
        "a = ANY(SELECT unnest(l) FROM gw_rows)",
    ],
)
def test_any_and_all_over_a_real_subquery_are_still_refused(where):
    with pytest.raises(sandbox.UnsafeFilter):
        sandbox.check_where(where)


def test_no_lambda_is_allowed_and_validate_says_why(tmp_path, csv, toy_env):
    """A lambda's body runs once per element and may name the whole row again: list_reduce with a
    doubling body reached 4.96 GB from 184 characters, and nested list_transform grows the same
    way. No function that takes a lambda is allowed, whichever arrow it is written with."""
    for where in (
        "len(list_filter([a, b], lambda x: x > 0)) = 2",
        "len(list_filter([a, b], x -> x > 0)) = 2",
        "list_reduce([a, b], lambda x, y: x + y) > 0",
        "len(list_transform([a], lambda x: [x, x])) = 2",
        "len(array_transform([a], lambda x: [x, x])) = 2",
    ):
        with pytest.raises(sandbox.UnsafeFilter, match="takes a lambda"):
            sandbox.check_where(where)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: x\nsolver: toy\ndata:\n  source: {csv.name}\n  target: label\n"
        f'  where: "list_transform([a], x -> x + 1)[1] = 2"\n'
    )
    result = CliRunner().invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 2, result.output
    assert "data.where" in result.stderr and ":6:" in result.stderr and str(spec.name) in result.stderr
    assert "takes a lambda" in result.stderr


@pytest.mark.parametrize(
    "where",
    [
        "list_aggregate([a, b], 'string_agg') = '1,2'",
        "list_aggr([a, b], 'histogram') IS NOT NULL",
        "array_aggregate([a], 'min') = 1",
        "length(replace(replace(s, 'a', 'aaaaaaaa'), 'a', 'aaaaaaaa')) > 0",
        "length(regexp_replace(s, '', 'xxxxxxxx', 'g')) > 0",
    ],
)
def test_functions_whose_output_outgrows_their_input_are_refused(where):
    """``list_aggregate(list, 'NAME')`` called any aggregate by name, past the allow list; a
    replacement longer than what it replaces multiplies a value's size with every nested call."""
    with pytest.raises(sandbox.UnsafeFilter, match="not allowed"):
        sandbox.check_where(where)


def test_json_arrow_is_not_mistaken_for_a_lambda():
    assert sandbox.check_where("(j -> '$.x')::INTEGER = 1")


def test_the_sandboxed_connection_has_a_memory_limit_and_threads(csv):
    con = duckdb.connect(config=sandbox.SANDBOX_CONFIG)
    try:
        limit, threads = con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
    finally:
        con.close()
    assert threads == sandbox.SANDBOX_THREADS
    assert limit.replace(" ", "") in ("3.7GiB", "4.0GB", "4GB")  # DuckDB prints 4 GB as 3.7 GiB


def test_the_filter_cannot_raise_the_memory_limit():
    con = duckdb.connect(config=sandbox.SANDBOX_CONFIG)
    try:
        sandbox.filter_rows(con, "SELECT * FROM range(2) AS t(a)", {}, "a = 1")
        assert con.execute("SELECT current_setting('threads')").fetchone()[0] == sandbox.SANDBOX_THREADS
        for statement in ("SET memory_limit = '100GB'", "SET threads = 64"):
            with pytest.raises(duckdb.Error):
                con.execute(statement)
    finally:
        con.close()


def test_a_file_past_the_memory_limit_is_a_clear_error_not_a_crash(tmp_path, monkeypatch):
    """The limit is enforced (lowered to 1 MB here, so the test needs a small file, not 4 GB)."""
    monkeypatch.setitem(sandbox.SANDBOX_CONFIG, "memory_limit", "1MB")
    path = tmp_path / "big.csv"
    path.write_text("a,b,label\n" + "".join(f"{i},{i % 13},{i % 2}\n" for i in range(300_000)))
    with pytest.raises(DataError) as info:
        read_file(path, "big.csv")
    message = str(info.value)
    assert "Out of Memory" in message and "1MB glasswork gives DuckDB" in message and "data.where" in message


RUNAWAY = {
    "sleep": "sleep_ms(100000) IS NULL",
    "pg_sleep macro": "pg_sleep(100) IS NULL",
    "range": "len(range(10000000000)) > 0",
    "generate_series": "len(generate_series(1, 10000000000)) > 0",
    "repeat": "length(repeat('x', 10000000000)) > 0",
    "repeat a list": "len(repeat([1], 1000000000)) > 0",
    "nested list_transform": "len(list_transform(range(100000), lambda x: range(100000))) > 0",
    "doubling list_reduce": "length(list_reduce([s, s], lambda a, b: a || a || b)) > 0",
    "list_resize": "len(list_resize([1], 10000000000)) > 0",
    "array_resize": "len(array_resize([1], 10000000000)) > 0",
    "lpad": "length(lpad('x', 2000000000, 'y')) > 0",
    "rpad": "length(rpad('x', 2000000000, 'y')) > 0",
    "printf width": "length(printf('%2000000000d', 1)) > 0",
    "format width": "length(format('{:>2000000000}', 1)) > 0",
    "bar": "length(bar(1, 0, 2, 1000000000)) > 0",
    "to_base": "length(to_base(1, 2, 2000000000)) > 0",
    "get_block_size macro": "get_block_size('memory') > 0",
    "format_type macro": "format_type(1, 1) IS NULL",
    "random": "random() < 0.5",
    "error": "error('boom') IS NULL",
}


@pytest.mark.parametrize("name", sorted(RUNAWAY))
def test_functions_that_sleep_allocate_without_bound_or_run_sql_are_refused(name):
    with pytest.raises(sandbox.UnsafeFilter, match=r"function \w+\(\) is not allowed") as err:
        sandbox.check_where(RUNAWAY[name])
    assert "docs/security.md" in str(err.value)


def test_sleep_is_refused_by_validate_with_exit_2_naming_the_function_and_line(tmp_path, csv, toy_env):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: x\nsolver: toy\ndata:\n  source: {csv.name}\n  target: label\n  where: {json.dumps(RUNAWAY['sleep'])}\n"
    )
    result = CliRunner().invoke(cli, ["validate", str(spec)])
    assert result.exit_code == 2 and ":6:" in result.stderr and "sleep_ms()" in result.stderr


@pytest.mark.parametrize(
    "where",
    [
        "abs(" * 340 + "a" + ")" * 340,
        "[" * 200 + "1" + "]" * 200,
        "(" * 100 + "a = 1" + ")" * 100,
        "- " * 1500 + "a = 1",
        "NOT " * 900 + "a = 1",
        "a" + " + a" * 1000 + " > 0",
    ],
)
def test_deep_nesting_is_a_clean_refusal(where):
    with pytest.raises(sandbox.UnsafeFilter, match="nest"):
        sandbox.check_where(where)


def test_moderate_nesting_still_passes():
    assert sandbox.check_where("abs(" * 20 + "a" + ")" * 20 + " > 0")
    assert sandbox.check_where(" OR ".join(f"a = {i}" for i in range(100)))


def test_a_filter_is_stopped_at_the_time_limit(tmp_path):
    """An allowed but slow filter (quadratic in a long text) stops at limits.time: a stopped run, not bad data."""
    import time

    from glasswork.data.sources import Bounds

    path = tmp_path / "long.csv"
    path.write_text("s,y\n" + "ab" * 200_000 + ",1\n" + "ba" * 200_000 + ",0\n")
    start = time.monotonic()
    with pytest.raises(LimitReached, match=r"took longer than limits.time \(0.5 s\)"):
        read_file(path, "long.csv", "levenshtein(s, reverse(s)) > 0", bounds=Bounds(time=0.5))
    assert time.monotonic() - start < 10


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="watches /proc for the loading thread")
def test_ctrl_c_stops_a_running_filter_with_exit_130(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "long.csv").write_text("s,y\n" + ("ab" * 200_000 + ",1\n" + "ba" * 200_000 + ",0\n") * 5)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: x\nsolver: corels\ndata:\n  source: long.csv\n  target: y\n  binarize: {}\n"
        '  where: "levenshtein(s, reverse(s)) > 0"\n'
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "glasswork", "run", "--no-store", str(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline, reading = time.monotonic() + 120, False  # wait until DuckDB opens the file (Linux)
    while not reading and time.monotonic() < deadline and proc.poll() is None:
        fds = f"/proc/{proc.pid}/fd"
        try:
            reading = any(os.readlink(f"{fds}/{fd}").endswith("long.csv") for fd in os.listdir(fds))
        except OSError:
            pass
        time.sleep(0.002)
    time.sleep(0.5)
    assert reading and proc.poll() is None, proc.communicate()
    os.kill(proc.pid, signal.SIGINT)
    start = time.monotonic()
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted while loading the data" in err, err
    assert time.monotonic() - start < 10


def test_the_run_limits_bound_the_filter(tmp_path):
    import subprocess
    import sys

    (tmp_path / "long.csv").write_text("s,y\n" + "ab" * 200_000 + ",1\n" + "ba" * 200_000 + ",0\n")
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: x\nsolver: corels\ndata:\n  source: long.csv\n  target: y\n  binarize: {}\n"
        '  where: "levenshtein(s, reverse(s)) > 0"\nlimits: {time: 1}\n'
    )
    proc = subprocess.run(
        [sys.executable, "-m", "glasswork", "run", "--no-store", str(spec)], capture_output=True, text=True, timeout=60
    )
    # a valid spec whose limit ends the run in its filter: a stopped run (exit 0), not bad data (2)
    assert proc.returncode == 0, proc.stderr
    assert "status stopped_time" in proc.stdout and "limits.time" in proc.stdout, proc.stdout


def test_the_memory_limit_follows_limits_memory():
    assert sandbox.sandbox_config(2**30)["memory_limit"] == "1024MiB"
    assert sandbox.sandbox_config(None)["memory_limit"] == sandbox.SANDBOX_MEMORY_LIMIT
    assert sandbox.sandbox_config(64 * 2**30)["memory_limit"] == sandbox.SANDBOX_MEMORY_LIMIT


def test_every_allowed_function_exists_in_this_duckdb():
    """The allow list names real DuckDB functions (a typo would silently refuse a good filter)."""
    known = sandbox._scalar_functions() | sandbox._macros()
    assert sorted((sandbox._ALLOWED_FUNCTIONS | sandbox._ALLOWED_MACROS) - known) == []
    assert sandbox._ALLOWED_MACROS <= sandbox._macros()


def test_a_filter_is_stopped_past_the_memory_limit(tmp_path):
    """An allowed filter that splits a long text into one value per character (16 bytes each)
    is stopped by the resident-memory watch, which DuckDB's own memory_limit does not cover."""
    from glasswork.data.sources import Bounds
    from glasswork.memory import resident_memory

    path = tmp_path / "listy.csv"
    path.write_text("s,y\n" + "x" * 500_000 + ",1\nab,0\n")
    where = f"len(string_split({' || '.join(['s'] * 16)}, '')) > 0"  # 8 M values of 16 bytes
    with pytest.raises(LimitReached, match="went past limits.memory"):
        read_file(path, "listy.csv", where, bounds=Bounds(memory=resident_memory() + 40 * 2**20))


def test_without_limits_memory_reading_is_still_watched(tmp_path, monkeypatch):
    """With only limits.time set, a filter took 4.96 GB: the watch now stops reading at
    SANDBOX_RESIDENT_BYTES above where it began, whatever the limits."""
    from glasswork.data.sources import Bounds

    monkeypatch.setattr(sandbox, "SANDBOX_RESIDENT_BYTES", 40 * 2**20)
    path = tmp_path / "listy.csv"
    path.write_text("s,y\n" + "x" * 500_000 + ",1\nab,0\n")
    where = f"len(string_split({' || '.join(['s'] * 16)}, '')) > 0"  # 8 M values of 16 bytes
    with pytest.raises(LimitReached, match="more memory than glasswork lets reading data take"):
        read_file(path, "listy.csv", where, bounds=Bounds(time=600))


def test_a_call_that_ignores_its_interrupt_is_left_behind_at_the_limit(monkeypatch):
    """Past a limit, reading ends within the grace even when DuckDB's call never looks at its
    interrupt (a validate of a filter ran on past 100 s); the call is left to finish alone."""
    import threading
    import time

    from glasswork.data.sources import Bounds

    monkeypatch.setattr(sandbox, "_INTERRUPT_GRACE", 0.3)
    release = threading.Event()

    class Deaf:
        def interrupt(self) -> None:  # a call that never checks its interrupt
            pass

    started = time.monotonic()
    with pytest.raises(LimitReached, match="limits.time"):
        sandbox.run_bounded(Deaf(), lambda: release.wait(60), Bounds(time=0.2), "the 'where' filter")
    release.set()
    assert time.monotonic() - started < 5
