"""The command line every sweep script shares: preset, data, tracking, cluster, overrides.

A sweep script ends with `sys.exit(main(sys.modules[__name__]))`: `main` takes the script's
module, builds its `SweepSpec` with `sweeps.spec.experiment.experiment_spec` and does the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import shlex
import sys
import traceback
import types
from pathlib import Path

from sweeps.planning.method_override import replace_method
from sweeps.planning.sweep_file import load_sweep, read_sweep_file, sweep_text
from sweeps.planning.sweep_settings_help import sweep_settings_epilog
from sweeps.planning.sweep_values import (
    POSITIVE,
    SCRIPT_SETTINGS,
    SETTABLE,
    count_rule,
    value_from_text,
)
from sweeps.safety.dead_baseline import NoReport
from sweeps.safety.interruption import StopSignals, SweepInterrupted, signal_behind
from sweeps.safety.storage_checks import StorageFull
from sweeps.spec import spaces
from sweeps.spec.experiment import PRESET_NAMES, SWEEP_SETTINGS, SweepSpec, experiment_spec
from sweeps.spec.strategy import DEFAULT_STRATEGY, strategy_named, strategy_names
from xlt_core.config import (
    HYPERPARAMETER_NAMES,
    coerce_setting,
    parse_assignments,
)
from xlt_core.data.parallel import is_local_parallel
from xlt_core.errors import ConfigError, DataError
from xlt_schema.log import add_verbosity_flags, configure
from xlt_schema.tracking_store import redact

# Exit statuses. An interrupted sweep exits 128 + the signal: 130 SIGINT, 143 SIGTERM.
EXIT_DONE = 0  # every trial finished and the report is written
EXIT_TRIALS_FAILED = 1  # the sweep ran to its end, but some trials failed
EXIT_BAD_INPUT = 2  # refused before any work: settings, flags, files, tracking store
# The driver itself failed (traceback printed), or the disk filled up (one line); --resume
# continues.
EXIT_CRASHED = 3

# Trial settings that hold paths: made absolute, since Ray runs trials in their own directories.
PATH_SETTINGS = (
    "data_dir",
    "cache_dir",
    "synonyms",
    "save_model_dir",
    "probing_dir",
    "parallel_data",
)


def build_parser(
    script: str, description: str | None = None, presets: tuple[str, ...] = PRESET_NAMES
) -> argparse.ArgumentParser:
    """The command line of sweep script `script` (its file's stem), with its `presets`."""
    parser = argparse.ArgumentParser(
        prog=f"python sweeps/{script}.py",
        description=description or f"Run the {script} sweep on Ray Tune, tracked in MLflow.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=sweep_settings_epilog(SETTABLE),
    )
    _add_sweep_arguments(parser, presets)
    _add_run_arguments(parser)
    _add_plan_arguments(parser)
    _add_config_arguments(parser)
    _add_override_argument(parser)
    add_verbosity_flags(parser)
    return parser


def _add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """The sweep as a file (sweeps/planning/sweep_file.py): written, read, or read from a
    parent run."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--config",
        metavar="FILE",
        help="run the sweep a file describes (written by --save-config; instead of --preset "
        "and --data-dir; --set and --strategy still apply)",
    )
    source.add_argument(
        "--from-run",
        metavar="PARENT_RUN_ID",
        help="run again the sweep a parent run recorded (its sweep_config.yaml artifact, on "
        "the tracking URI)",
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the sweep as a file (after --set) and exit",
    )
    parser.add_argument(
        "--save-config",
        metavar="FILE",
        help="write the sweep as a file (after --set) to FILE and exit; --config FILE runs it",
    )


def _add_sweep_arguments(parser: argparse.ArgumentParser, presets: tuple[str, ...]) -> None:
    """What to run, on which data, tracked where, on which cluster."""
    parser.add_argument(
        "--preset",
        choices=presets,
        help="(default smoke) smoke: tiny model, offline, minutes on a laptop; paper: the "
        "paper's experiment as its card (sweeps/papers/) sets it, hub data, departures "
        "declared (--dry-run lists them); paper-xlmr (ding2022's scripts that have it): the "
        "same with XLM-R base; released (the scripts whose paper released code): the authors' "
        "released code setting for setting, --dry-run printing each setting that differs "
        "from paper with both sources",
    )
    parser.add_argument(
        "--data-dir",
        help="a local XTREME-layout data directory (e.g. ../shared/data) "
        "instead of the preset's data",
    )
    parser.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)",
    )
    parser.add_argument(
        "--address", help="Ray cluster address (default: $RAY_ADDRESS, else a local Ray)"
    )
    parser.add_argument(
        "--strategy",
        choices=strategy_names(),
        help=f"(default {DEFAULT_STRATEGY}, or the sweep file's) "
        + "; ".join(strategy_named(name).help for name in strategy_names()),
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How the trials run: their share of a GPU, restarts, where Tune keeps its state."""
    parser.add_argument(
        "--trials-per-gpu",
        type=_int_flag("--trials-per-gpu", 1),
        metavar="K",
        help="give each trial 1/K of a GPU (and a K-th of the CPUs per GPU unless "
        "cpus_per_trial is set)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted sweep with these settings (same working directory and "
        "tracking URI) without re-running finished trials",
    )
    parser.add_argument(
        "--max-failures",
        type=_int_flag("--max-failures", 0),
        default=2,
        metavar="N",
        help="restart a failed trial from its last checkpoint up to N times (default 2)",
    )
    parser.add_argument(
        "--storage-path",
        default="ray_results",
        metavar="PATH",
        help="where Ray Tune keeps experiment state and checkpoints (default ./ray_results; on "
        "a multi-node cluster a shared path such as s3://bucket/ray_results)",
    )


def _add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """`--dry-run` and what it may add: the power the seeds give from a pilot sweep."""
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (configurations x seeds, trials, resources per trial, the search "
        "phases, an estimate of GPU-hours and peak memory) without starting Ray, without "
        "network and without tracking anything",
    )
    parser.add_argument(
        "--pilot",
        metavar="EXPERIMENT",
        help="with --dry-run: state the minimum detectable difference of this sweep's seeds "
        "from the runs of that finished sweep (its newest, on the tracking URI; read only)",
    )
    parser.add_argument(
        "--target-difference",
        type=_positive_flag("--target-difference"),
        metavar="POINTS",
        help="with --dry-run --pilot: also the seeds this difference (points, e.g. 0.5) needs "
        "for 80%% power",
    )


def _add_override_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting (repeatable). A hyperparameter "
        f"({', '.join(HYPERPARAMETER_NAMES)}) replaces that axis of the grid in the points "
        "whose method or adaptation has it; seeds=0,1,2 sets the seeds (seeds=auto: in rounds, "
        "stopping decided or futile configurations early); method=NAME (smoke preset) puts "
        "objective NAME in place of the compared ones, the baseline kept, its grid from its "
        "declaration's search ranges and its --set hyperparameters; adaptation is fixed by the "
        "sweep script; anything else changes every trial",
    )


def apply_overrides(spec: SweepSpec, assignments: dict[str, str]) -> SweepSpec:
    """Apply `--set` values: hyperparameters fix their grid axis, sweep settings change the
    sweep, anything else changes every trial; `method` replaces the compared objective, last,
    so that its grid is checked against every other setting and its own hyperparameters fix
    its axes. Values are validated with the trials. Returns a new spec; `spec` is left as
    it was."""
    assignments = dict(assignments)
    method = assignments.pop("method", None)
    method_axes = {}
    if method is not None:  # its hyperparameters fix its grid's axes, not the old points'
        method_axes = {
            key: assignments.pop(key) for key in list(assignments) if key in HYPERPARAMETER_NAMES
        }
    for key, value in assignments.items():
        if key in SCRIPT_SETTINGS:
            raise ConfigError(
                key,
                value,
                f"fixed by the sweep script ({_what_runs(spec)}): each point names its "
                "adaptation, which the adjust_* sweeps compare; --set method=NAME replaces the "
                "compared objective",
            )
        if key == "seed":
            raise ConfigError("seed", value, "set the sweep's seeds with seeds=0,1,2")
        if key == "seeds" and value.strip() == "auto":
            from sweeps.running.sequential_seeds import use_auto_seeds

            spec = use_auto_seeds(spec)
        elif key in SWEEP_SETTINGS:
            spec = dataclasses.replace(spec, **{key: value_from_text(key, value)})
        elif key in HYPERPARAMETER_NAMES:
            fixed = {**spec.fixed_axes, key: coerce_setting(key, value)}
            points = spaces.override_axis(spec.points, key, fixed[key])
            spec = dataclasses.replace(spec, fixed_axes=fixed, points=points)
        elif key in SETTABLE:
            spec = dataclasses.replace(spec, base={**spec.base, key: coerce_setting(key, value)})
        else:
            raise ConfigError(key, value, f"unknown setting; --set accepts {', '.join(SETTABLE)}")
    return spec if method is None else replace_method(spec, method, method_axes)


def _what_runs(spec: SweepSpec) -> str:
    """`this sweep runs method finetune, ear with adaptation none`."""
    methods = sorted({point["method"] for point in spec.points})
    adaptations = sorted({point.get("adaptation", "none") for point in spec.points})
    return f"this sweep runs method {', '.join(methods)} with adaptation {', '.join(adaptations)}"


def resolve_paths(spec: SweepSpec) -> SweepSpec:
    """A new spec whose path settings are absolute, the cache directory's included."""
    base = dict(spec.base)
    for key in PATH_SETTINGS:
        if key == "parallel_data" and not is_local_parallel(base.get(key)):
            continue
        if base.get(key) not in (None, "", "none"):
            base[key] = str(Path(base[key]).expanduser().resolve())
    base.setdefault("cache_dir", str(Path(".cache/xlt").resolve()))
    return dataclasses.replace(spec, base=base)


def main(script: types.ModuleType, argv: list[str] | None = None) -> int:
    """Run the sweep a script's module describes (`experiment_spec`); the parser takes its
    name from the script's file and its description from the script's docstring. Exit codes:
    the EXIT_* constants (130/143: SIGINT/SIGTERM, continue with --resume)."""
    if not isinstance(script, types.ModuleType):
        raise TypeError(
            "main takes a sweep script's module, e.g. main(sys.modules[__name__]) in the "
            f"script or main(sweeps.ear_xnli); got {script!r}"
        )
    presets = tuple(getattr(script, "POINTS", PRESET_NAMES))
    args = build_parser(Path(script.__file__).stem, script.__doc__, presets).parse_args(argv)
    configure(args.verbosity)
    try:
        spec = apply_overrides(_sweep(script, args), parse_assignments(args.set))
        if args.print_config or args.save_config:  # paths as given: the file may move
            return _write_sweep_file(spec, args.save_config)
        spec = resolve_paths(spec)
        if (args.pilot or args.target_difference) and not args.dry_run:
            raise ConfigError(
                "--pilot" if args.pilot else "--target-difference",
                args.pilot or args.target_difference,
                "only with --dry-run (a report takes --target-difference: python -m analysis "
                "report)",
            )
        if args.dry_run:
            from sweeps.planning.plan import print_plan
            from sweeps.records.pilot_power import power_lines

            power = power_lines(spec, args.tracking_uri, args.pilot, args.target_difference)
            code = print_plan(spec, args.trials_per_gpu)
            print("\n".join(["", *power]), flush=True)
            return code
    except (ConfigError, DataError) as error:
        return _bad_input(error)
    argv = sys.argv[1:] if argv is None else argv
    code = _run(spec, args, _resume_command(script, argv))
    if script.__name__ == "__main__":
        # The process ends with this return. Its last garbage collection would walk every
        # object MLflow, Ray and matplotlib made (1-2 s) for nothing: runs are closed, Ray is
        # down, files are written (temporary folders are removed by their atexit finalizers).
        gc.freeze()
    return code


def _sweep(script: types.ModuleType, args: argparse.Namespace) -> SweepSpec:
    """The sweep before `--set`: from a file (`--config`, `--from-run`), else the preset's."""
    if args.config or args.from_run:
        flag = "--config" if args.config else "--from-run"
        for given, name in ((args.preset, "--preset"), (args.data_dir, "--data-dir")):
            if given:
                raise ConfigError(name, given, f"not with {flag}: the sweep file sets it")
        if args.config:
            spec = read_sweep_file(args.config, script)
        else:
            from sweeps.records.logged_sweep import logged_sweep_text
            from sweeps.records.tracking import resolve_tracking_uri

            uri = resolve_tracking_uri(args.tracking_uri)
            text = logged_sweep_text(uri, args.from_run)
            spec = load_sweep(text, f"--from-run {args.from_run}", script)
        return dataclasses.replace(spec, strategy=args.strategy or spec.strategy)
    if args.data_dir and not Path(args.data_dir).is_dir():
        raise ConfigError(
            "--data-dir",
            args.data_dir,
            "an existing directory in the XTREME layout (e.g. xnli/train-en.tsv)",
        )
    spec = experiment_spec(script, args.preset or "smoke", args.data_dir)
    return dataclasses.replace(spec, strategy=args.strategy or DEFAULT_STRATEGY)


def _write_sweep_file(spec: SweepSpec, path: str | None) -> int:
    text = sweep_text(spec)
    if path is None:
        print(text, end="", flush=True)
        return EXIT_DONE
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise ConfigError("--save-config", path, f"a writable file ({error.strerror})") from None
    command = f"python sweeps/{spec.experiment}.py --config {shlex.quote(path)}"
    print(f"Saved the sweep to {path}; run it with: {command}", flush=True)
    return EXIT_DONE


def _run(spec: SweepSpec, args: argparse.Namespace, resume_command: str) -> int:
    # Ray, torch and MLflow load here, after the command line and the settings are read.
    with StopSignals() as signals:
        try:
            from sweeps.running.ray_address import check_ray_address

            check_ray_address(args.address)  # before anything slow, and before ray.init
            from sweeps.records.tracking import check_tracking_uri, resolve_tracking_uri
            from sweeps.running.runner import SweepOptions, check_sweep, run_sweep

            check_sweep(spec)
            options = SweepOptions(
                tracking_uri=resolve_tracking_uri(args.tracking_uri),
                address=args.address,
                resume=args.resume,
                trials_per_gpu=args.trials_per_gpu,
                max_failures=args.max_failures,
                storage_path=args.storage_path,
            )
            check_tracking_uri(options.tracking_uri, must_exist=options.resume)
            failed = run_sweep(spec, options, signals)
        except (ConfigError, DataError) as error:
            return _bad_input(error)
        except SweepInterrupted as interruption:
            return _interrupted_exit(interruption, args.resume, resume_command)
        except StorageFull as full:  # one line, no traceback: the state is resumable
            print(f"error: {full}:\n  {resume_command}", file=sys.stderr, flush=True)
            return EXIT_CRASHED
        except NoReport as dead:  # the trials ended, the baseline's failed: one line
            then = f": {resume_command}" if dead.rerun else ""
            print(f"error: {dead}{then}", file=sys.stderr, flush=True)
            return EXIT_TRIALS_FAILED
        except Exception as error:
            interruption = signal_behind(error)  # a signal that Ray's compiled code re-raised
            if interruption is not None:
                return _interrupted_exit(interruption, args.resume, resume_command)
            traceback.print_exc()
            print(
                "error: the sweep stopped on an unexpected error (above); what finished is "
                f"kept: once it is fixed, continue with:\n  {resume_command}",
                file=sys.stderr,
            )
            return EXIT_CRASHED
    return EXIT_TRIALS_FAILED if failed else EXIT_DONE


def _bad_input(error: Exception) -> int:
    """Refuse in one line; a URI's credentials are not printed (`--tracking-uri`'s
    `?password=`, a database's `user:password@`)."""
    print(f"error: {redact(str(error))}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _interrupted_exit(interruption: SweepInterrupted, resumed: bool, resume_command: str) -> int:
    """Say what a stop signal left and how to continue; the exit status: 128 + the signal."""
    if resumed or interruption.parent_run_id:
        what = f"the state is saved; continue with:\n  {resume_command}"
    else:
        what = "nothing was tracked yet; run the same command again"
    print(f"interrupted ({interruption}): {what}", file=sys.stderr, flush=True)
    return interruption.exit_code


def _resume_command(script: types.ModuleType, argv: list[str]) -> str:
    """The command line that continues this sweep: the same interpreter, script and
    arguments, with `--resume`."""
    path = Path(script.__file__).resolve()
    with contextlib.suppress(ValueError):
        path = path.relative_to(Path.cwd())
    # A --tracking-uri's password is not printed (MLFLOW_TRACKING_PASSWORD supplies it).
    words = [redact(word) for word in argv if word != "--resume"]
    return shlex.join([sys.executable, str(path), *words, "--resume"])


def _positive_flag(name: str):
    """An argparse type for a number > 0 whose error names the flag."""

    def parse(value: str) -> float:
        try:
            return value_from_text(name, value, POSITIVE)
        except ConfigError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _int_flag(name: str, low: int):
    """An argparse type whose error names the flag, its value and what is allowed."""

    def parse(value: str) -> int:
        try:
            return value_from_text(name, value, count_rule(low))
        except ConfigError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse
