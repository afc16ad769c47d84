"""The research desk: the paper's ablations and open claims, re-run on the miniature.

`python -m research <experiment>` runs one; `research.results.load(experiment)` reads its results.
"""
