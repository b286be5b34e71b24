"""What the publishing step (:mod:`analysis.publish`) hands the renderers
(:mod:`analysis.render`), as plain data: the model registry's outcome, the plots drawn and
the MLflow UI page (:class:`Publication`), and the rendered files (:class:`ReportTexts`)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class AliasHolder:
    """The model version an alias points to and the sweep it came from (None: untagged)."""

    version: str
    sweep_run_id: str | None
    sweep_end_time: int | None
    run_id: str | None = None  # the run whose model the version is


@dataclass(frozen=True)
class Registration:
    """What happened to the selected model: registered (name, version, alias) or why not,
    and which version holds the alias afterwards."""

    run_id: str
    registered: bool
    model_name: str
    alias: str
    version: str | None = None
    source: str | None = None
    reason: str = ""
    alias_moved: bool = False
    holder: AliasHolder | None = None  # who holds the alias after this registration
    alias_reason: str = ""  # why the alias did not move to this version


@dataclass(frozen=True)
class Publication:
    """What publishing adds that the report's text names: the plots drawn, the model
    registry's outcome (None: registration was not asked for) and the MLflow UI page of the
    sweep's runs with the command that serves it ("" when the tracking URI is a server)."""

    plots: tuple[str, ...] = ()
    registration: Registration | None = None
    ui_address: str = ""
    ui_command: str = ""


@dataclass(frozen=True)
class ReportTexts:
    """The report's files, rendered (analysis.render.render_report)."""

    markdown: str  # report.md
    latex: str  # report.tex
    json: str  # selected_config.json
