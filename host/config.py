"""The user's config file: defaults for the port, the plays database and the
player names, so that a table with one board and one database types neither.

Where: config.toml in the user's config directory (platformdirs:
~/.config/bloomkeeper/config.toml on Linux), or the file named by the
BLOOMKEEPER_CONFIG environment variable. No file: no defaults, nothing to
say. Every key is optional; a flag on the command line always wins:

    port = "/dev/ttyACM0"          # instead of --port auto (sync, follow, names, doctor, flash, serve)
    db = "~/games/plays.sqlite3"   # instead of the default database (sync, plays, export, serve)
    names = ["Ann", "Bo", "Cy"]    # `bloomkeeper names` with no names sends these

A malformed file (bad TOML, an unknown key, a value of the wrong kind,
nesting too deep, a NUL in a path; a FIFO or a device in its place) is one
line naming the file and what is wrong, exit 2, and the command does nothing.
"""

import os
import tomllib

ENV = "BLOOMKEEPER_CONFIG"
KEYS = ("port", "db", "names")
# Commands whose --db is the plays database (follow's --db means "record into it too", so it keeps no default).
DB_COMMANDS = ("sync", "plays", "export", "serve")


class ConfigError(Exception):
    """The config file cannot be used; the message is one line."""


def path():
    """The config file's path (it need not exist)."""
    given = os.environ.get(ENV)
    if given:
        return given
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("bloomkeeper", appauthor=False), "config.toml")


def load(where=None):
    """{key: value} from the config file ({} if there is none); ConfigError if malformed."""
    where = path() if where is None else where
    from host.errors import UserError
    from host.io_util import MAX_INPUT, open_regular

    try:
        with open_regular(where) as f:  # a FIFO or a device put there is refused at open, never waited on
            raw = f.read(MAX_INPUT + 1)
        if len(raw) > MAX_INPUT:
            raise ConfigError("config file %s is larger than %d KiB: not a config file" % (where, MAX_INPUT >> 10))
        data = tomllib.loads(raw.decode("utf-8"))
    except UserError as err:
        raise ConfigError("config file %s" % err)
    except RecursionError:
        raise ConfigError("config file %s: nested too deeply" % where)
    except FileNotFoundError:
        if os.environ.get(ENV) and where == os.environ[ENV]:
            raise ConfigError("config file %s (from %s) does not exist" % (where, ENV))
        return {}
    except IsADirectoryError:
        raise ConfigError("config file %s is a directory" % where)
    except OSError as err:
        raise ConfigError("config file %s: cannot read it (%s)" % (where, err.strerror or err))
    except UnicodeDecodeError:
        raise ConfigError("config file %s: not UTF-8 text" % where)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError("config file %s: not valid TOML: %s" % (where, " ".join(str(err).split())))
    return check(data, where)


def check(data, where):
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError("config file %s: unknown key %s (known: %s)" % (where, unknown[0], ", ".join(KEYS)))
    for key in ("port", "db"):
        if key in data and (not isinstance(data[key], str) or not data[key].strip()):
            raise ConfigError("config file %s: %s must be a non-empty string" % (where, key))
        if key in data and "\x00" in data[key]:  # no path holds one: os calls would raise on it
            raise ConfigError("config file %s: %s holds a NUL character" % (where, key))
    if "db" in data:
        data["db"] = os.path.expanduser(data["db"])
    if "names" in data:
        from engine_lite.record import check_name

        names = data["names"]
        if not isinstance(names, list) or not 1 <= len(names) <= 5 or len(set(map(str, names))) != len(names):
            raise ConfigError("config file %s: names must be a list of 1 to 5 different names" % where)
        bad = [n for n in names if not check_name(n)]
        if bad:
            raise ConfigError("config file %s: name %r must be 1-12 printable ASCII characters" % (where, bad[0]))
    return data


def apply(sub, config):
    """Make the config's values the defaults of the subcommands' options
    (so --help shows them, and a flag given on the command line wins)."""
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if action.dest == "port" and "port" in config and action.default == "auto":
                action.default = config["port"]
            elif action.dest == "db" and "db" in config and name in DB_COMMANDS:
                action.default = config["db"]
            elif action.dest == "names" and name == "names" and "names" in config:
                action.default = list(config["names"])
