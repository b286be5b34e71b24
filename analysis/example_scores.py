"""Per-example scores of trial runs as the compute modules read them: one payload per (run,
split, language), each asked for once and kept in memory. Pure: the payloads are given
(``payloads``) or loaded on first ask by :meth:`PerExampleScores.load_payload`, which the
reading layer implements (:class:`analysis.collect.ExampleScores`: from the runs'
``predictions/`` artifacts, fetched only when a computation asks for them)."""

from collections.abc import Mapping

import numpy as np

from analysis.frames import AnalysisError, example_artifact

# A payload's key: (run id, split, language).
PayloadKey = tuple[str, str, str]


class PerExampleScores:
    """Per-example payloads of trial runs, by (run id, split, language).

    A payload holds ``scores`` (one number per example, in the data's order) and may hold
    ``counts`` (one list of k counts per example, e.g. NER's [tp, fp, fn]) with the
    ``metric`` they make up (e.g. ``f1``), and ``predictions`` and ``labels``
    (:mod:`analysis.sanity`). Without a loader (this class) only the payloads given exist.
    """

    def __init__(self, payloads: Mapping[PayloadKey, dict] | None = None):
        self._payloads: dict[PayloadKey, dict] = dict(payloads or {})

    def payload(self, run_id: str, split: str, lang: str) -> dict:
        key = (run_id, split, lang)
        if key not in self._payloads:
            self._payloads[key] = self.load_payload(run_id, split, lang)
        return self._payloads[key]

    def load_payload(self, run_id: str, split: str, lang: str) -> dict:
        """The payload of a run not given in memory: the reading layer's subclass reads it."""
        raise AnalysisError(f"run {run_id} has no artifact {example_artifact(split, lang)}")

    def _stack(self, run_ids: list[str], split: str, lang: str, field: str) -> np.ndarray:
        if not run_ids:
            raise AnalysisError(f"no runs given to load {split}/{lang} {field} from")
        values = [self.payload(run_id, split, lang)[field] for run_id in run_ids]
        lengths = {run_id: len(run_values) for run_id, run_values in zip(run_ids, values)}
        if len(set(lengths.values())) > 1:
            listing = ", ".join(f"{run_id}: {length}" for run_id, length in lengths.items())
            raise AnalysisError(
                f"{example_artifact(split, lang)} holds a different number of "
                f"examples per run ({listing}); runs can only be paired on the "
                "same examples"
            )
        try:
            return np.asarray(values, dtype=float)
        except ValueError as error:
            raise AnalysisError(
                f"{example_artifact(split, lang)}: '{field}' must hold the same "
                f"number of values for every example ({error})"
            ) from error

    def scores(self, run_ids: list[str], split: str, lang: str) -> np.ndarray:
        """Per-example scores of each run, shaped (len(run_ids), n_examples)."""
        return self._stack(run_ids, split, lang, "scores")

    def counts(self, run_ids: list[str], split: str, lang: str) -> tuple[np.ndarray, str] | None:
        """Per-example counts shaped (runs, examples, k) and their metric, or None when
        any run's artifact has no ``counts``."""
        payloads = [self.payload(run_id, split, lang) for run_id in run_ids]
        if not all("counts" in payload for payload in payloads):
            return None
        metrics = {payload.get("metric") for payload in payloads}
        if len(metrics) != 1:
            raise AnalysisError(
                f"{example_artifact(split, lang)} declares different metrics "
                f"per run: {sorted(map(str, metrics))}"
            )
        counts = self._stack(run_ids, split, lang, "counts")
        if counts.ndim != 3:
            raise AnalysisError(
                f"{example_artifact(split, lang)}: 'counts' must be one list of "
                f"counts per example; got shape {counts.shape[1:]}"
            )
        return counts, metrics.pop()
