"""Local sentence-pair files in the XTREME layout (`<task>/<split>-<lang>.tsv`), shared by
the XNLI and PAWS-X loaders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from xlt_core.data.examples import PairExample
from xlt_core.errors import DataError


@dataclass(frozen=True)
class LocalPairFiles:
    """One task's files: `<data_dir>/<folder>/<split>-<lang>.tsv`, rows of `columns`."""

    folder: str  # "xnli"
    task_name: str  # "XNLI", for messages
    columns: str  # "premise, hypothesis, label", for messages
    label_ids: Mapping[str, int]
    layout: str  # the whole layout in words, for messages
    # The header lines a file may start with, as exact column names: ("premise", "hypo", "label").
    headers: tuple[tuple[str, ...], ...] = ()

    def languages(self, data_dir: Path, split: str) -> list[str]:
        """The languages with a file for `split` (a directory listing only)."""
        return local_languages(data_dir / self.folder, split, self.task_name, self.layout)

    def read(self, data_dir: Path, split: str, lang: str) -> list[PairExample]:
        path = data_dir / self.folder / f"{split}-{lang}.tsv"
        return read_pair_tsv(path, self)


def local_languages(task_dir: Path, split: str, task_name: str, layout: str) -> list[str]:
    """The languages with a `<split>-<lang>.tsv` file (a directory listing only)."""
    if not task_dir.is_dir():
        raise DataError(
            f"{task_name} directory not found: {task_dir}; the local layout expects {layout}"
        )
    prefix = f"{split}-"
    return sorted(path.stem[len(prefix) :] for path in task_dir.glob(f"{prefix}*.tsv"))


def read_pair_tsv(path: Path, files: LocalPairFiles) -> list[PairExample]:
    """Rows of sentence1, sentence2 and a label (one of `files.label_ids`' keys).

    Lines are split on tabs by hand: MultiNLI text holds stray quote characters that csv
    quoting would swallow. A first line is a header only when its columns are exactly one of
    `files.headers`: any other first line is a row, so a misspelled label there is refused
    rather than dropped as a header. Blank lines (such as a trailing one) are skipped.
    """
    examples = []
    text = _read_text(path, files.task_name, files.layout)
    for line_number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise DataError(
                f"{path}:{line_number}: expected 3 tab-separated columns ({files.columns}), "
                f"found {len(fields)}"
            )
        if line_number == 1 and tuple(field.strip() for field in fields) in files.headers:
            continue
        label_name = fields[2].strip()
        if label_name not in files.label_ids:
            raise DataError(f"{path}:{line_number}: {_unknown_label(label_name, files)}")
        examples.append(PairExample(fields[0], fields[1], files.label_ids[label_name]))
    if not examples:
        raise DataError(f"{path}: no examples")
    return examples


def _unknown_label(label_name: str, files: LocalPairFiles) -> str:
    """`unknown label 'entailmnet'; allowed: ... (a header line: premise<TAB>hypo<TAB>label)`."""
    allowed = ", ".join(dict.fromkeys(files.label_ids))
    headers = " or ".join("<TAB>".join(header) for header in files.headers)
    return f"unknown label {label_name!r}; allowed: {allowed}" + (
        f" (a header line, if any, is exactly {headers})" if headers else ""
    )


def _read_text(path: Path, task_name: str, layout: str) -> str:
    # Decoding bytes ourselves keeps a stray CR inside a sentence from splitting a row;
    # "utf-8-sig" drops a byte-order mark that would otherwise stick to the first sentence.
    if not path.is_file():
        raise DataError(f"{task_name} file not found: {path}; the local layout expects {layout}")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error})") from error
