#!/bin/sh
# slabconv CC wrapper:  CC="sh verify/ccwrap.sh ccache gcc"
#
# Runs the compiler unchanged; when it produces an object (-o X.o) it also
# keeps the compiler's diagnostics in X.o.diag-slabconv, so the warnings of a
# build can be collected from the O= tree afterwards, objects that an
# incremental build did not recompile included, and without the interleaving
# of a parallel build log.
out=
prev=
for a in "$@"; do
	[ "$prev" = "-o" ] && out=$a
	prev=$a
done
case "$out" in
*.o) ;;
*) exec "$@" ;;
esac
tmp="$out.diag-slabconv.tmp"
"$@" 2>"$tmp"
rc=$?
cat "$tmp" >&2
if [ "$rc" -eq 0 ]; then
	mv -f "$tmp" "$out.diag-slabconv"
else
	rm -f "$tmp" "$out.diag-slabconv"
fi
exit "$rc"
