# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

"""
The ``vepd`` command: one entry, one subcommand per module in ``vepd_ros.commands``.

Each module there defines ``register(subparsers)`` that adds its parser and sets ``func(args) ->
int``. Modules are discovered, so each area (sensors, judge, study, bag, ...) owns its own file.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import signal
import sys
import threading

from vepd_ros import __version__, commands, interrupts
from vepd_ros.params import ParameterError
from vepd_ros.yamlio import quote

EPILOG = """\
Example (the offline study at the paper's size, then its report; about 10 s):
  vepd study --runs 10 --duration 30 --reference rtk --seed 1 --out study1
  vepd report study1                         # study1/report/report.html
  vepd evaluate study1 --json | head         # the same result as JSON

`vepd COMMAND --help` shows each command's options and an example.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='vepd',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
        description='VEPD: quantify how realistic simulated GPS and IMU sensors are, by running '
        'real and\nsimulated data through the same state estimator (the judge) and '
        'comparing how its\nvelocity estimate errs (arXiv 2403.11000).',
    )
    parser.add_argument('--version', action='version', version=f'vepd_ros {__version__}')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith('_'):
            continue
        importlib.import_module(f'{commands.__name__}.{info.name}').register(sub)
    return parser


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM, raised where the command is so it unwinds (outputs left as they were)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_SIGNALLED: list = []
"""The signal this command received: whatever ends it from then on is that signal's end."""


def _stop(signum, frame):
    # a second signal while the first unwinds would cut the clean-up short: ignored from here
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_IGN)
    _SIGNALLED.append(Stopped(signum))
    if interrupts.holding():  # a library's bookkeeping: raised where it ends (interrupts doc)
        interrupts.pend(_SIGNALLED[-1])
        return
    raise _SIGNALLED[-1]


def main(argv=None) -> int:
    """
    Run ``vepd``; THE one place a command ends.

    SIGINT/SIGTERM end with one line saying what was kept (every output directory is written
    whole or not at all: ``runs.safety.output_dir``) and exit 130/143; an unexpected exception
    ends with one line naming it and the file holding its traceback (exit 1).
    """
    safety = sys.modules.get('vepd_ros.runs.safety')  # not imported for --help (no numpy)
    if safety is not None:
        safety.ENDED.clear()
    _SIGNALLED.clear()
    interrupts.reset()
    before = {}
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            before[s] = signal.signal(s, _stop)
    try:
        return _run(argv)
    finally:
        for s, h in before.items():
            signal.signal(s, h)


def _run(argv) -> int:
    name = 'vepd' + (f' {argv[0]}' if argv else f' {sys.argv[1]}' if len(sys.argv) > 1 else '')
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, not at interpreter exit
        return code
    except KeyboardInterrupt as exc:
        return _stopped(name, exc)
    except BrokenPipeError:
        # The reader went away (`vepd evaluate ROOT --json | head`): stop quietly, as a command
        # killed by SIGPIPE would. Python's recipe (docs of the signal module, "Note on SIGPIPE"):
        # point stdout at devnull so the flush at exit does not raise again, and exit 1.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as exc:  # a defect: one line, the traceback in a file
        cause = _interrupt_in(exc) or (_SIGNALLED[-1] if _SIGNALLED else None)
        if cause is not None:  # a library's clean-up failed while the signal unwound it
            return _stopped(name, cause)
        log = _save_traceback(name)
        print(f'{name}: unexpected error {type(exc).__name__}: {quote(str(exc), 200)} '
              f'(a defect of vepd; traceback in {log})', file=sys.stderr)
        return 1


def _stopped(name: str, exc: KeyboardInterrupt) -> int:
    signum = getattr(exc, 'signum', signal.SIGINT)
    print(f'{name}: stopped by {signal.Signals(signum).name}; {_kept()}', file=sys.stderr)
    return 128 + int(signum)


def _interrupt_in(exc: BaseException):
    """
    Return the SIGINT/SIGTERM an exception was raised while handling, or None.

    Optuna's trial bookkeeping, for one, can fail with its own assertion when the interrupt lands
    in it: the signal is still what ended the command.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return exc
        exc = exc.__context__
    return None


def _kept() -> str:
    safety = sys.modules.get('vepd_ros.runs.safety')
    ended = safety.ENDED if safety is not None else []
    return ('; '.join(ended) if ended
            else 'nothing was written (an earlier output is as it was)')


def _save_traceback(name: str) -> str:
    """Write the traceback being handled to a file; return its path."""
    import tempfile
    import traceback

    text = f'{name} (argv {sys.argv!r})\n' + traceback.format_exc()
    try:
        fd, path = tempfile.mkstemp(prefix='vepd-traceback-', suffix='.txt')
        with os.fdopen(fd, 'w') as f:
            f.write(text)
        return path
    except OSError:
        sys.stderr.write(text)
        return 'stderr above'


def _main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, 'func', None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except ParameterError as exc:
        print(f'vepd {args.command}: {exc}', file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f'vepd {args.command}: error: {exc}', file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # the reader went away: main() stops quietly
    except OSError as exc:
        # a file the command reads or writes cannot be opened (an --out under a file, a full disk,
        # no permission): one line naming the file, not a traceback
        where = f'{exc.filename}: ' if exc.filename else ''
        print(f'vepd {args.command}: error: {where}{exc.strerror or exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
