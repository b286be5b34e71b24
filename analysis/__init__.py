"""Reading a sweep from the tracking server, and computing its report and comparisons.

Two layers. The reading layer (``READING_LAYER``) is the only one that talks to MLflow: it
reads a sweep into plain records (frames, the parent run as plain data, per-example scores
behind :class:`analysis.example_scores.PerExampleScores`), and writes the report, the summary
and the model registry's aliases back. Every other module computes on those records and
imports no MLflow (tests/analysis/test_pure_imports.py checks each in a fresh interpreter).
"""

# The modules that import MLflow: the read step, the entry points that read before they
# compute (a report, a comparison, the CLI) and the publishing step.
READING_LAYER = (
    "analysis.__main__",
    "analysis.collect",
    "analysis.compare",
    "analysis.mlflow_ui",
    "analysis.model_registry",
    "analysis.publish",
    "analysis.report",
    "analysis.sweep_records",
)
