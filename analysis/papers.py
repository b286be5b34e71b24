"""The three papers' published results as data (``paper_results.json``), matched to a sweep.

A report shows a published row beside ours only where the task, the model, the split
and the metric are the same; the numbers are the papers' (in percent), never ours.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from analysis.collect import AnalysisError

PAPER_RESULTS = Path(__file__).with_name("paper_results.json")
_ENTRY_FIELDS = ("paper", "table", "task", "model", "method", "split", "metric", "scores")


@dataclass(frozen=True)
class PaperResult:
    """One published table row: scores in percent per language."""

    paper: str
    citation: str
    table: str
    task: str
    model: str
    method: str
    split: str
    metric: str
    scores: dict[str, float]

    @property
    def label(self) -> str:
        return f"paper: {self.method} ({self.paper}, {self.table})"


def load_paper_results(path: str | Path = PAPER_RESULTS) -> list[PaperResult]:
    """Every entry of a results file; a malformed entry is refused naming the file and entry."""
    path = Path(path)
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise AnalysisError(f"cannot read published results from {path}: {error}") from error
    citations = content.get("papers", {})
    results = []
    for index, entry in enumerate(content.get("results", [])):
        missing = [name for name in _ENTRY_FIELDS if name not in entry]
        if missing:
            raise AnalysisError(f"{path}: results[{index}] lacks {', '.join(missing)}")
        if entry["paper"] not in citations:
            raise AnalysisError(
                f"{path}: results[{index}] cites paper {entry['paper']!r}, which "
                f"is not in 'papers' ({', '.join(sorted(citations))})"
            )
        scores = {lang: float(value) for lang, value in entry["scores"].items()}
        results.append(
            PaperResult(
                citation=citations[entry["paper"]],
                scores=scores,
                **{name: entry[name] for name in _ENTRY_FIELDS if name != "scores"},
            )
        )
    return results


def matching_results(
    results: list[PaperResult], task: str | None, model: str | None, split: str, metric: str
) -> list[PaperResult]:
    """The published rows for this sweep's task and model on ``split``/``metric``."""
    return [
        result
        for result in results
        if (result.task, result.model, result.split, result.metric) == (task, model, split, metric)
    ]
