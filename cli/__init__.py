"""The top layer: the command line (main.py, run by ./slabconv), the
commands that chain the stages and the main job (pipeline.py), the run's
source and series applied (apply.py), verify's orchestration (checks.py),
the boots (boots.py), bench, the reference runs and the up-front downloads
(prefetch.py).

Layers, each importing only those below it:
    base -> fetch -> regen -> boot -> verify -> report -> cli
"""
