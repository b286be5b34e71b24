"""XNLI (Conneau et al. 2018): three-way natural language inference on sentence pairs."""

from xlt_core.config import ADAPTATIONS, METHODS
from xlt_core.tasks.pair_task import PairClassificationTask

TASK = PairClassificationTask("xnli", "sequence_classification", METHODS, ADAPTATIONS)
