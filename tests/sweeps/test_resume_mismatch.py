"""`--resume` with settings other than the unfinished sweep's says which settings differ, and
its advice continues that sweep (`--from-run PARENT --resume`, its own sweep file) rather than
starting a new one beside it (issue 53, item 11: before, "there is none (run without --resume
to start it)")."""

from sweeps import ear_xnli
from sweeps.cli import EXIT_BAD_INPUT, _sweep, apply_overrides, build_parser, main, resolve_paths
from sweeps.records import tracking
from sweeps.running import runner
from xlt_core.config import parse_assignments
from xlt_schema import SWEEP_KEY_TAG


def _spec(argv: list[str]):
    """The sweep `main` runs for `argv`, as it builds it before Ray starts."""
    args = build_parser("ear_xnli").parse_args(argv)
    return resolve_paths(apply_overrides(_sweep(ear_xnli, args), parse_assignments(args.set)))


def test_a_resume_with_changed_settings_names_them_and_continues_the_old_sweep(
    tmp_path, monkeypatch, capsys
):
    from tracking_stores import tracking_store

    monkeypatch.chdir(tmp_path)
    uri = tracking_store(tmp_path)
    started = ["--preset", "smoke", "--tracking-uri", uri, "--set", "epochs=1"]
    spec = _spec(started)
    client, experiment_id = tracking.open_experiment(uri, "ear_xnli")
    options = runner.SweepOptions(tracking_uri=uri)
    parent, _ = runner._start_parent(client, experiment_id, spec, options, runner.sweep_key(spec))

    changed = ["--preset", "smoke", "--tracking-uri", uri, "--set", "epochs=2"]
    changed += ["--set", "alpha=0.5", "--resume"]
    capsys.readouterr()
    assert main(ear_xnli, changed) == EXIT_BAD_INPUT
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1, error
    assert f"the unfinished sweep there, parent run {parent} (started " in error
    assert "has other settings: base.epochs=1.0 there, 2.0 here; points: only there " in error
    assert "only here ear alpha=0.5 beta=0.1 layer=6" in error
    assert f"this command with --from-run {parent} --resume in place of its sweep settings" in error
    assert "run without --resume to start it" not in error

    # The advice continues that sweep: the sweep `--from-run` builds has its key.
    advised = _spec(["--from-run", parent, "--tracking-uri", uri, "--resume"])
    assert runner.sweep_key(advised) == client.get_run(parent).data.tags[SWEEP_KEY_TAG]


def test_a_resume_with_no_unfinished_sweep_says_there_is_none(tmp_path, monkeypatch, capsys):
    from tracking_stores import tracking_store

    monkeypatch.chdir(tmp_path)
    uri = tracking_store(tmp_path)
    assert main(ear_xnli, ["--preset", "smoke", "--tracking-uri", uri, "--resume"]) == 2
    error = capsys.readouterr().err
    assert "there is none (run without --resume to start it)" in error, error
