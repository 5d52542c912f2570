#!/bin/sh
# slabconv guest init (PID 1 in the QEMU guest, run by busybox sh).
#
# Prints one top-level KTAP document on the KTAP channel: the second serial
# port (/dev/ttyS1, captured by the host into ktap.log) when it exists, or
# the virtio console (/dev/hvc0: the arm64 virt machine has one UART), else
# the console.  When the channel is not the console each line is mirrored on the console
# for people reading console.log; the host parses the channel, so kernel
# messages interleaved on the console cannot garble the results.
#
#   1 slabconv_test          insmod the test module; its own KTAP document
#                            (lifted from dmesg, "slabconv-ktap: " prefix) is
#                            nested as a subtest and verified here
#   2 slub_validate          write 1 to every /sys/kernel/slab/*/validate;
#                            any write error or slab report in dmesg fails
#                            (SKIP: no /sys/kernel/slab under SLAB, SLOB
#                            or SLUB_TINY)
#   3 slab_caches_visible    kmalloc and module caches in /proc/slabinfo,
#                            held objects counted (SKIP: SLOB has no slabinfo,
#                            nor has SLUB without SLUB_DEBUG, e.g. SLUB_TINY)
#   4 sysfs_slab_caches      kmalloc and module caches in /sys/kernel/slab
#                            (SKIP: SLUB only, not SLUB_TINY)
#   5 memcg_slab_accounting  SLAB_ACCOUNT objects held by the module are
#                            charged to the memcg insmod ran in: its
#                            memory.stat slab_unreclaimable and slab lines
#                            rose by at least half of what is held, and drop
#                            by at least half of it when the module frees
#                            them (parameters/release) (SKIP: no
#                            CONFIG_MEMCG_KMEM, as with SLOB)
#   6 module_unload          rmmod destroys the module's caches cleanly (no
#                            slab report newer than those of test 2)
#   7 kasan_slab_reports     each "slabconv-expect: begin kasan TYPE CACHE" ..
#                            "end kasan" bracket the module printed holds a
#                            KASAN report of bug type TYPE whose object
#                            "belongs to the cache CACHE", as many as the
#                            module announced (SKIP: no CONFIG_KASAN)
#   8 kasan_kunit            the kernel's KASAN KUnit suite ("kasan", run at
#                            boot by KUnit's executor), lifted from dmesg and
#                            nested (SKIP: CONFIG_KASAN_KUNIT_TEST not built in)
#   9 iommu                  DMA through the Intel or AMD IOMMU (the section
#                            between the "slabconv-iommu" markers below):
#                            the IOMMU active and the virtio disk translated,
#                            the disk read back with O_DIRECT matches the
#                            host's checksum, the slabconv_iommu module's
#                            page-table checks (Intel: built, translated,
#                            freed on unmap in strict or lazy mode, no page
#                            leaked; AMD: built, freed when 2 MiB pages
#                            replace them and when the domain is freed, no
#                            page leaked), no DMA remapping fault.  SKIP
#                            when the kernel has no CONFIG_INTEL_IOMMU and
#                            the host attached no IOMMU
#  10 fault_injection        allocations made to fail (the section between
#                            the "slabconv-faultinj" markers below): with
#                            fail_page_alloc armed through debugfs for the
#                            marked task only, the slabconv_faultinj
#                            module's fresh caches (several object sizes and
#                            slab orders, process and atomic context) return
#                            NULL cleanly when their slab page cannot be
#                            allocated and work again afterwards; then with
#                            failslab armed, object allocations fail before
#                            they reach a slab; the fault attributes'
#                            counters agree with the module's NULL returns;
#                            the allocator's out-of-memory report names the
#                            cache; SLUB validate is clean on the module's
#                            caches and rmmod destroys them (SKIP: neither
#                            CONFIG_FAIL_PAGE_ALLOC nor CONFIG_FAILSLAB)
#  11 test_meminit           the kernel's lib/test_meminit.c (built in, run
#                            at boot): its four result lines nested as a
#                            suite; a function whose checks the allocator's
#                            debugging makes meaningless (poisoned objects
#                            are never zeroed) is a SKIP naming the kernel's
#                            reason (SKIP: CONFIG_TEST_MEMINIT not built in)
#  12 slub_kunit             the kernel's SLUB KUnit suite (lib/slub_kunit.c,
#                            "slub_test", 5.14 and later), run at boot,
#                            nested (SKIP: not built in, or before 5.14)
#
# The allocator comes from the module's "# allocator X" line (else SLUB's
# boot banner).  A file the allocator does not provide is a SKIP with the
# reason; the same file missing under an allocator that provides it fails.
#
# Kernel command line knobs (read from /proc/cmdline):
#   slabconv.inject=X      passed to the module: warn plants a WARNING,
#                          fail makes module case 1 fail, redzone plants a
#                          red zone overwrite that test 2 must report,
#                          noaccount / nofree make test 5 fail (nothing
#                          charged / nothing uncharged), kasan_missing /
#                          kasan_wrongcache make test 7 fail, kasan_stray
#                          plants a KASAN report outside the brackets (the
#                          host's console scanner fails it)
#   slabconv.mode=probe    print "slabconv-init: probe ok" and reboot at once
#   slabconv.iommu=intel   the host attached -device intel-iommu (test 9);
#   slabconv.iommu=amd     -device amd-iommu
#   slabconv.iommu_disk=SHA256  the checksum of the disk image it attached
#   slabconv.faultinj=noarm  test 10 leaves fault injection disarmed but
#                          tells the module it armed it: its cases must fail
#                          (nothing failed), proving they cannot pass idly
# Ends with "# slabconv: end" on the KTAP channel, then reboot -f (QEMU runs
# with -no-reboot, so the guest reset ends QEMU).

PATH=/bin:/sbin
export PATH
MOD=/lib/slabconv/slabconv_test.ko
MODNAME=slabconv_test
# Slab reports in dmesg: SLUB's ("BUG <cache> (Not tainted): ...", "FIX"),
# DEBUG_SLAB's (mm/slab.c: "Slab corruption", "slab error in", double free,
# red zones) and slab_common's.
SLAB_ERR='BUG [^ ]+ \((Not tainted|Tainted)|^(\[[ 0-9.]+\] )?FIX [^ ]+: |slabs counted but counter|still has objects|no slab for object'
SLAB_ERR="$SLAB_ERR"'|Slab corruption \(|slab error in [^ ]+\(\): cache|slab: double free detected|kfree_debugcheck: out of range|: redzone 1:0x|not aligned to ARCH_SLAB_MINALIGN|kernel BUG at mm/sl[aou]b'

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /tmp

say() { echo "slabconv-init: $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

CMDLINE=$(cat /proc/cmdline)
arg() {
	for w in $CMDLINE; do
		case "$w" in "$1="*) echo "${w#*=}"; return 0 ;; esac
	done
	return 1
}

finish() {
	say "done at ${1:-?}s"
	ktap "# slabconv: end"
	reboot -f
	# reboot should not return; the host kills QEMU after the end marker.
	while :; do sleep 1000; done
}

KTAP_DEV=/dev/console
for d in /dev/ttyS1 /dev/hvc0; do
	if [ -c "$d" ] && stty -F "$d" raw -echo clocal 2>/dev/null; then
		KTAP_DEV=$d
		break
	fi
done
exec 3>"$KTAP_DEV"
ktap() {
	echo "$*" >&3
	[ "$KTAP_DEV" = /dev/console ] || echo "$*"
}
say "started at $(uptime_s)s, KTAP on $KTAP_DEV"
# What the kernel said about itself at boot, before later messages can push
# it out of the log buffer: lib/test_meminit.c's results (test 11),
# whether slab poisoning overrides init_on_alloc; the KUnit suites run
# before /init (test 12).
dmesg > /tmp/boot-dmesg.log
sed 's/^\[[ 0-9.]*\] //' /tmp/boot-dmesg.log | grep -E '^test_meminit: |^mem auto-init: ' > /tmp/boot-meminit.log

if [ "$(arg slabconv.mode)" = probe ]; then
	say "probe ok"
	finish "$(uptime_s)"
fi

# Run insmod (and so the module's accounted allocations) in a child memory
# cgroup so that test 4 can see the charge.
CG=""
if mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null &&
   echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
   mkdir /sys/fs/cgroup/slabconv 2>/dev/null &&
   echo $$ > /sys/fs/cgroup/slabconv/cgroup.procs 2>/dev/null; then
	CG=/sys/fs/cgroup/slabconv
fi

# A line of the slabconv cgroup's memory.stat ($1: slab_unreclaimable, slab).
memstat() {
	sed -n "s/^$1 \([0-9][0-9]*\)\$/\1/p" "$CG/memory.stat" 2>/dev/null
}
# Before the module allocates anything.
if [ -n "$CG" ]; then
	U0=$(memstat slab_unreclaimable)
	S0=$(memstat slab)
fi

# Slab reports in dmesg after the first $1 (default 0), timestamps dropped.
slab_reports() {
	dmesg | grep -v 'slabconv-ktap: ' | grep -E "$SLAB_ERR" |
		sed 's/^\[[ 0-9.]*\] //' | tail -n +$((${1:-0} + 1))
}

ktap "KTAP version 1"
ktap "# slabconv guest tests, kernel $(uname -r)"
ktap "1..12"

# ---- 1: the module -----------------------------------------------------------
LOADED=0
R1=""
if [ ! -f "$MOD" ]; then
	R1="module missing from initramfs"
else
	INJECT=$(arg slabconv.inject)
	T0=$(uptime_s)
	if insmod "$MOD" ${INJECT:+inject=$INJECT} > /tmp/insmod.out 2>&1; then
		LOADED=1
	else
		R1="insmod failed: $(head -n 1 /tmp/insmod.out)"
	fi
	say "insmod took $T0 -> $(uptime_s)s"
fi
dmesg | sed -n 's/^.*slabconv-ktap: //p' | grep -v '^# slabconv_test: unloaded' > /tmp/mod.ktap
PLAN=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' /tmp/mod.ktap | head -n 1)
NRES=$(grep -cE '^(not )?ok [0-9]+' /tmp/mod.ktap)
NFAIL=$(grep -c '^not ok ' /tmp/mod.ktap)
if [ -z "$R1" ]; then
	if [ -z "$PLAN" ]; then
		R1="module printed no KTAP plan"
	elif [ "$NRES" -ne "$PLAN" ]; then
		R1="module reported $NRES of $PLAN results"
	elif [ "$NFAIL" -ne 0 ]; then
		R1="$NFAIL of $PLAN module cases failed"
	fi
fi
while IFS= read -r line; do
	ktap "    $line"
done < /tmp/mod.ktap
if [ -z "$R1" ]; then ktap "ok 1 - slabconv_test"; else ktap "not ok 1 - slabconv_test # $R1"; fi

# Which allocator, and what it provides.
ALLOC=$(sed -n 's/^# allocator \([A-Z]*\),.*/\1/p' /tmp/mod.ktap | head -n 1)
MEMCG_KMEM=$(sed -n 's/^# allocator .*memcg_kmem \([01]\).*/\1/p' /tmp/mod.ktap | head -n 1)
# SLUB without SLUB_DEBUG (slub-nodebug, 6.2+'s SLUB_TINY) has no /proc/slabinfo.
SLUB_DEBUG=$(sed -n 's/^# allocator .*slub_debug \([01]\).*/\1/p' /tmp/mod.ktap | head -n 1)
# SLUB_TINY (6.2+) has no /sys/kernel/slab either (SLAB_SUPPORTS_SYSFS needs !SLUB_TINY).
SLUB_TINY=$(sed -n 's/^# allocator .*slub_tiny \([01]\).*/\1/p' /tmp/mod.ktap | head -n 1)
if [ -z "$ALLOC" ]; then
	if dmesg | grep -q 'SLUB: HWalign='; then ALLOC=SLUB; else ALLOC=unknown; fi
fi
ktap "# allocator $ALLOC"
# skip_reason FILE ALLOCATORS: why FILE may be missing (empty: it may not).
skip_reason() {
	case " $2 " in
	*" $ALLOC "*) echo "$1 absent: not provided by $ALLOC" ;;
	esac
}
# sysfs_skip_reason: why /sys/kernel/slab may be missing (empty: it may not).
sysfs_skip_reason() {
	if [ "$ALLOC" = SLUB ] && [ "$SLUB_TINY" = 1 ]; then
		echo "/sys/kernel/slab absent: SLUB_TINY does not provide it"
	else
		skip_reason /sys/kernel/slab "SLAB SLOB"
	fi
}

# ---- 2: SLUB validate on every cache ----------------------------------------
R2=""
S2=""
N=0
SEEN=0
BAD=""
NODEBUG=""
# Since 5.17 ("mm/slub: restrict sysfs validation to debug caches and make
# it safe") writing validate fails with EINVAL on a cache without
# consistency checks: the guests booted without slub_debug (kasan, iommu)
# have only such caches on 6.1 and 6.12.  There, and only there, a failed
# write on a cache whose sanity_checks reads 0 is not a failure.
KV=$(uname -r)
KMAJ=${KV%%.*}
KMIN=${KV#*.}
KMIN=${KMIN%%[!0-9]*}
VALIDATE_DEBUG_ONLY=0
if [ "$KMAJ" -gt 5 ] || { [ "$KMAJ" -eq 5 ] && [ "$KMIN" -ge 17 ]; }; then
	VALIDATE_DEBUG_ONLY=1
fi
if [ -d /sys/kernel/slab ]; then
	for d in /sys/kernel/slab/*; do
		[ -L "$d" ] && continue
		[ -e "$d/validate" ] || continue
		# 5.10's sysfs validate races with objects freed concurrently (fixed
		# upstream in 5.17 by "mm/slub: restrict sysfs validation to debug
		# caches and make it safe"): the file closed by the previous write is
		# freed by RCU and can look like a corrupt filp object.  Let that
		# free happen before validating the next cache.
		usleep 20000
		if echo 1 > "$d/validate" 2>/dev/null; then
			N=$((N + 1))
		elif [ "$VALIDATE_DEBUG_ONLY" = 1 ] && [ "$(cat "$d/sanity_checks" 2>/dev/null)" = 0 ]; then
			NODEBUG="$NODEBUG ${d##*/}"
		else
			BAD="$BAD ${d##*/}"
		fi
	done
	if [ -n "$NODEBUG" ]; then
		ktap "# validate: $(echo $NODEBUG | wc -w) cache(s) without consistency checks not validated (Linux $KV validates debug caches only)"
	fi
	if [ -n "$BAD" ]; then
		R2="validate write failed for:$BAD"
	elif [ "$N" -eq 0 ] && [ -n "$NODEBUG" ]; then
		S2="no cache has consistency checks (booted without slub_debug), and Linux $KV validates only those"
	elif [ "$N" -eq 0 ]; then
		# validate needs CONFIG_SLUB_DEBUG
		S2="no cache has a validate file (SLUB without CONFIG_SLUB_DEBUG)"
	fi
else
	S2=$(sysfs_skip_reason)
	[ -n "$S2" ] || R2="/sys/kernel/slab missing (allocator $ALLOC)"
fi
ERR=$(slab_reports | head -n 1)
SEEN=$(slab_reports | wc -l)
# A slab report fails the test even when there was nothing to validate.
if [ -z "$R2" ] && [ -n "$ERR" ]; then
	R2="slab report in dmesg: $ERR"
	S2=""
fi
ktap "# validated $N caches"
if [ -n "$R2" ]; then ktap "not ok 2 - slub_validate # $R2"
elif [ -n "$S2" ]; then ktap "ok 2 - slub_validate # SKIP $S2"
else ktap "ok 2 - slub_validate"; fi

# ---- 3: caches visible in /proc/slabinfo --------------------------------------
# kmalloc-128: a kmalloc cache of every architecture (arm64's kmalloc caches
# start at 128 bytes, its ARCH_DMA_MINALIGN: there is no kmalloc-64 there).
R3=""
S3=""
HELD=$(sed -n 's/^# held \([0-9][0-9]*\) accounted objects.*/\1/p' /tmp/mod.ktap | head -n 1)
if [ ! -r /proc/slabinfo ]; then
	S3=$(skip_reason /proc/slabinfo "SLOB")
	if [ -z "$S3" ] && [ "$ALLOC" = SLUB ] && [ "$SLUB_DEBUG" = 0 ]; then
		S3="/proc/slabinfo absent: SLUB without CONFIG_SLUB_DEBUG does not provide it"
	fi
	[ -n "$S3" ] || R3="/proc/slabinfo missing (allocator $ALLOC)"
elif ! grep -q '^kmalloc-128 ' /proc/slabinfo; then
	R3="kmalloc-128 not in /proc/slabinfo"
elif [ "$LOADED" = 1 ]; then
	for c in slabconv_uc slabconv_acct; do
		grep -q "^$c " /proc/slabinfo || R3="$c not in /proc/slabinfo"
	done
	ACTIVE=$(sed -n 's/^slabconv_acct  *\([0-9][0-9]*\) .*/\1/p' /proc/slabinfo)
	ktap "# slabconv_acct active_objs ${ACTIVE:-?}, held ${HELD:-?}"
	if [ -z "$R3" ] && [ -n "$HELD" ] && [ "${ACTIVE:-0}" -lt "$HELD" ]; then
		R3="slabconv_acct active_objs $ACTIVE < $HELD held objects"
	fi
fi
if [ -n "$R3" ]; then ktap "not ok 3 - slab_caches_visible # $R3"
elif [ -n "$S3" ]; then ktap "ok 3 - slab_caches_visible # SKIP $S3"
else ktap "ok 3 - slab_caches_visible"; fi

# ---- 4: caches visible in /sys/kernel/slab --------------------------------------
R4=""
S4=""
if [ ! -d /sys/kernel/slab ]; then
	S4=$(sysfs_skip_reason)
	[ -n "$S4" ] || R4="/sys/kernel/slab missing (allocator $ALLOC)"
elif [ ! -e /sys/kernel/slab/kmalloc-128 ]; then
	R4="/sys/kernel/slab/kmalloc-128 missing"
elif [ "$LOADED" = 1 ]; then
	for c in slabconv_uc slabconv_acct; do
		[ -e /sys/kernel/slab/$c ] || R4="/sys/kernel/slab/$c missing"
	done
	OBJS=$(cat /sys/kernel/slab/slabconv_acct/objects 2>/dev/null | cut -d' ' -f1)
	ktap "# /sys/kernel/slab/slabconv_acct/objects ${OBJS:-?}, held ${HELD:-?}"
	if [ -z "$R4" ] && [ -n "$HELD" ] && [ -n "$OBJS" ] && [ "$OBJS" -lt "$HELD" ]; then
		R4="slabconv_acct objects $OBJS < $HELD held objects"
	fi
fi
if [ -n "$R4" ]; then ktap "not ok 4 - sysfs_slab_caches # $R4"
elif [ -n "$S4" ]; then ktap "ok 4 - sysfs_slab_caches # SKIP $S4"
else ktap "ok 4 - sysfs_slab_caches"; fi

# ---- 5: memcg accounting -------------------------------------------------------
# Both directions: while the module holds HELD objects of ACCT bytes, the
# cgroup's slab_unreclaimable and slab lines are at least HELD*ACCT/2 above
# what they were before insmod; after the module frees them (a write to its
# release parameter) they are at least HELD*ACCT/2 lower again.  Half: 5.10
# batches memcg statistics per CPU (MEMCG_CHARGE_BATCH pages' worth of bytes
# per CPU and counter), and the module holds several MiB to be far above it.
ACCT=$(sed -n 's/^# held [0-9][0-9]* accounted objects of \([0-9][0-9]*\) bytes.*/\1/p' /tmp/mod.ktap | head -n 1)
RELEASE=/sys/module/$MODNAME/parameters/release
if [ -z "$CG" ]; then
	ktap "ok 5 - memcg_slab_accounting # SKIP no cgroup2 memory controller"
elif [ "$LOADED" != 1 ] || [ -z "$HELD" ] || [ -z "$ACCT" ]; then
	ktap "ok 5 - memcg_slab_accounting # SKIP module not loaded or held nothing"
elif [ "$MEMCG_KMEM" = 0 ]; then
	ktap "ok 5 - memcg_slab_accounting # SKIP CONFIG_MEMCG_KMEM is not set ($ALLOC): slab objects are not charged"
else
	R5=""
	HELD_B=$((HELD * ACCT))
	WANT=$((HELD_B / 2))
	U1=$(memstat slab_unreclaimable)
	S1=$(memstat slab)
	if [ ! -w "$RELEASE" ]; then
		R5="$RELEASE missing"
	elif ! echo 1 > "$RELEASE" 2>/tmp/release.err; then
		R5="release failed: $(head -n 1 /tmp/release.err)"
	fi
	U2=$(memstat slab_unreclaimable)
	S2=$(memstat slab)
	ktap "# memcg slab_unreclaimable ${U0:-?} -> ${U1:-?} -> ${U2:-?} bytes, slab ${S0:-?} -> ${S1:-?} -> ${S2:-?} (before, held, released); held $HELD x $ACCT = $HELD_B bytes"
	for v in "$U0" "$U1" "$U2" "$S0" "$S1" "$S2"; do
		[ -n "$v" ] || R5="${R5:-no slab_unreclaimable or slab line in memory.stat}"
	done
	if [ -z "$R5" ]; then
		if [ $((U1 - U0)) -lt "$WANT" ]; then
			R5="slab_unreclaimable rose by $((U1 - U0)) < $WANT while $HELD_B bytes are held"
		elif [ $((S1 - S0)) -lt "$WANT" ]; then
			R5="slab rose by $((S1 - S0)) < $WANT while $HELD_B bytes are held"
		elif [ $((U1 - U2)) -lt "$WANT" ]; then
			R5="slab_unreclaimable dropped by $((U1 - U2)) < $WANT after $HELD_B bytes were freed"
		elif [ $((S1 - S2)) -lt "$WANT" ]; then
			R5="slab dropped by $((S1 - S2)) < $WANT after $HELD_B bytes were freed"
		fi
	fi
	if [ -z "$R5" ]; then ktap "ok 5 - memcg_slab_accounting"; else ktap "not ok 5 - memcg_slab_accounting # $R5"; fi
fi

# ---- 6: unload ----------------------------------------------------------------
if [ "$LOADED" != 1 ]; then
	ktap "ok 6 - module_unload # SKIP module not loaded"
else
	R6=""
	if ! rmmod $MODNAME > /tmp/rmmod.out 2>&1; then
		R6="rmmod failed: $(head -n 1 /tmp/rmmod.out)"
	elif [ -e /sys/module/$MODNAME ]; then
		R6="/sys/module/$MODNAME still present"
	elif [ -r /proc/slabinfo ] && grep -q '^slabconv_uc ' /proc/slabinfo; then
		R6="slabconv_uc still in /proc/slabinfo after rmmod"
	else
		# Only reports that are new since test 2.
		ERR=$(slab_reports "$SEEN" | head -n 1)
		[ -n "$ERR" ] && R6="slab report in dmesg: $ERR"
	fi
	if [ -z "$R6" ]; then ktap "ok 6 - module_unload"; else ktap "not ok 6 - module_unload # $R6"; fi
fi

# ---- 7: the module's deliberate KASAN reports -----------------------------------
# The module announces "# kasan: expect N reports on CACHE, kunit K" (only
# under CONFIG_KASAN) and brackets each bad access with kernel lines
# "slabconv-expect: begin kasan TYPE CACHE" / "slabconv-expect: end kasan".
# Every bracket must hold a "BUG: KASAN: TYPE in" report whose object
# "belongs to the cache CACHE", and no KASAN report of another type.  (A
# KASAN report outside the brackets is the host's console scanner's to fail.)
KASAN_EXPECT=$(sed -n 's/^# kasan: expect \([0-9][0-9]*\) reports on .*/\1/p' /tmp/mod.ktap | head -n 1)
KASAN_KUNIT=$(sed -n 's/^# kasan: expect .*, kunit \([01]\)$/\1/p' /tmp/mod.ktap | head -n 1)
KASAN_KERNEL=0
if [ -n "$KASAN_EXPECT" ] || dmesg | grep -q 'KernelAddressSanitizer initialized'; then
	KASAN_KERNEL=1
fi
if [ "$KASAN_KERNEL" = 0 ]; then
	ktap "ok 7 - kasan_slab_reports # SKIP CONFIG_KASAN is not set"
elif [ -z "$KASAN_EXPECT" ]; then
	ktap "not ok 7 - kasan_slab_reports # KASAN kernel, but the module announced no expected reports"
else
	dmesg | sed 's/^\[[ 0-9.]*\] //' | awk '
		/^slabconv-expect: begin kasan / {
			if (open) print "FAIL bracket " n " (" type ") has no end"
			open = 1; n++; type = $4; cache = $5; rep = 0; ok = 0; bad = ""; next
		}
		/^slabconv-expect: end kasan/ {
			if (!open) { print "FAIL an end without a begin"; next }
			open = 0
			if (bad != "") print "FAIL " type ": " bad
			else if (ok) print "OK " type " " cache
			else print "FAIL " type ": no KASAN " type " report on an object of cache " cache
			next
		}
		open && /BUG: KASAN: / {
			t = $0; sub(/.*BUG: KASAN: /, "", t); sub(/ .*/, "", t)
			if (t == type) rep = 1
			else if (bad == "") bad = "a KASAN " t " report"
			next
		}
		open && rep && /which belongs to the cache / {
			c = $0; sub(/.*belongs to the cache /, "", c); sub(/ .*/, "", c)
			if (c == cache) ok = 1
			else if (bad == "") bad = "the report names cache " c
			rep = 0
		}
		END { if (open) print "FAIL bracket " n " (" type ") has no end" }' > /tmp/kasan.res
	NOK=$(grep -c '^OK ' /tmp/kasan.res)
	R7=$(sed -n 's/^FAIL //p' /tmp/kasan.res | head -n 1)
	ktap "# KASAN reports in their brackets: $NOK of $KASAN_EXPECT expected"
	while read -r w t c; do
		[ "$w" = OK ] && ktap "# $t on $c reported"
	done < /tmp/kasan.res
	if [ -z "$R7" ] && [ "$NOK" -ne "$KASAN_EXPECT" ]; then
		R7="$NOK of $KASAN_EXPECT expected KASAN reports found"
	fi
	if [ -z "$R7" ]; then ktap "ok 7 - kasan_slab_reports"; else ktap "not ok 7 - kasan_slab_reports # $R7"; fi
fi

# ---- 8: the kernel's KASAN KUnit suite -------------------------------------------
# Built in, KUnit's executor runs it before /init: "    # Subtest: kasan",
# "    1..N", "    ok I - case" ... and "ok M - kasan" in dmesg (6.1 and
# later: "ok I case", "ok M kasan", KTAP's optional dash left out; the KASAN
# reports it provokes are interleaved; only KTAP-shaped lines are kept).
# kunit_lift SUITE: the suite's lines from a log on stdin, one indent
# level removed, and "RESULT <its result line>".
kunit_lift() {
	sed 's/^\[[ 0-9.]*\] //' | awk -v s="$1" '
		!on && $0 == "    # Subtest: " s { on = 1 }
		on && ($0 ~ "^(not )?ok [0-9]+ (- )?" s "$") { print "RESULT " $0; exit }
		on && /^    (# |ok |not ok |1\.\.)/ { print substr($0, 5) }'
}
# kunit_nest N NAME FILE: nest the suite lifted into FILE as test N NAME.
kunit_nest() {
	grep -v '^RESULT ' "$3" > /tmp/kunit.ktap
	SUITE=$(sed -n 's/^RESULT //p' "$3")
	PLAN=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' /tmp/kunit.ktap | head -n 1)
	NRES=$(grep -cE '^(not )?ok [0-9]+' /tmp/kunit.ktap)
	NFAIL=$(grep -c '^not ok ' /tmp/kunit.ktap)
	RK=""
	if [ -z "$SUITE" ]; then
		RK="the suite has no result line (truncated?)"
	elif [ -z "$PLAN" ]; then
		RK="the suite printed no plan"
	elif [ "$NRES" -ne "$PLAN" ]; then
		RK="$NRES of $PLAN results"
	elif [ "$NFAIL" -ne 0 ]; then
		RK="$NFAIL of $PLAN KUnit cases failed"
	elif [ "${SUITE#ok }" = "$SUITE" ]; then
		RK="suite result: $SUITE"
	fi
	while IFS= read -r line; do
		ktap "    $line"
	done < /tmp/kunit.ktap
	if [ -z "$RK" ]; then ktap "ok $1 - $2"; else ktap "not ok $1 - $2 # $RK"; fi
}
dmesg | kunit_lift kasan > /tmp/kunit.out
if [ ! -s /tmp/kunit.out ]; then
	if [ "$KASAN_KUNIT" = 1 ]; then
		ktap "not ok 8 - kasan_kunit # CONFIG_KASAN_KUNIT_TEST=y but no KUnit suite 'kasan' in dmesg"
	elif [ "$KASAN_KERNEL" = 1 ]; then
		ktap "ok 8 - kasan_kunit # SKIP CONFIG_KASAN_KUNIT_TEST is not built in"
	else
		ktap "ok 8 - kasan_kunit # SKIP CONFIG_KASAN is not set"
	fi
else
	kunit_nest 8 kasan_kunit /tmp/kunit.out
fi

# ---- 9: IOMMU --------------------------------------------------------------------
# >>> slabconv-iommu section (boot/README.md, "The IOMMU guest") >>>
# Nested document: 1 dmar_active (AMD: amd_vi_active), 2 disk_dma,
# 3 pagetables (the module slabconv_iommu's own KTAP, nested one level
# deeper), 4 no_dmar_faults (AMD: no_io_page_faults).  The host says what it
# attached (slabconv.iommu=intel|amd, slabconv.iommu_disk= the disk's
# sha256); the module says whether the kernel has CONFIG_INTEL_IOMMU.
# Neither: SKIP.  Either: the IOMMU must be active.
IOMMU_MOD=/lib/slabconv/slabconv_iommu.ko
IOMMU_WANT=$(arg slabconv.iommu)
IOMMU_SHA=$(arg slabconv.iommu_disk)
case ",$(arg intel_iommu)," in
*,strict,*) IOMMU_MODE=strict ;;
*) IOMMU_MODE=lazy ;;
esac
[ "$IOMMU_WANT" = amd ] && IOMMU_MODE=amd
R9=""
: > /tmp/iommu.ktap
isub() { echo "    $*" >> /tmp/iommu.ktap; }
IMOD_CFG=""
if [ -f "$IOMMU_MOD" ]; then
	insmod "$IOMMU_MOD" mode=$IOMMU_MODE > /tmp/iommu-insmod.out 2>&1 ||
		R9="insmod slabconv_iommu failed: $(head -n 1 /tmp/iommu-insmod.out)"
	rmmod slabconv_iommu 2>/dev/null
	dmesg | sed -n 's/^.*slabconv-iommu-ktap: //p' > /tmp/iommu-mod.ktap
	IMOD_CFG=$(sed -n 's/^# slabconv_iommu: config intel \([01]\).*/\1/p' /tmp/iommu-mod.ktap | head -n 1)
else
	R9="$IOMMU_MOD missing from initramfs"
fi
if [ -z "$R9" ] && [ -z "$IOMMU_WANT" ] && [ "$IMOD_CFG" = 0 ]; then
	ktap "ok 9 - iommu # SKIP CONFIG_INTEL_IOMMU is not set and no IOMMU attached"
else
	isub "KTAP version 1"
	isub "# iommu: host attached '${IOMMU_WANT:-nothing}', kernel CONFIG_INTEL_IOMMU ${IMOD_CFG:-?}, mode $IOMMU_MODE"
	isub "1..4"
	# 9.1: DMAR (AMD-Vi) is on, the disk's PCI function is in a
	# DMA-translated group.
	F1=""
	# strict IOTLB invalidation as the kernel announces it: 5.10's Intel
	# driver, and the IOMMU core's policy line from 5.13
	STRICT_SAID='DMAR: Disable batched IOTLB flush|TLB invalidation policy: strict mode'
	T1=dmar_active T4=no_dmar_faults
	[ "$IOMMU_MODE" = amd ] && T1=amd_vi_active T4=no_io_page_faults
	DISKDEV=$(readlink -f /sys/block/vda/device 2>/dev/null)   # .../0000:00:0N.0/virtioN
	PCIDEV=${DISKDEV%/*}
	GROUP=""
	[ -n "$PCIDEV" ] && [ -e "$PCIDEV/iommu_group" ] && GROUP=$(readlink -f "$PCIDEV/iommu_group")
	GTYPE=$(cat "$GROUP/type" 2>/dev/null)
	if [ "$IOMMU_MODE" = amd ]; then
		if ! ls /sys/class/iommu 2>/dev/null | grep -q '^ivhd'; then
			F1="no /sys/class/iommu/ivhd* (AMD-Vi not active)"
		elif ! dmesg | grep -qE 'AMD-Vi: (Found IOMMU|Extended features)'; then
			# 5.10, 6.1: "Found IOMMU at ..."; 6.12: "Extended features (...)"
			F1="dmesg lacks 'AMD-Vi: Found IOMMU' and 'AMD-Vi: Extended features'"
		fi
	elif ! ls /sys/class/iommu 2>/dev/null | grep -q '^dmar'; then
		F1="no /sys/class/iommu/dmar* (DMAR not active)"
	elif ! dmesg | grep -q 'DMAR: Intel(R) Virtualization Technology for Directed I/O'; then
		F1="dmesg lacks 'Intel(R) Virtualization Technology for Directed I/O' (translation not enabled)"
	fi
	if [ -n "$F1" ]; then
		:
	elif [ -z "$DISKDEV" ] || [ ! -e /sys/block/vda ]; then
		F1="no virtio disk /sys/block/vda"
	elif [ -z "$GROUP" ] || [ ! -d "$GROUP" ]; then
		F1="${PCIDEV##*/} (the disk) is in no IOMMU group"
	elif [ -n "$GTYPE" ] && [ "$GTYPE" != DMA ] && [ "$GTYPE" != DMA-FQ ]; then
		# DMA-FQ: the lazy (flush queue) DMA domain type from 5.15
		F1="${PCIDEV##*/}'s IOMMU group ${GROUP##*/} has type $GTYPE, not DMA or DMA-FQ"
	elif [ "$IOMMU_MODE" = strict ] && [ "$GTYPE" = DMA-FQ ]; then
		F1="intel_iommu=...,strict but ${PCIDEV##*/}'s IOMMU group has the lazy type DMA-FQ"
	elif [ "$IOMMU_MODE" = strict ] && ! dmesg | grep -qE "$STRICT_SAID"; then
		F1="intel_iommu=...,strict but dmesg lacks 'Disable batched IOTLB flush' (5.10) and 'TLB invalidation policy: strict mode' (5.13+)"
	elif [ "$IOMMU_MODE" = lazy ] && dmesg | grep -qE "$STRICT_SAID"; then
		F1="lazy mode expected but the kernel says strict: $(dmesg | grep -E "$STRICT_SAID" | head -n 1)"
	fi
	isub "# disk ${PCIDEV##*/}, iommu group ${GROUP##*/} type ${GTYPE:-?}, $(ls /sys/class/iommu 2>/dev/null | tr '\n' ' ')"
	if [ -z "$F1" ]; then isub "ok 1 - $T1"; else isub "not ok 1 - $T1 # $F1"; R9="$T1 failed"; fi
	# 9.2: DMA through the IOMMU: three O_DIRECT reads of the whole disk
	# (each one DMA from the device, no page cache) match the host's sha256.
	F2=""
	if [ -z "$IOMMU_SHA" ]; then
		F2="no slabconv.iommu_disk= checksum on the command line"
	elif [ ! -b /dev/vda ]; then
		F2="no /dev/vda"
	else
		for i in 1 2 3; do
			GOT=$(dd if=/dev/vda bs=65536 iflag=direct 2>/tmp/dd.err | sha256sum | cut -d' ' -f1)
			if [ "$GOT" != "$IOMMU_SHA" ]; then
				F2="read $i of /dev/vda: sha256 $GOT, host's $IOMMU_SHA ($(tail -n 1 /tmp/dd.err))"
				break
			fi
		done
		isub "# /dev/vda: $(($(cat /sys/block/vda/size) / 2)) KiB read 3 times with O_DIRECT, sha256 ${GOT:-?}"
	fi
	if [ -z "$F2" ]; then isub "ok 2 - disk_dma"; else isub "not ok 2 - disk_dma # $F2"; R9="${R9:-disk_dma failed}"; fi
	# 9.3: the module's page-table checks.
	PLAN=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' /tmp/iommu-mod.ktap | head -n 1)
	NRES=$(grep -cE '^(not )?ok [0-9]+' /tmp/iommu-mod.ktap)
	NFAIL=$(grep -c '^not ok ' /tmp/iommu-mod.ktap)
	F3=""
	if [ ! -s /tmp/iommu-mod.ktap ]; then F3="slabconv_iommu printed nothing"
	elif [ -z "$PLAN" ]; then F3="slabconv_iommu printed no plan"
	elif [ "$NRES" -ne "$PLAN" ]; then F3="slabconv_iommu reported $NRES of $PLAN results"
	elif [ "$NFAIL" -ne 0 ]; then F3="$NFAIL of $PLAN slabconv_iommu cases failed: $(sed -n 's/^not ok [0-9]* - //p' /tmp/iommu-mod.ktap | head -n 1)"
	fi
	while IFS= read -r line; do isub "    $line"; done < /tmp/iommu-mod.ktap
	if [ -z "$F3" ]; then isub "ok 3 - pagetables"; else isub "not ok 3 - pagetables # $F3"; R9="${R9:-pagetables failed}"; fi
	# 9.4: no DMA remapping fault was reported.
	FAULT=$(dmesg | grep -E 'DMAR: DRHD: handling fault|DMAR: \[(DMA Read|DMA Write|INTR-REMAP)\]|IO_PAGE_FAULT|AMD-Vi: Event logged' | head -n 1 | sed 's/^\[[ 0-9.]*\] //')
	if [ -z "$FAULT" ]; then isub "ok 4 - $T4"; else isub "not ok 4 - $T4 # $FAULT"; R9="${R9:-$T4 failed}"; fi
	while IFS= read -r line; do ktap "$line"; done < /tmp/iommu.ktap
	if [ -z "$R9" ]; then ktap "ok 9 - iommu"; else ktap "not ok 9 - iommu # $R9"; fi
fi
# <<< slabconv-iommu section <<<

# ---- 10: fault injection -----------------------------------------------------------
# >>> slabconv-faultinj section (boot/README.md, "Fault injection") >>>
# Nested document: 1 slabconv_faultinj (the module's own KTAP, nested one
# level deeper), 2 injected_failures (the fault attributes' counters against
# the module's NULL returns), 3 oom_report (the allocator's report of the
# one failure without __GFP_NOWARN names the cache), 4 caches_after (SLUB
# validate on the module's caches, their slab orders, no slab report, rmmod).
#
# Both attributes are task-filtered: only a task whose make_it_fail is set
# (/proc/<pid>/make-it-fail; the module sets its own around the allocations
# that must fail) sees failures.  The task filter is set first and the
# probability last, and disarming drops the probability first, so there is
# no moment at which every task's allocations fail.  fail_page_alloc:
# min-order 0 (the default 1 spares order-0 slabs), ignore-gfp-wait N (the
# default spares GFP_KERNEL), ignore-gfp-highmem N, times FI_TIMES (what is
# left of it counts the injected failures), verbose 1 (a console line per
# failure, no stack dump).  failslab: the same, cache-filter N (every cache
# of the marked task).  fail_page_alloc is armed for insmod (the page phase
# runs at module init), then disarmed and failslab armed for the failslab
# phase (a write to the module's run parameter).
FI_MOD=/lib/slabconv/slabconv_faultinj.ko
FI_NAME=slabconv_faultinj
DBG=/sys/kernel/debug
FPA=$DBG/fail_page_alloc
FSL=$DBG/failslab
FI_TIMES=100000
FI_NOARM=0
[ "$(arg slabconv.faultinj)" = noarm ] && FI_NOARM=1
mount -t debugfs debugfs $DBG 2>/dev/null
# fi_set DIR KNOB=VALUE...: write each; on a failed write print its knob, return 1.
fi_set() {
	fd=$1
	shift
	for kv in "$@"; do
		echo "${kv#*=}" > "$fd/${kv%%=*}" 2>/dev/null || { echo "${kv%%=*}"; return 1; }
	done
}
fi_disarm() { fi_set "$1" probability=0 times=0 task-filter=N > /dev/null; }
fi_left() { cat "$1/times" 2>/dev/null; }
SEEN10=$(slab_reports | wc -l)
R10=""
S10=""
FI_PAGE=""
FI_RUN=failslab-unarmed
FI_PAGE_LEFT=""
FI_SLAB_LEFT=""
FI_LOADED=0
: > /tmp/fi.ktap
fsub() { echo "    $*" >> /tmp/fi.ktap; }
if [ -d $FPA ] && [ "$FI_NOARM" = 0 ]; then
	BAD=$(fi_set $FPA task-filter=Y times=$FI_TIMES space=0 interval=1 verbose=1 \
		min-order=0 ignore-gfp-wait=N ignore-gfp-highmem=N probability=100)
	if [ -z "$BAD" ]; then FI_PAGE=page; else R10="cannot write $FPA/$BAD"; fi
fi
[ "$FI_NOARM" = 1 ] && FI_PAGE=page     # planted: claims what it did not do
if [ ! -f "$FI_MOD" ]; then
	R10="$FI_MOD missing from initramfs"
else
	if insmod "$FI_MOD" armed=$FI_PAGE > /tmp/fi-insmod.out 2>&1; then
		FI_LOADED=1
	else
		R10="insmod $FI_NAME failed: $(head -n 1 /tmp/fi-insmod.out)"
	fi
	[ "$FI_PAGE" = page ] && [ "$FI_NOARM" = 0 ] && FI_PAGE_LEFT=$(fi_left $FPA)
	[ -d $FPA ] && fi_disarm $FPA
	if [ -d $FSL ] && [ "$FI_NOARM" = 0 ]; then
		BAD=$(fi_set $FSL task-filter=Y times=$FI_TIMES space=0 interval=1 verbose=1 \
			ignore-gfp-wait=N cache-filter=N probability=100)
		if [ -z "$BAD" ]; then FI_RUN=failslab; else R10=${R10:-"cannot write $FSL/$BAD"}; fi
	fi
	[ "$FI_NOARM" = 1 ] && FI_RUN=failslab
	if [ "$FI_LOADED" = 1 ] && ! echo $FI_RUN > /sys/module/$FI_NAME/parameters/run 2>/tmp/fi-run.err; then
		R10=${R10:-"the failslab phase did not run: $(head -n 1 /tmp/fi-run.err)"}
	fi
	[ "$FI_RUN" = failslab ] && [ "$FI_NOARM" = 0 ] && FI_SLAB_LEFT=$(fi_left $FSL)
	[ -d $FSL ] && fi_disarm $FSL
fi
dmesg | sed -n 's/^.*slabconv-fi-ktap: //p' | grep -v "^# $FI_NAME: unloaded" > /tmp/fi-mod.ktap
FI_CFG=$(sed -n 's/^# faultinj: allocator .*, fail_page_alloc \([01]\), failslab \([01]\),.*/\1\2/p' /tmp/fi-mod.ktap | head -n 1)
FI_OOM=$(sed -n 's/^# faultinj: allocator .*, oom_report \([01]\),.*/\1/p' /tmp/fi-mod.ktap | head -n 1)
if [ -z "$R10" ] && [ "$FI_CFG" = 00 ]; then
	S10="CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAILSLAB are not set"
	[ "$FI_LOADED" = 1 ] && rmmod $FI_NAME 2>/dev/null
	ktap "ok 10 - fault_injection # SKIP $S10"
else
	fsub "KTAP version 1"
	fsub "# fault_injection: allocator $ALLOC, fail_page_alloc ${FI_CFG%?} failslab ${FI_CFG#?} (module), debugfs $( [ -d $FPA ] && echo yes || echo no ), armed: ${FI_PAGE:-no} / $FI_RUN"
	fsub "1..4"
	# 10.1: the module's cases.
	PLAN=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' /tmp/fi-mod.ktap | head -n 1)
	NRES=$(grep -cE '^(not )?ok [0-9]+' /tmp/fi-mod.ktap)
	NFAIL=$(grep -c '^not ok ' /tmp/fi-mod.ktap)
	F1=""
	if [ ! -s /tmp/fi-mod.ktap ]; then F1="$FI_NAME printed nothing"
	elif [ -z "$PLAN" ]; then F1="$FI_NAME printed no plan"
	elif [ "$NRES" -ne "$PLAN" ]; then F1="$FI_NAME reported $NRES of $PLAN results"
	elif [ "$NFAIL" -ne 0 ]; then F1="$NFAIL of $PLAN $FI_NAME cases failed: $(sed -n 's/^not ok [0-9]* - //p' /tmp/fi-mod.ktap | head -n 1)"
	fi
	while IFS= read -r line; do fsub "    $line"; done < /tmp/fi-mod.ktap
	if [ -z "$F1" ]; then fsub "ok 1 - $FI_NAME"; else fsub "not ok 1 - $FI_NAME # $F1"; R10=${R10:-"$FI_NAME failed"}; fi
	# 10.2: injected failures, from the attributes' own counters.  Every
	# NULL of the page phase took at least one injected page failure (SLUB:
	# the high-order attempt and the fallback), every NULL of the failslab
	# phase exactly one should_failslab().
	F2=""
	S2=""
	NP=$(sed -n 's/^# faultinj: NULL returns: \([0-9]*\) under fail_page_alloc, \([0-9]*\) under failslab$/\1/p' /tmp/fi-mod.ktap | head -n 1)
	NS=$(sed -n 's/^# faultinj: NULL returns: \([0-9]*\) under fail_page_alloc, \([0-9]*\) under failslab$/\2/p' /tmp/fi-mod.ktap | head -n 1)
	IP=""
	IS=""
	[ -n "$FI_PAGE_LEFT" ] && IP=$((FI_TIMES - FI_PAGE_LEFT))
	[ -n "$FI_SLAB_LEFT" ] && IS=$((FI_TIMES - FI_SLAB_LEFT))
	fsub "# fail_page_alloc injected ${IP:-?} failures, the module saw ${NP:-?} NULL returns; failslab injected ${IS:-?}, the module saw ${NS:-?}"
	if [ "$FI_NOARM" = 1 ]; then
		S2="slabconv.faultinj=noarm: nothing was armed"
	elif [ -z "$NP" ] || [ -z "$NS" ]; then
		F2="the module printed no NULL counts"
	elif [ "${FI_CFG%?}" = 1 ] && [ -z "$IP" ]; then
		F2="no fail_page_alloc counter (not armed)"
	elif [ -n "$IP" ] && [ "$NP" -eq 0 ]; then
		F2="no allocation returned NULL in the page phase"
	elif [ -n "$IP" ] && [ "$IP" -lt "$NP" ]; then
		F2="fail_page_alloc injected $IP failures but $NP allocations returned NULL"
	elif [ -n "$IS" ] && [ "$IS" -ne "$NS" ]; then
		F2="failslab injected $IS failures but $NS allocations returned NULL"
	elif [ -n "$IS" ] && [ "$NS" -eq 0 ]; then
		F2="no allocation returned NULL in the failslab phase"
	fi
	if [ -n "$F2" ]; then fsub "not ok 2 - injected_failures # $F2"; R10=${R10:-"injected_failures failed"}
	elif [ -n "$S2" ]; then fsub "ok 2 - injected_failures # SKIP $S2"
	else fsub "ok 2 - injected_failures"; fi
	# 10.3: the report of the failure without __GFP_NOWARN, inside the
	# module's bracket (the host's console scanner checks it too).
	F3=""
	OOMC=$(dmesg | sed -n 's/^.*slabconv-expect: begin oom nomem \([^ ]*\)$/\1/p' | head -n 1)
	if [ "$FI_OOM" != 1 ]; then
		fsub "ok 3 - oom_report # SKIP $ALLOC prints no out-of-memory report for a slab (SLUB without SLUB_DEBUG, SLAB without DEBUG_SLAB, SLOB)"
	else
		dmesg | sed 's/^\[[ 0-9.]*\] //' | awk -v c="$OOMC" '
			/^slabconv-expect: begin oom / { on = 1; next }
			/^slabconv-expect: end oom/ { on = 0; next }
			on && /SL[AU]B: Unable to allocate memory on (node|CPU) / { rep++ }
			on && rep && index($0, "cache: " c ",") { named++ }
			END { print rep + 0, named + 0 }' > /tmp/fi-oom.res
		read -r OOMR OOMN < /tmp/fi-oom.res
		fsub "# $OOMR out-of-memory report(s) in the bracket, $OOMN naming ${OOMC:-?}"
		if [ -z "$OOMC" ]; then F3="the module printed no bracket"
		elif [ "$FI_NOARM" = 1 ]; then F3="nothing failed (slabconv.faultinj=noarm)"
		elif [ "${OOMR:-0}" -eq 0 ]; then F3="no 'Unable to allocate memory on node' report in the bracket"
		elif [ "${OOMN:-0}" -eq 0 ]; then F3="the report does not name the cache $OOMC"
		fi
		if [ -z "$F3" ]; then fsub "ok 3 - oom_report"; else fsub "not ok 3 - oom_report # $F3"; R10=${R10:-"oom_report failed"}; fi
	fi
	# 10.4: the module's caches afterwards.
	F4=""
	NV=0
	if [ -d /sys/kernel/slab ]; then
		ORDERS=""
		for d in /sys/kernel/slab/slabconv_fi_*; do
			[ -e "$d" ] || continue
			[ -L "$d" ] && continue
			c=${d##*/}
			o=$(cat "$d/order" 2>/dev/null)
			fsub "# $c: order ${o:-?}, $(cat "$d/objs_per_slab" 2>/dev/null) objects per slab, $(cut -d' ' -f1 "$d/objects" 2>/dev/null) objects, $(cut -d' ' -f1 "$d/slabs" 2>/dev/null) slabs"
			case " $ORDERS " in *" $o "*) ;; *) ORDERS="$ORDERS $o" ;; esac
			if [ -e "$d/validate" ]; then
				usleep 20000
				if echo 1 > "$d/validate" 2>/dev/null; then NV=$((NV + 1))
				elif [ "$VALIDATE_DEBUG_ONLY" = 1 ] && [ "$(cat "$d/sanity_checks" 2>/dev/null)" = 0 ]; then :
				else F4="validate write failed for $c"
				fi
			fi
		done
		fsub "# validated $NV of the module's caches; slab orders:$ORDERS"
	fi
	ERR=$(slab_reports "$SEEN10" | head -n 1)
	[ -z "$F4" ] && [ -n "$ERR" ] && F4="slab report in dmesg: $ERR"
	if [ "$FI_LOADED" = 1 ]; then
		if ! rmmod $FI_NAME > /tmp/fi-rmmod.out 2>&1; then
			F4=${F4:-"rmmod $FI_NAME failed: $(head -n 1 /tmp/fi-rmmod.out)"}
		elif ls -d /sys/kernel/slab/slabconv_fi_* > /dev/null 2>&1 ||
		     { [ -r /proc/slabinfo ] && grep -q '^slabconv_fi_' /proc/slabinfo; }; then
			F4=${F4:-"slabconv_fi_ caches still present after rmmod"}
		else
			ERR=$(slab_reports "$SEEN10" | head -n 1)
			[ -n "$ERR" ] && F4=${F4:-"slab report in dmesg: $ERR"}
		fi
	else
		F4=${F4:-"module not loaded"}
	fi
	if [ -z "$F4" ]; then fsub "ok 4 - caches_after"; else fsub "not ok 4 - caches_after # $F4"; R10=${R10:-"caches_after failed"}; fi
	while IFS= read -r line; do ktap "$line"; done < /tmp/fi.ktap
	if [ -z "$R10" ]; then ktap "ok 10 - fault_injection"; else ktap "not ok 10 - fault_injection # $R10"; fi
fi
# <<< slabconv-faultinj section <<<

# ---- 11: lib/test_meminit.c ----------------------------------------------------------
# Built in, it runs at boot and prints, per function, "all N tests in FN
# passed" or "FN failed F out of N times", then "all N tests passed!" or
# "failures: F out of N" (read at the start of init, /tmp/boot-meminit.log).
# Its checks expect every new page and object zeroed (init_on_alloc, the
# kernels here have it on by default).  Slab poisoning takes precedence over
# init_on_alloc (slab_want_init_on_alloc(): a SLAB_POISON cache is zeroed
# only for __GFP_ZERO): SLUB with slub_debug=P says so at boot ("mem
# auto-init: SLAB_POISON will take precedence"), SLAB with DEBUG_SLAB poisons
# every cache but SLAB_TYPESAFE_BY_RCU ones, and 5.10's SLOB zeroes its
# blocks only for __GFP_ZERO.  There test_kvmalloc (kmalloc objects) and
# test_kmemcache (fresh caches without __GFP_ZERO) cannot pass: a failure of
# theirs is a SKIP that names the reason and quotes the kernel's line;
# test_pages and test_rcu_persistent must pass everywhere.
MI_WHY=""
if grep -q '^mem auto-init: SLAB_POISON will take precedence' /tmp/boot-meminit.log; then
	MI_WHY="slab poisoning (slub_debug=P) takes precedence over init_on_alloc: poisoned objects are not zeroed"
elif [ "$ALLOC" = SLAB ] && [ "$(sed -n 's/^# faultinj: .*, debug_slab \([01]\),.*/\1/p' /tmp/fi-mod.ktap | head -n 1)" = 1 ]; then
	MI_WHY="DEBUG_SLAB poisons every cache but SLAB_TYPESAFE_BY_RCU ones, which takes precedence over init_on_alloc"
elif [ "$ALLOC" = SLOB ]; then
	MI_WHY="SLOB zeroes its blocks only for __GFP_ZERO (slob_alloc() knows no init_on_alloc or init_on_free)"
fi
MI_BUILTIN=$(sed -n 's/^# faultinj: .*, test_meminit \([01]\),.*/\1/p' /tmp/fi-mod.ktap | head -n 1)
if ! grep -q '^test_meminit: ' /tmp/boot-meminit.log; then
	if [ "$MI_BUILTIN" = 1 ]; then
		ktap "not ok 11 - test_meminit # CONFIG_TEST_MEMINIT=y but no test_meminit lines in dmesg"
	else
		ktap "ok 11 - test_meminit # SKIP CONFIG_TEST_MEMINIT is not built in"
	fi
else
	R11=""
	MI_TOTAL=$(sed -n -e 's/^test_meminit: \(all [0-9]* tests passed!\)$/\1/p' \
		-e 's/^test_meminit: \(failures: [0-9]* out of [0-9]*\)$/\1/p' /tmp/boot-meminit.log | head -n 1)
	ktap "    KTAP version 1"
	ktap "    # Subtest: test_meminit"
	ktap "    # $(grep '^mem auto-init: ' /tmp/boot-meminit.log | tr '\n' ' ')"
	ktap "    # test_meminit: ${MI_TOTAL:-no total line}"
	ktap "    1..4"
	i=0
	for fn in test_pages test_kvmalloc test_kmemcache test_rcu_persistent; do
		i=$((i + 1))
		OKL=$(grep -E "^test_meminit: all [0-9]+ tests in $fn passed$" /tmp/boot-meminit.log | head -n 1)
		BADL=$(sed -n "s/^test_meminit: $fn failed \([0-9]* out of [0-9]* times\)$/\1/p" /tmp/boot-meminit.log | head -n 1)
		if [ -n "$OKL" ]; then
			ktap "    ok $i - $fn"
		elif [ -n "$BADL" ] && [ -n "$MI_WHY" ] && { [ $fn = test_kvmalloc ] || [ $fn = test_kmemcache ]; }; then
			ktap "    ok $i - $fn # SKIP $MI_WHY (test_meminit: failed $BADL)"
		elif [ -n "$BADL" ]; then
			ktap "    not ok $i - $fn # failed $BADL"
			R11=${R11:-"$fn failed $BADL"}
		else
			ktap "    not ok $i - $fn # no result line"
			R11=${R11:-"$fn has no result line"}
		fi
	done
	if [ -z "$R11" ]; then ktap "ok 11 - test_meminit"; else ktap "not ok 11 - test_meminit # $R11"; fi
fi

# ---- 12: the kernel's SLUB KUnit suite ------------------------------------------------
# lib/slub_kunit.c (Linux 5.14 and later; the slub configuration builds it in
# on 6.1 and 6.12: verify/configs/<version>/slub-kunit.config), suite
# "slub_test": it corrupts objects of its own caches and counts SLUB's
# reports of them (which KUnit keeps off the console).  Run before /init,
# read from the boot log init saved first.
SLUB_KUNIT=$(sed -n 's/^# faultinj: .*, slub_kunit \([01]\),.*/\1/p' /tmp/fi-mod.ktap | head -n 1)
kunit_lift slub_test < /tmp/boot-dmesg.log > /tmp/slub-kunit.out
if [ -s /tmp/slub-kunit.out ]; then
	kunit_nest 12 slub_kunit /tmp/slub-kunit.out
elif [ "$SLUB_KUNIT" = 1 ]; then
	ktap "not ok 12 - slub_kunit # CONFIG_SLUB_KUNIT_TEST=y but no KUnit suite 'slub_test' in the boot log"
elif [ "$KMAJ" -lt 5 ] || { [ "$KMAJ" -eq 5 ] && [ "$KMIN" -lt 14 ]; }; then
	ktap "ok 12 - slub_kunit # SKIP lib/slub_kunit.c came in Linux 5.14 (this is $KV)"
else
	ktap "ok 12 - slub_kunit # SKIP CONFIG_SLUB_KUNIT_TEST is not built in"
fi

finish "$(uptime_s)"
