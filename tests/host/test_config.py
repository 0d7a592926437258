"""The config file (host/config.py): defaults for --port, --db and the
player names; a flag wins; a malformed file is one line, exit 2, and the
command does nothing."""

import os
import subprocess
import sys

import pytest

from host import cli, config
from tests.kit.mpy_harness import REPO


@pytest.fixture
def conf(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv(config.ENV, str(path))

    def write(text):
        path.write_text(text)
        return path

    return write


def test_no_file_no_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv(config.ENV, raising=False)
    monkeypatch.setattr(config, "path", lambda: str(tmp_path / "none.toml"))
    args = cli.build_parser().parse_args(["sync"])
    assert args.port == "auto" and args.db is None


def test_the_config_gives_the_defaults_and_a_flag_wins(conf, tmp_path):
    conf('port = "/dev/ttyACM3"\ndb = "~/bk/plays.sqlite3"\nnames = ["Ann", "Bo", "Cy"]\n')
    p = cli.build_parser()
    args = p.parse_args(["sync"])
    assert args.port == "/dev/ttyACM3" and args.db == os.path.expanduser("~/bk/plays.sqlite3")
    assert p.parse_args(["sync", "--port", "/dev/ttyACM0", "--db", "x.db"]).port == "/dev/ttyACM0"
    assert p.parse_args(["doctor"]).port == "/dev/ttyACM3" and p.parse_args(["flash"]).port == "/dev/ttyACM3"
    assert p.parse_args(["names"]).names == ["Ann", "Bo", "Cy"]
    assert p.parse_args(["names", "Di"]).names == ["Di"]
    assert p.parse_args(["export"]).db == os.path.expanduser("~/bk/plays.sqlite3")
    assert p.parse_args(["follow"]).db is None  # follow --db means "also record": never on by default


def test_names_without_names_or_config_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(config.ENV, str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("")
    with pytest.raises(SystemExit) as e:
        cli.main(["names", "--port", str(tmp_path / "no-port")])
    assert e.value.code == 2 and "give the names" in capsys.readouterr().err


@pytest.mark.parametrize("text, words", [
    ('port = "/dev/ttyACM0\n', "not valid TOML"),
    ('colour = "red"\n', "unknown key colour"),
    ("port = 5\n", "port must be a non-empty string"),
    ('db = ""\n', "db must be a non-empty string"),
    ('names = "Ann"\n', "names must be a list of 1 to 5 different names"),
    ('names = ["Ann", "Ann"]\n', "names must be a list of 1 to 5 different names"),
    ('names = ["Ann", "a name far too long"]\n', "1-12 printable ASCII characters"),
])
def test_a_malformed_file_is_one_line_exit_2_and_nothing_done(conf, tmp_path, capsys, text, words):
    path = conf(text)
    db = tmp_path / "plays.sqlite3"
    with pytest.raises(SystemExit) as e:
        cli.main(["export", "--db", str(db)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and str(path) in err, err
    assert not db.exists()


@pytest.mark.slow
def test_a_broken_config_still_lets_help_and_version_through(conf):
    conf("port = [\n")
    env = dict(os.environ)
    for args in (["--version"], ["sync", "--help"]):
        r = subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stderr == "", r.stderr
    r = subprocess.run([sys.executable, "-m", "host.cli", "plays"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and "not valid TOML" in r.stderr


def test_a_named_config_file_that_is_missing_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv(config.ENV, str(tmp_path / "absent.toml"))
    with pytest.raises(config.ConfigError, match="does not exist"):
        config.load()


@pytest.mark.parametrize("text, words", [
    ("a = " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
    ('db = "plays\\u0000.sqlite3"\n', "db holds a NUL character"),
    ('port = "/dev/tty\\u0000"\n', "port holds a NUL character"),
])
def test_deep_nesting_and_a_nul_are_one_line(conf, tmp_path, capsys, text, words):
    """They traced back."""
    path = conf(text)
    with pytest.raises(SystemExit) as e:
        cli.main(["export", "--db", str(tmp_path / "p.sqlite3")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and words in err and str(path) in err, err


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_as_the_config_file_is_one_line_and_version_still_works(tmp_path, kind):
    """A FIFO there hung every command, --version included."""
    where = str(tmp_path / "config.toml")
    if kind == "fifo":
        os.mkfifo(where)
    else:
        where = "/dev/zero"
    env = dict(os.environ, **{config.ENV: where})
    r = subprocess.run([sys.executable, "-m", "host.cli", "--version"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "host.cli", "plays"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a regular file" in r.stderr and where in r.stderr, r.stderr
