"""The runner: `python -m benchmarks [--quick] [--only CASE[,CASE]] [--markdown FILE]`.

Runs the cases in order and prints one line per figure as it is measured (an aligned
table: figure, unit, target, PASS / MISS, "-" for a figure without target, SKIP for a case
whose data is absent), then a summary. `--markdown FILE` appends the table, with the date,
the machine and the command, to FILE (docs/benchmarks.md in `make bench`). The exit status
is 1 when a case failed with an error, else 0: a MISS is a figure, not a failure.
`--quick` runs every case at tiny sizes in seconds to minutes: a check that the suite runs,
not a measurement.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.common import (
    DEFAULT_DATA_DIR,
    Result,
    Settings,
    cpu_count,
    cpu_model,
    format_figure,
    format_target,
    load_average,
    verdict,
)

# Case name -> (module, function, what it measures), in the order they run.
CASES = {
    "steps": ("training", "step_costs", "step cost per objective vs fine-tuning"),
    "throughput": ("training", "training_throughput", "training examples/s and padding"),
    "evaluation": ("evaluation", "evaluation_throughput", "evaluation examples/s"),
    "sweep": ("sweep", "sweep_overhead", "smoke-sweep overhead"),
    "sweep-minute": ("sweep", "minute_trials", "wall / ideal on minute-long trials"),
    "driver": ("driver_scale", "driver_scaling", "the sweep driver as the trials grow"),
    "driver-10k": ("driver_scale", "driver_10k", "the sweep driver at 10,000 trials (option)"),
    "statistics": ("significance", "statistics", "paired tests at paper size"),
    "race": ("race", "race", "seed racing vs a 5-seed grid on scripted landscapes"),
    "memory": ("memory", "peak_memory", "peak memory of a step per objective"),
    "mfu": ("mfu", "model_flops_utilisation", "each objective's step vs the matmul rate"),
    "gpu": ("gpu", "gpu_check", "MFU, evaluation and 1/2/4 trials per GPU (CUDA only)"),
    "contention": ("contention", "contention", "a trial beside CPU-bound processes"),
    "scale": ("scale", "scale", "report and compare as the tracking store grows"),
}
# Run only when named in --only: longer than `make bench`'s 30 minutes allow.
OPTIONAL_CASES = ("driver-10k",)
# The printed columns: width and alignment; the note follows, unpadded.
NAME_WIDTH = 62
COLUMNS = ((10, ">"), (5, "<"), (12, "<"), (7, "<"))  # figure, unit, target, verdict


def row(name: str, figure: str, unit: str, target: str, outcome: str, note: str) -> str:
    cells = [f"{name:<{NAME_WIDTH}}"]
    for (width, align), text in zip(COLUMNS, (figure, unit, target, outcome)):
        cells.append(f"{text:{align}{width}}")
    return "  ".join(cells + [note]).rstrip()


def result_row(result: Result) -> str:
    return row(
        result.name,
        format_figure(result.figure),
        result.unit,
        format_target(result),
        verdict(result),
        result.note,
    )


def markdown_table(results: list[tuple[str, Result]]) -> str:
    lines = [
        "| case | figure | target | verdict | note |",
        "|---|---|---|---|---|",
    ]
    for case, result in results:
        figure = format_figure(result.figure)
        if result.figure is not None and result.unit:
            figure += f" {result.unit}"
        note = result.note.replace("|", "/")
        lines.append(
            f"| {case}: {result.name} | {figure} | {format_target(result)} | "
            f"{verdict(result)} | {note} |"
        )
    return "\n".join(lines)


def append_markdown(path: Path, results, errors: list[str], command: str, run: dict) -> None:
    """Append the run's table to `path` under a heading with its date, machine and command."""
    quick = " (--quick: tiny sizes, not a measurement)" if "--quick" in command else ""
    text = [
        "",
        f"### Run of {run['started']:%Y-%m-%d %H:%M} UTC{quick}",
        "",
        f"Machine: {cpu_count()} CPUs (nproc), {cpu_model()}; load average at the start",
        f"{run['load']}, at the end {load_average()}. Whole suite: {run['wall']:.0f} s wall.",
        f"Command: `{command}`.",
        "",
        markdown_table(results),
        "",
    ]
    if errors:
        text += [f"Failed with an error: {', '.join(errors)}.", ""]
    with open(path, "a") as handle:
        handle.write("\n".join(text))


def _interpreter() -> str:
    """The Python running the suite, relative to the working directory when inside it."""
    try:
        return str(Path(sys.executable).relative_to(Path.cwd()))
    except ValueError:
        return "python"


def parse_cases(values: list[str] | None) -> list[str]:
    if not values:
        return [name for name in CASES if name not in OPTIONAL_CASES]
    chosen = [name.strip() for value in values for name in value.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in CASES]
    if unknown:
        raise SystemExit(f"unknown case {', '.join(unknown)}; cases: {', '.join(CASES)}")
    return [name for name in CASES if name in chosen]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks, no figures")
    parser.add_argument(
        "--only",
        action="append",
        metavar="CASE",
        help=f"run only these cases (repeatable or comma-separated): {', '.join(CASES)} "
        f"({', '.join(OPTIONAL_CASES)} only when named here)",
    )
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="append the table here")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="the shared data (XTREME layout; default: ../shared/data from the repository)",
    )
    return parser.parse_args(argv)


def run_cases(cases: list[str], settings: Settings) -> tuple[list[tuple[str, Result]], list[str]]:
    """Run `cases` in order, printing each figure as it comes; (case, result) pairs and the
    cases that failed with an error (one failing case does not stop the others)."""
    results: list[tuple[str, Result]] = []
    errors: list[str] = []
    for case in cases:
        module_name, function_name, title = CASES[case]
        print(f"# {case}: {title}", flush=True)
        case_clock = time.perf_counter()
        try:
            module = importlib.import_module(f"benchmarks.{module_name}")
            for result in getattr(module, function_name)(settings):
                results.append((case, result))
                print(result_row(result), flush=True)
        except Exception as error:
            errors.append(case)
            traceback.print_exc()
            print(f"ERROR in case {case}: {type(error).__name__}: {error}", flush=True)
        print(f"# {case} took {time.perf_counter() - case_clock:.0f} s", flush=True)
    return results, errors


def summary_line(results: list[tuple[str, Result]], errors: list[str], wall: float) -> str:
    counts = {
        outcome: sum(verdict(r) == outcome for _, r in results)
        for outcome in ("PASS", "MISS", "-", "SKIP")
    }
    return (
        f"{counts['PASS']} PASS, {counts['MISS']} MISS, {counts['-']} without target, "
        f"{counts['SKIP']} skipped"
        + (f", errors in {', '.join(errors)}" if errors else "")
        + f"; {wall:.0f} s wall"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = parse_cases(args.only)
    command = f"{_interpreter()} -m benchmarks " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    started, clock = datetime.now(timezone.utc), time.perf_counter()
    load_at_start = load_average()

    print(
        f"xlt-sweeps benchmarks: {cpu_count()} CPUs ({cpu_model()}), load average "
        f"{load_at_start}" + ("; --quick: tiny sizes, NOT a measurement" if args.quick else ""),
        flush=True,
    )
    print(row("case", "figure", "unit", "target", "verdict", "note"), flush=True)
    with tempfile.TemporaryDirectory(prefix="xlt-bench-") as scratch:
        settings = Settings(args.quick, args.data_dir.resolve(), Path(scratch))
        results, errors = run_cases(cases, settings)
    wall = time.perf_counter() - clock
    print(summary_line(results, errors, wall), flush=True)
    if args.markdown:
        run = {"started": started, "load": load_at_start, "wall": wall}
        append_markdown(args.markdown, results, errors, command, run)
        print(f"appended to {args.markdown}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
