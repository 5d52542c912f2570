"""The base layer: paths, logging and errors, subprocess helpers, whole-file
writes, inter-process locks and small command-line helpers.  Every other
package imports it; it imports nothing of the project's."""
