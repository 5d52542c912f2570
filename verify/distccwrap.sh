#!/bin/sh
# slabconv's ccache prefix for distributed builds: CCACHE_PREFIX=<this script>
#
# ccache runs "<this script> gcc ARGS" on a cache miss.  The compile goes to
# distcc (plain mode: preprocessed here, compiled on a host of DISTCC_HOSTS).
# A remote gcc compiles the preprocessed text, which has lost the comments
# and the macro expansion history: its diagnostics can differ from a local
# compile's (a "/* fall through */" comment no longer silences
# -Wimplicit-fallthrough; a warning inside a macro is reported at the
# expansion, not in the header that defines it).  So a compile that printed
# anything, or failed, is compiled again here, and that compile's object,
# diagnostics and exit code are what ccache caches and the build sees: the
# warning gates see exactly what a local build prints.  A silent, successful
# remote compile is the same as a silent local one.
#
# Each local recompile leaves a line in $DISTCC_LOG (the build's
# slabconv-distcc.log): "slabconv: diagnostics, compiled locally: OBJ".
out=
prev=
for a in "$@"; do
	[ "$prev" = "-o" ] && out=$a
	prev=$a
done
tmp=$(mktemp "${TMPDIR:-/tmp}/slabconv-distcc.XXXXXX") || exec "$@"
distcc "$@" 2>"$tmp"
rc=$?
if [ "$rc" -eq 0 ] && [ ! -s "$tmp" ]; then
	rm -f "$tmp"
	exit 0
fi
rm -f "$tmp"
if [ -n "${DISTCC_LOG:-}" ]; then
	echo "slabconv: diagnostics, compiled locally: ${out:-?} (remote exit $rc)" >>"$DISTCC_LOG"
fi
exec "$@"
