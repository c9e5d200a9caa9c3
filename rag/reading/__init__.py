"""Reading an abstract: its sentences, their roles, grades, stand-alone checks, snippets and citation marks.

Pure functions over text and vectors: nothing here opens a library or calls a model server.

    sentences.py    the sentence splitter          roles.py       sentence roles (shipped weights roles.npz)
    grades.py       how well a sentence bears on a question; citation_grades.py  a citation's grade
    standalone.py   does a sentence stand alone?   voice.py       the paper's own voice, definitions
    questions.py    what kind of question          snippets.py    short excerpts for display
    citations.py    [n] marks: parse, resolve, verify
    role_sequence.py  the role GRUs roles.py loads (weights roles.npz, roles.pooled.npz)
    role_features.py  what both role models read of a sentence
"""
