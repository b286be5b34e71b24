"""PAWS-X (Yang et al. 2019): paraphrase identification on sentence pairs."""

from xlt_core.config import ADAPTATIONS, METHODS
from xlt_core.tasks.pair_task import PairClassificationTask

TASK = PairClassificationTask("pawsx", "sequence_classification", METHODS, ADAPTATIONS)
