"""Mutated game records and score tables thrown at `replay` and `score`.

The contract ("bad input gets a clear ONE-line error"): every
run ends with exit status 0 and JSON on stdout, or exit status 2 and exactly
one line on stderr with nothing on stdout; never a traceback, never another
status. Runs go through the CLI's own `main` in-process (fast enough for
hypothesis), and a few through the real `bloomkeeper` command in a
subprocess.
"""

import io
import json
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from host import cli
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # mutated records through bloomkeeper processes

RECORDS = sorted((REPO / "tests" / "records").glob("*.jsonl"))
RECORD_BYTES = [p.read_bytes() for p in RECORDS]
TABLES = [
    {"game": "stalk-exchange", "values": {"tulip": 7, "dahlia": 5}, "portfolios": {"Ann": {"tulip": 2, "dahlia": 10}, "Bo": {"dahlia": 1, "snowdrop": 11}}},
    {
        "game": "oh-my-orchids",
        "players": {
            "Ann": {"composted": 2, "flowers": [{"name": "Tiger Orchid", "kind": "orchid", "points": 8}, {"name": "Ixora", "kind": "flora", "points": 2}]},
            "Bo": {"flowers": [{"name": "Ixora", "kind": "flora", "points": 2}]},
        },
    },
]

NASTY_STRINGS = ["\ud800", "\udfff", "a\u2028b", "x\nsplit", "", " ", "Tiger Orchid ", "tiger  orchid", "Ann", "tulip", "ev", "\x00", "é" * 49]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 30),
    st.integers(),
    st.floats(),
    st.sampled_from(NASTY_STRINGS),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=6),
    st.sampled_from(["plant", "swap", "harvest", "take", "portfolio", "end_turn", "undo", "stuck", "orchid", "flora", "start"]),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NASTY_STRINGS + ["count", "seeds", "name", "kind", "points", "flower", "player", "counts"]), inner, max_size=3)), max_leaves=6)


@st.composite
def mutated_json(draw, value):
    """`value` with one or two fields changed, added or removed, as JSON text;
    sometimes a key repeated or the whole thing nested deep."""
    value = json.loads(json.dumps(value))
    for _ in range(draw(st.integers(1, 2))):
        path = []
        node = value
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            path.append((node, key))
            node = node[key]
        if not path:
            break
        parent, key = path[-1]
        action = draw(st.sampled_from(["set", "drop", "add"]))
        if action == "set":
            parent[key] = draw(json_values)
        elif action == "drop" and isinstance(parent, dict):
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(NASTY_STRINGS + ["x", "seeds"]))] = draw(json_values)
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    trick = draw(st.sampled_from(["none", "none", "dup", "deep", "surrogate"]))
    if trick == "dup" and text.startswith("{") and len(text) > 2:
        first = text[1 : text.index(",") if "," in text else -1]
        text = "{" + first + "," + text[1:]
    elif trick == "deep":
        k = draw(st.sampled_from([40, 5000, 100000]))
        text = "[" * k + text + "]" * k
    elif trick == "surrogate":
        text = text.replace('"', '"\\udc80', 1)
    return text


def _event(line):
    """The line as JSON if it still is valid JSON (an earlier mutation may have broken it,
    or nested it deeper than CPython's json can read: RecursionError)."""
    try:
        return json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


@st.composite
def mutated_record(draw):
    lines = draw(st.sampled_from(RECORD_BYTES)).split(b"\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["json", "json", "dup", "drop", "swap", "bytes", "junk"]))
        if op == "json" and _event(lines[i]) is not None:
            lines[i] = draw(mutated_json(_event(lines[i]))).encode("utf-8", "surrogatepass")
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "bytes" and lines[i]:
            k = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:k] + draw(st.binary(min_size=1, max_size=3)) + lines[i][k + 1 :]
        elif op == "junk":
            lines.insert(i, draw(st.sampled_from([b"[", b"{}", b"null", b'"\\ud800"', b"\xff\xfe", b"\r", b" \xe2\x80\xa8 "])))
    return b"\n".join(lines)


@st.composite
def mutated_table(draw):
    text = draw(mutated_json(draw(st.sampled_from(TABLES)))).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0 and text:
        k = draw(st.integers(0, len(text) - 1))
        text = text[:k] + draw(st.binary(min_size=1, max_size=2)) + text[k + 1 :]
    return text


class _Stdin:
    """What the CLI reads for '-': sys.stdin (text, UTF-8) or its buffer."""

    def __init__(self, data):
        self.buffer = io.BytesIO(data)

    def read(self):
        return self.buffer.read().decode("utf-8")


def run_in_process(cmd, data):
    """`bloomkeeper CMD -` through cli.main with `data` on stdin:
    (status, stdout, stderr). Any exception other than the CLI's own exit is
    a bug and propagates."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = _Stdin(data)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = cli.main([cmd, "-"])
            except SystemExit as stop:
                status = stop.code
    finally:
        sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def holds_the_contract(status, out, err):
    if status == 0:
        assert err == ""
        json.loads(out)
    else:
        assert status == 2, (status, err)
        assert out == "" and err.startswith("bloomkeeper: ") and err.endswith("\n") and err.count("\n") == 1, err
        assert "Traceback" not in err


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(mutated_record())
def test_replay_of_a_mutated_record_ends_in_json_or_one_line(data):
    holds_the_contract(*run_in_process("replay", data))


@FUZZ
@given(mutated_table())
def test_score_of_a_mutated_table_ends_in_json_or_one_line(data):
    holds_the_contract(*run_in_process("score", data))


def test_unmutated_inputs_are_accepted():
    for data in RECORD_BYTES:
        assert run_in_process("replay", data)[0] == 0
    for table in TABLES:
        assert run_in_process("score", json.dumps(table).encode())[0] == 0


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.one_of(mutated_record().map(lambda d: ("replay", d)), mutated_table().map(lambda d: ("score", d))))
def test_the_real_command_keeps_the_contract(case):
    cmd, data = case
    r = subprocess.run([sys.executable, "-m", "host.cli", cmd, "-"], input=data, capture_output=True, cwd=REPO)
    holds_the_contract(r.returncode, r.stdout.decode(), r.stderr.decode("utf-8", "backslashreplace"))
    assert (r.returncode, r.stdout.decode(), r.stderr.decode("utf-8", "backslashreplace")) == run_in_process(cmd, data)
