"""`bloomkeeper completion bash|zsh|tcsh`: the shell completion script.

shtab writes it from the very parser `bloomkeeper` runs (host/cli.py), so
every subcommand and option completes, and a new one needs no edit here.
Install it once, e.g. for bash:
`bloomkeeper completion bash > ~/.local/share/bash-completion/completions/bloomkeeper`.
"""

from host.errors import UserError

SHELLS = ("bash", "zsh", "tcsh")


def completion_cmd(args):
    try:
        import shtab
    except ImportError:
        raise UserError("shell completion needs shtab: pip install shtab") from None
    from host.cli import build_parser

    print(shtab.complete(build_parser(), shell=args.shell), end="")
    return 0


def register(sub):
    p = sub.add_parser("completion", help="print the shell completion script (bash, zsh or tcsh)")
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(func=completion_cmd)
