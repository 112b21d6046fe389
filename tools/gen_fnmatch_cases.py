#!/usr/bin/env python3
"""Writes tests/core/testdata/fnmatch_cases.tsv: random glob patterns and
texts over a small alphabet rich in glob syntax, with Python's
fnmatch.fnmatchcase verdict (the reference framework's matcher)."""
import fnmatch
import os
import random

random.seed(20261129)
patterns = ["".join(random.choice("ab.*?[]!-") for _ in range(random.randint(0, 8))) for _ in range(400)]
texts = ["".join(random.choice("ab.-]!") for _ in range(random.randint(0, 8))) for _ in range(25)]
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "core", "testdata", "fnmatch_cases.tsv")
with open(out, "w") as f:
    for p in patterns:
        for t in texts:
            f.write("%s\t%s\t%d\n" % (p, t, fnmatch.fnmatchcase(t, p)))
