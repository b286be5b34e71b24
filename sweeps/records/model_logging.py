"""A trained model as an MLflow `transformers` model, so that the registered champion loads
with MLflow's own loaders: `mlflow.transformers.load_model("models:/ear_xnli@champion")`
gives a pipeline, `mlflow.pyfunc.load_model(...)` a model that predicts on a DataFrame.

Runs in the trial's worker, where torch is loaded anyway, on the `save_pretrained` folder the
trial wrote."""

from __future__ import annotations

import shutil
from pathlib import Path

from xlt_core import registry

# Per head (xlt_core.registry's HEADS): the pipeline task, an input example and the
# signature's input columns.
PIPELINES = {
    "sequence_classification": (
        "text-classification",
        {"text": ["The cat sat on the mat."], "text_pair": ["A cat is sitting."]},
        ("text", "text_pair"),
    ),
    "token_classification": (
        "token-classification",
        "Angela Merkel visited Paris.",
        None,
    ),
    "question_answering": (
        "question-answering",
        {"question": ["Where did she go?"], "context": ["She went to Paris."]},
        ("question", "context"),
    ),
}


def _signature(columns: tuple[str, ...] | None):
    from mlflow.models.signature import ModelSignature
    from mlflow.types import ColSpec, Schema

    if columns is None:  # one text per prediction: the flavour's default signature
        return None
    return ModelSignature(inputs=Schema([ColSpec("string", name) for name in columns]))


def save_mlflow_models(trained: Path, target: Path, task_name: str) -> None:
    """What a trial saved in `trained` as MLflow models in `target`: one model, or one per
    language stage (`trained/<lang>/`, adjustment's stages) in `target/<lang>/`. Nothing
    when the trial saved nothing."""
    declaration = registry.task(task_name)
    if (trained / "config.json").is_file():
        save_mlflow_model(trained, declaration.head, target, declaration.labels)
        return
    for stage in sorted(trained.glob("*/config.json")):
        save_mlflow_model(
            stage.parent, declaration.head, target / stage.parent.name, declaration.labels
        )


def save_mlflow_model(
    checkpoint: Path, head: str, target: Path, labels: tuple[str, ...] | None = None
) -> None:
    """The `save_pretrained` folder `checkpoint` (model and tokenizer) as an MLflow
    transformers model in `target` (replaced if present); `labels` name the classes
    (predictions then say `entailment`, not `LABEL_0`)."""
    import mlflow.transformers
    import transformers

    task, example, columns = PIPELINES[head]
    # An absolute path: MLflow looks the model's licence up on the hub by this name, and a
    # path is no hub id, so it is not sent (a relative one would wait on retries).
    checkpoint = str(Path(checkpoint).resolve())
    pipeline = transformers.pipeline(task, model=checkpoint, tokenizer=checkpoint)
    if labels:
        pipeline.model.config.id2label = dict(enumerate(labels))
        pipeline.model.config.label2id = {label: index for index, label in enumerate(labels)}
    shutil.rmtree(target, ignore_errors=True)
    mlflow.transformers.save_model(
        transformers_model=pipeline,
        path=str(target),
        task=task,
        # Without a card MLflow looks one up on the hub by the model's path, and warns at
        # every trial that it found neither a card nor a licence there.
        model_card=_model_card(task),
        input_example=example,
        signature=_signature(columns),
        # Pinned from what is installed; MLflow's inference imports optional packages.
        pip_requirements=[f"{name}=={_version(name)}" for name in ("torch", "transformers")],
    )


def _model_card(task: str):
    """The model card saved with the model (`model_card.md`): what the model is and where its
    settings are. No licence: the model's terms are those of the encoder it started from."""
    from huggingface_hub import ModelCard, ModelCardData

    data = ModelCardData(library_name="transformers", pipeline_tag=task)
    return ModelCard(
        f"---\n{data.to_yaml()}\n---\n\nA {task} model trained by an xlt-sweeps trial: its "
        "MLflow run holds the settings (its `model` param names the encoder it started from, "
        "whose licence applies; `tiny` is trained from scratch) and the scores.\n"
    )


def _version(package: str) -> str:
    from importlib import metadata

    return metadata.version(package)
