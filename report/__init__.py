"""report: figures and summaries of runs (bench)."""
