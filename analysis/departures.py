"""The report's "Departures from the paper" section: what a paper preset's sweep changed from
its paper, as the sweep logged it on the parent run (`xlt.paper` tag and the
`paper/departures.json` artifact, written from the paper card `sweeps/papers/<paper>.yaml`;
read by `analysis.sweep_records.read_departures`). A sweep of no paper preset has neither:
the report then has no such section."""

from analysis.papers import UNDRAWN_FIGURES

TITLE = "Departures from the paper"


def departures_section(logged: dict | None) -> list[str]:
    """`## Departures from the paper`: one line per departure (setting, paper, ours, why)."""
    if not logged:
        return []
    departures = logged["departures"]
    lines = [
        f"## {TITLE}",
        "",
        f"This sweep ran the `{logged['paper']}` paper card's preset; it departs from "
        f"{logged['citation']} in {len(departures)} setting(s) (sweeps/papers/"
        f"{logged['paper']}.yaml gives the paper's values with their sources):",
        "",
    ]
    for departure in departures:
        ours = departure["ours"]
        ours = "not a trial setting" if ours is None else _text(ours)
        lines.append(
            f"- **{departure['setting']}**: paper {departure['paper']}; ours {ours}; "
            f"why: {departure['reason']}"
        )
    undrawn = UNDRAWN_FIGURES.get(logged["paper"], ())
    if undrawn:
        lines += ["", "Figures of the paper this report does not draw:", ""]
        lines += [f"- {figure}" for figure in undrawn]
    return lines


def departures_pointer(logged: dict | None) -> str | None:
    """The line the reproduction view carries beside its verdicts, or None."""
    if not logged or not logged["departures"]:
        return None
    names = ", ".join(departure["setting"] for departure in logged["departures"])
    return (
        f"Verdicts above/below the paper may reflect these departures from it: {names} "
        f'(section "{TITLE}").'
    )


def _text(value) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)
