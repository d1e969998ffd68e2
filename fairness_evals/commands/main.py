"""The ``fairness-evals`` command line.

Every error is one line on stderr that names what is wrong, with exit status 2. Sub-commands import
what they need when they run, so ``fairness-evals tasks-dir`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from fairness_evals import __version__, jsonio


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line instead of usage + message
        raise CLIError(f"{self.prog}: {message}")


def _cmd_tasks_dir(args: argparse.Namespace) -> int:
    from fairness_evals.paths import tasks_dir

    print(tasks_dir(args.harness))
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from fairness_evals.extras import MissingExtraError
    from fairness_evals.index import harness_index

    harnesses = [args.harness] if args.harness else ["lm-eval", "lmms-eval"]
    for harness in harnesses:
        try:
            index = harness_index(harness)
        except MissingExtraError as error:
            if args.harness:  # asked for this harness by name: an error
                raise
            print(f"fairness-evals list: {error}", file=sys.stderr)  # the installed harness's names are listed
            continue
        for kind, name in index:
            print(f"{harness}\t{kind}\t{name}")
    return 0


def _cmd_model(args: argparse.Namespace) -> int:
    from fairness_evals.model import ensure_default_model

    print(ensure_default_model())
    return 0


def _benchmarks() -> dict[str, str]:
    """The benchmarks with `export` / `score`: name -> module implementing add_export_arguments(parser),
    export(args) -> int, add_score_arguments(parser), score(args) -> int (each benchmark's ``commands``)."""
    from fairness_evals import benchmarks

    return {name: b.commands for name, b in benchmarks.registry().items() if b.commands}


def _benchmark_module(name: str):
    import importlib

    return importlib.import_module(_benchmarks()[name])


def _add_benchmark_commands(sub: argparse._SubParsersAction, verb: str, help_text: str, argv: Sequence[str]) -> None:
    command = sub.add_parser(verb, help=help_text, description=help_text)
    benchmarks = command.add_subparsers(dest="benchmark", required=True, parser_class=_Parser)
    for name in _benchmarks():
        parser = benchmarks.add_parser(name, help=f"{verb} {name}")
        # Import a benchmark (numpy, scipy, ...) only when this very command runs: keeps `tasks-dir` fast.
        if list(argv[:2]) != [verb, name]:
            continue
        module = _benchmark_module(name)  # an ImportError is worded by main()
        getattr(module, f"add_{verb}_arguments")(parser)
        parser.set_defaults(handler=getattr(module, verb))


Command = tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]

# Commands that live in other modules: name -> (help, module implementing add_arguments(parser) and
# run(args) -> int). Imported only when that command runs. A benchmark adds its own (its ``more_commands``).
MODULE_COMMANDS = {
    "report": (
        "HTML or Markdown report of harness output folders, the papers' views",
        "fairness_evals.commands.report",
    ),
    "check": (
        "exit 1 naming every missing task, NaN headline, low coverage or logged failure",
        "fairness_evals.commands.check",
    ),
    "compare": (
        "is run B fairer than run A? paired differences, p-values, verdicts",
        "fairness_evals.commands.compare",
    ),
    "metrics": (
        "what each metric is: definition, direction, paper section, interval, formula",
        "fairness_evals.commands.metrics",
    ),
}


def _add_module_commands(sub: argparse._SubParsersAction, argv: Sequence[str]) -> None:
    import importlib

    from fairness_evals import benchmarks

    more = {name: command for b in benchmarks.registry().values() for name, command in b.more_commands.items()}
    for name, (help_text, module_name) in {**MODULE_COMMANDS, **more}.items():
        parser = sub.add_parser(name, help=help_text, description=help_text)
        if argv[:1] != [name]:
            continue
        module = importlib.import_module(module_name)  # an ImportError is worded by main()
        module.add_arguments(parser)
        parser.set_defaults(handler=module.run)


def _harness_arg(required: bool) -> Callable[[argparse.ArgumentParser], None]:
    def add(parser: argparse.ArgumentParser) -> None:
        kwargs: dict = {"choices": ["lm-eval", "lmms-eval"]}
        if required:
            parser.add_argument("harness", **kwargs)
        else:
            parser.add_argument("--harness", **kwargs, help="only this harness (default: both)")

    return add


def _no_args(parser: argparse.ArgumentParser) -> None:
    del parser


#: `fairness-evals score PATH ...` (a path, not a benchmark name) runs this command: the detail of a harness run.
SCORE_RUN = "score-run"


def _add_score_run_arguments(parser: argparse.ArgumentParser) -> None:
    from fairness_evals import run_files

    run_files.add_runs_argument(parser)
    run_files.add_selection_arguments(parser)
    parser.add_argument("--out", help="write the JSON here instead of standard output")


def _cmd_score_run(args: argparse.Namespace) -> int:
    from fairness_evals import detail

    found = detail.write(args.paths, args.out, model=args.model, run=args.run)
    tasks = [t for t in found.results if not statistics_is_group(t)]
    print(f"fairness-evals score: every statistic of {len(tasks)} task(s) and {len(found.results) - len(tasks)} "
          "group(s)" + (f", in {args.out}" if args.out else ""), file=sys.stderr)  # fmt: skip
    return 0


def statistics_is_group(name: str) -> bool:
    from fairness_evals import statistics

    return statistics.task(name).group


COMMANDS: list[Command] = [
    ("tasks-dir", "print the folder to pass as --include_path", _harness_arg(True), _cmd_tasks_dir),
    ("list", "list every task, group and tag we define, from the harness index", _harness_arg(False), _cmd_list),
    ("model", "convert the embedded SmolLM2 model once and print its folder", _no_args, _cmd_model),
]


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = _Parser(prog="fairness-evals", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"fairness-evals {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_text, add_arguments, handler in COMMANDS:
        command = sub.add_parser(name, help=help_text, description=help_text)
        add_arguments(command)
        command.set_defaults(handler=handler)
    _add_benchmark_commands(sub, "export", "write every document of a benchmark as JSON lines", argv)
    _add_benchmark_commands(
        sub, "score",
        "every statistic of a run: `score OUTPUT_FOLDER` (its --log_samples files), or `score BENCHMARK --responses F` "
        "(replies produced outside the harness)",
        argv,
    )  # fmt: skip
    run = sub.add_parser(SCORE_RUN, help=argparse.SUPPRESS, prog="fairness-evals score")
    _add_score_run_arguments(run)
    run.set_defaults(handler=_cmd_score_run)
    _add_module_commands(sub, list(argv))
    return parser


#: Options whose value a command writes to or creates rather than reads, besides ``jsonio.OUTPUT_OPTIONS``.
_NOT_INPUTS = ("handler", "command", "benchmark", "t2i_layout")


def _outputs_and_inputs(args: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    """The output files of a parsed command (``--out``, ``--details``, ``--json``: :data:`jsonio.OUTPUT_OPTIONS`) and
    every other value it was given that may name a file or folder it reads (positional paths, ``--responses``,
    ``--corpus``, ``--cache``, ...; :func:`jsonio.refuse_overwriting` keeps those that exist)."""
    outputs: dict[str, str] = {}
    inputs: list[str] = []
    for name, value in vars(args).items():
        if name in jsonio.OUTPUT_OPTIONS:
            if isinstance(value, (str, os.PathLike)):
                outputs[name] = os.fspath(value)
            continue
        if name in _NOT_INPUTS:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, os.PathLike)):
                inputs.append(os.fspath(item))
    return outputs, inputs


#: The exit status after the reader of standard output went away (``| head``): 128 + SIGPIPE, as a shell reports a
#: program killed by SIGPIPE, without an error line.
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv)
        if not argv:  # no command: the help, not an error
            parser.print_help()
            sys.stdout.flush()
            return 0
        if argv[0] == "score" and len(argv) > 1 and argv[1] not in _benchmarks() and not argv[1].startswith("-"):
            argv = [SCORE_RUN, *argv[1:]]  # a run's folder, not a benchmark: every statistic of the run
        args = parser.parse_args(argv)
        jsonio.refuse_overwriting(*_outputs_and_inputs(args))  # before any work: no command destroys its input
        with jsonio.keeping_inputs():
            status = args.handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored ..."
        return status
    except BrokenPipeError as error:
        if not _stdout_closed():  # e.g. a judge endpoint that hung up: an error like any other
            message = f"fairness-evals: {error}"
        else:
            _silence_stdout()
            return EXIT_BROKEN_PIPE
    except CLIError as error:
        message = str(error)
    except (ValueError, RuntimeError, OSError, KeyError) as error:
        message = f"fairness-evals: {error}"
    except ImportError as error:
        message = _import_error(error, argv)
    except KeyboardInterrupt:
        message = "fairness-evals: interrupted"
    except Exception as error:  # still one line; FAIRNESS_EVALS_DEBUG=1 shows the traceback
        if os.environ.get("FAIRNESS_EVALS_DEBUG"):
            raise
        message = f"fairness-evals: unexpected {type(error).__name__}: {error} (FAIRNESS_EVALS_DEBUG=1 shows where)"
    print(f"error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _import_error(error: ImportError, argv: Sequence[str]) -> str:
    """The line for an import that failed: the extra to install when one is missing, else (e.g. a harness whose own
    dependencies are broken) the module that failed."""
    from fairness_evals import extras

    words = ["score" if argv[0] == SCORE_RUN else argv[0]] if argv else []
    if words in (["export"], ["score"]) and argv[1:2] and argv[1] in _benchmarks():
        words.append(argv[1])
    command = " ".join(["fairness-evals", *words])
    if isinstance(error, extras.MissingExtraError):
        return f"{command}: {error}"
    explained = extras.explain(error, command)
    if explained is not None:
        return explained
    return f"fairness-evals: cannot import {error.name or 'a module'}: {error} (reinstall the package's dependencies)"


def _stdout_closed() -> bool:
    """True when standard output is a pipe whose reader has gone (poll reports an error on its write end)."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor, or no poll on this platform
        return False


def _silence_stdout() -> None:
    """Point standard output at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (captured output)
        pass


if __name__ == "__main__":
    sys.exit(main())
