# slabconv: regenerate the struct slab conversion series from SmPL rules,
# build it, verify it and boot it.  `make help` lists the targets.
#
#   KERNEL=<version>  packaged kernel: 5.10 (default), any `./slabconv versions` lists, latest
#   TREE=<dir>        a kernel tree of yours instead (never modified)
#   SLABCONV_CACHE    where trees, builds and logs go (default ~/.cache/slabconv)
#   CONFIG=<a,b>      kernel configs to build and boot (verify/configs.toml; default slub,slab,slob;
#                     boot and all: slub,slab,slob,slub-i386); CONFIG=+kasan / +iommu adds to it
#   BISECT=<a,b>      configs in which `make verify` builds every patch on its own
#                     (default slub,slub-nodebug,slab,slob; also kasan, mm-users, iommu; none)
#   RUNTIME=<a,b>     per-patch configs whose every patch's kernel `make verify` also boots
#                     with the in-guest tests (default slub,slab; none)
#   JOBS=<n>          make -j of every kernel build (default: nproc; with a farm, sized to it)
#   DISTCC=<h1,h2>    build on a distcc farm (sets DISTCC_HOSTS; an exported DISTCC_HOSTS works
#                     too): host[:port][/slots] entries, e.g. DISTCC=build1/8,build2/8
#   STRICT=1          `make residue` fails when a use of struct page is not allowed
#   OUTPUT=<dir>      where `make review` writes review.html and review.txt
#                     (default $SLABCONV_CACHE/review/KERNEL/)
#   SERIES=<dir>      `make review`, `make mail`, `make attribute`: this series directory
#                     (default generated-patches/KERNEL/)
#   OLD=<rev|dir>     `make range-diff`: the old series (default: the one committed at HEAD)
#   NEW=<dir>         `make range-diff`: the new series (default: the working copy's)
#   OLD_KERNEL=<v>    `make range-diff`: the old series is this kernel's (e.g. 6.1)
#   OUT=<file>        `make range-diff`: write the range-diff there (default: stdout)

KERNEL ?= 5.10
comma := ,
DISTCC ?=
ifneq ($(strip $(DISTCC)),)
export DISTCC_HOSTS := $(subst $(comma), ,$(DISTCC))
endif
# with a farm, kbuild sizes -j to it (distcc -j) unless JOBS= is given
JOBS ?= $(if $(strip $(DISTCC_HOSTS)),,$(shell nproc 2>/dev/null || echo 2))
export SLABCONV_JOBS := $(JOBS)
# Debian packages per target (scripts/install-deps.sh groups); distcc with a farm
DEPS := sh scripts/install-deps.sh
FARM := $(if $(strip $(DISTCC_HOSTS)),distcc)
TREE ?=
CONFIG ?=
BISECT ?=
RUNTIME ?=
OUTPUT ?=
SERIES ?=
PY := /usr/bin/python3
SLABCONV := $(PY) $(CURDIR)/slabconv
SRC_ARGS := --kernel $(KERNEL) $(if $(TREE),--tree $(TREE))
CFG_ARGS := $(if $(CONFIG),--config $(CONFIG))

.PHONY: all help deps deps-core deps-build deps-boot deps-test fetch regen verify layout checkpatch residue boot reference bench review range-diff attribute test test-fast

all: deps-boot ## the main job: regen, the checks, slub built and booted; says what is left (make verify, make boot)
	$(SLABCONV) all $(SRC_ARGS) $(CFG_ARGS) $(if $(BISECT),--bisect-configs $(BISECT)) $(if $(RUNTIME),--runtime-configs $(RUNTIME))

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 12

deps: ## install the Debian packages that are missing, every group (apt)
	@$(DEPS) all

deps-core: ## install what regen, review, mail, checkpatch, residue need (no compiler, QEMU, browser)
	@$(DEPS) core

deps-build: ## core + what kernel builds and their warning gates need (+ distcc with a farm)
	@$(DEPS) build $(FARM)

deps-boot: ## build + QEMU and the guests' initramfs tools
	@$(DEPS) boot $(FARM)

deps-test: ## everything the test suite needs (every group, pytest, chromium, distcc)
	@$(DEPS) test

fetch: deps-core ## every download a run needs, into the cache: linux-source-KERNEL (unpacked), the i386 guest's busybox
	$(SLABCONV) fetch $(KERNEL) $(if $(TREE),--tree $(TREE))

regen: deps-core ## regenerate the series into generated-patches/KERNEL/ (PREFIX="RFC PATCH 5.10", REROLL=2)
	$(SLABCONV) regen $(SRC_ARGS) $(if $(PREFIX),--subject-prefix "$(PREFIX)") $(if $(REROLL),--reroll-count $(REROLL))

verify: deps-boot ## every check: checkpatch, builds + sparse, per-patch builds, field users, residue, layout
	$(SLABCONV) verify $(SRC_ARGS) $(CFG_ARGS) $(if $(BISECT),--bisect-configs $(BISECT)) $(if $(RUNTIME),--runtime-configs $(RUNTIME))

layout: deps-build ## build struct slab's layout asserts: x86_64 and i386, with and without MEMCG
	$(SLABCONV) layout $(SRC_ARGS)

checkpatch: deps-core ## the baseline tree's checkpatch.pl on every patch: fail on an ERROR, list warnings
	$(SLABCONV) checkpatch $(SRC_ARGS)

residue: deps-core ## list the uses of struct page left in the slab code (STRICT=1: fail on any not allowed)
	$(SLABCONV) residue $(SRC_ARGS) $(if $(STRICT),--strict)

boot: deps-boot ## build each config's patched kernel, boot them 2 at a time in QEMU (KTAP, JUnit XML), then the reference run
	$(SLABCONV) boot $(SRC_ARGS) $(CFG_ARGS); s=$$?; \
	$(SLABCONV) reference $(SRC_ARGS) $(CFG_ARGS) && exit $$s

reference: deps-boot ## build the UNPATCHED kernel in each config it has and boot it with the same tests
	$(SLABCONV) reference $(SRC_ARGS) $(CFG_ARGS)

bench: deps-boot ## time regeneration (whole and per entry), build, and boot + tests per guest
	$(SLABCONV) bench $(SRC_ARGS)

review: deps-core ## the review report (HTML + text): each rule beside its hunks, skipped entries, last results
	$(SLABCONV) review $(SRC_ARGS) $(if $(OUTPUT),--output $(OUTPUT)) $(if $(SERIES),--series $(SERIES))

attribute: deps-core ## attribute every hunk to the rule run that made it (each step run alone; the review shows it)
	$(SLABCONV) attribute $(SRC_ARGS) $(if $(SERIES),--series $(SERIES))

range-diff: deps-core ## git range-diff of the series: HEAD's committed one vs the working copy's (OLD=rev|dir NEW=dir OLD_KERNEL=6.1 OUT=file)
	$(SLABCONV) range-diff $(SRC_ARGS) $(if $(OLD),--old $(OLD)) $(if $(NEW),--new $(NEW)) $(if $(OLD_KERNEL),--old-kernel $(OLD_KERNEL)) $(if $(OUT),--output $(OUT))

mail: deps-core ## a mail-ready copy of the series: threaded, Testing section, changelog (PREVIOUS=rev), Cc (CC=1), UNTESTED=1
	$(SLABCONV) mail $(SRC_ARGS) $(if $(OUTPUT),--output $(OUTPUT)) $(if $(SERIES),--series $(SERIES)) $(if $(UNTESTED),--untested) $(if $(PREVIOUS),--previous $(PREVIOUS)) $(if $(CC),--cc-maintainers)

test: deps-test ## the test suite: rule tests, unit tests, end-to-end on 5.10
	$(PY) -m pytest -ra --durations=30 tests

test-fast: deps-test ## the test suite without kernel builds and boots
	$(PY) -m pytest -ra -m "not slow" tests
