"""Exports: the Markdown document of an answer, summary or evidence list (documents.py) and its references
for reference managers, BibTeX and RIS (bibliography.py)."""
