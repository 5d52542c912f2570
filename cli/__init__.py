"""The top layer: the command line (main.py, run by ./slabconv), the
pipeline that chains the stages (pipeline.py), bench, the reference runs
and the up-front downloads (prefetch.py).

Layers, each importing only those below it:
    base -> fetch -> regen -> boot -> verify -> report -> cli
"""
