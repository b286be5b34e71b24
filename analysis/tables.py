"""Paper-style tables (rows: configurations, columns: languages) in Markdown and LaTeX."""

from dataclasses import dataclass

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


@dataclass(frozen=True)
class Table:
    """A table with a title, column headers, labelled rows of text cells and a note."""

    title: str
    columns: list[str]
    rows: list[tuple[str, list[str]]]
    note: str = ""


def markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |"


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Markdown lines of a table: header, rule, rows."""
    return [
        markdown_row(header),
        markdown_row(["---"] * len(header)),
        *(markdown_row(row) for row in rows),
    ]


def to_markdown(table: Table, label_header: str = "Configuration") -> list[str]:
    lines = [
        f"### {table.title}",
        "",
        *markdown_table(
            [label_header, *table.columns], [[label, *cells] for label, cells in table.rows]
        ),
    ]
    return lines + (["", table.note] if table.note else [])


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def _latex_cell(text: str) -> str:
    """Escape a cell; significance marks become superscripts."""
    stripped = text.rstrip("*")
    marks = text[len(stripped) :]
    cell = latex_escape(stripped).replace("–", "--")
    return cell + (f"$^{{{marks}}}$" if marks else "")


def to_latex(table: Table, label_header: str = "Configuration") -> str:
    """A ``table`` environment with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``)."""
    spec = "l" + "r" * len(table.columns)
    header = " & ".join([latex_escape(label_header), *map(latex_escape, table.columns)])
    body = [
        " & ".join([latex_escape(label), *map(_latex_cell, cells)]) + r" \\"
        for label, cells in table.rows
    ]
    caption = latex_escape(table.title) + (f". {latex_escape(table.note)}" if table.note else "")
    return (
        "\n".join(
            [
                r"\begin{table}[t]",
                r"\centering",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\toprule",
                header + r" \\",
                r"\midrule",
                *body,
                r"\bottomrule",
                r"\end{tabular}",
                rf"\caption{{{caption}}}",
                r"\end{table}",
            ]
        )
        + "\n"
    )
