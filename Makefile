# usbrig - the one top-level Makefile.
#
#   make              build/usbrig-gadget (and the harness)
#   make check        every test: unit, socket, real usbip tools, sanitizers,
#                     VM (stock kernel, then the patched one: make kernel)
#   make deps         install the Debian packages usbrig needs (as root)
#   make install      PREFIX=/usr/local DESTDIR=
#   make fuzz         libFuzzer on every reader of outside input (clang;
#                     docs/fuzzing.md); make check replays the corpus
#
# Knobs: CC, PKG_CONFIG, CFLAGS, BUILD (output folder), SAN=1 (ASan+UBSan),
# KERNEL_OUT (the patched kernel, default build/kernel whatever BUILD is).

CC ?= cc
PKG_CONFIG ?= pkg-config
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
CFLAGS ?= -O2 -g

WARN := -std=gnu11 -Wall -Wextra -Werror -Wformat=2 -Wvla
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=all
ifeq ($(SAN),1)
CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
endif

EVENT_CFLAGS := $(shell $(PKG_CONFIG) --cflags libevent 2>/dev/null)
EVENT_LIBS := $(shell $(PKG_CONFIG) --libs libevent 2>/dev/null)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
USB_CFLAGS := $(shell $(PKG_CONFIG) --cflags libusb-1.0 2>/dev/null)
USB_LIBS := $(shell $(PKG_CONFIG) --libs libusb-1.0 2>/dev/null)

# One version for every program: the VERSION file.
USBRIG_VERSION := $(shell cat VERSION 2>/dev/null || echo unknown)

ALL_CFLAGS = $(WARN) $(CFLAGS) -MMD -MP -Igadgets $(EVENT_CFLAGS) \
	-DUSBRIG_VERSION='"$(USBRIG_VERSION)"'

# Debian packages: build, test, and the guest (kernel, busybox, usbip tools)
DEB_PACKAGES := gcc make pkg-config libevent-dev libcmocka-dev \
	libusb-1.0-0-dev libpcap-dev tcpdump usbip usb.ids usbutils qemu-system-x86 \
	linux-image-amd64 busybox-static kmod cpio linux-source-6.1 \
	bc bison flex libelf-dev libssl-dev groff-base perl

# ---- gadgets/: the server library and usbrig-gadget ----
GADGET_SRCS := $(filter-out gadgets/main.c,$(wildcard gadgets/*.c gadgets/fn/*.c))
GADGET_OBJS := $(GADGET_SRCS:%.c=$(BUILD)/%.o)
GADGET_LIB := $(BUILD)/libusbrig-gadget.a
GADGET_BIN := $(BUILD)/usbrig-gadget

# ---- gadgets/import/: usbrig-import (dumps in, gadget scripts out) ----
# Its own program: libpcap stays out of the server the guest carries.
IMPORT_SRCS := $(filter-out gadgets/import/main.c,$(wildcard gadgets/import/*.c))
IMPORT_OBJS := $(IMPORT_SRCS:%.c=$(BUILD)/%.o)
IMPORT_LIB := $(BUILD)/libusbrig-import.a
IMPORT_BIN := $(BUILD)/usbrig-import
PCAP_LIBS := -lpcap

# ---- harness/: the host runner and the guest agent ----
# One library per side (all but main.c), as for gadgets/: the programs
# and the unit tests link the same objects.
HOST_SRCS := $(filter-out harness/host/main.c,$(wildcard harness/host/*.c))
# census-probe.sh, the census's guest side, is built into usbrig as a
# C string (census.c writes it out for each census)
CENSUS_PROBE_C := $(BUILD)/gen/census_probe_sh.c
HOST_OBJS := $(HOST_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/census_probe_sh.o
HOST_LIB := $(BUILD)/libusbrig-host.a
HOST_BIN := $(BUILD)/usbrig
AGENT_SRCS := $(filter-out harness/agent/main.c,$(wildcard harness/agent/*.c))
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/%.o)
AGENT_LIB := $(BUILD)/libusbrig-agent.a
AGENT_BIN := $(BUILD)/usbrig-agent
HARNESS_COMMON := $(wildcard harness/common/*.c)
# gadgets/util.c (hex digits) is the one home of what both sides need
HARNESS_COMMON_OBJS := $(HARNESS_COMMON:%.c=$(BUILD)/%.o) $(BUILD)/gadgets/util.o
HARNESS_COMMON_LIB := $(BUILD)/libusbrig-harness.a

# ---- tests ----
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
UNIT_COMMON := $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
UNIT_COMMON_OBJS := $(UNIT_COMMON:%.c=$(BUILD)/%.o)
SOCKET_SRCS := $(wildcard tests/socket/test_*.c)
SOCKET_BINS := $(SOCKET_SRCS:tests/socket/%.c=$(BUILD)/tests/socket/%)
SOCKET_COMMON := $(filter-out $(SOCKET_SRCS),$(wildcard tests/socket/*.c))
SOCKET_COMMON_OBJS := $(SOCKET_COMMON:%.c=$(BUILD)/%.o)
EXAMPLES := $(wildcard gadgets/examples/*.gadget)

.PHONY: all deps check check-unit check-socket check-tools check-asan \
	check-vm check-vm-host check-vm-patched check-examples install clean demo demo-run \
	bench

all: $(GADGET_BIN) $(IMPORT_BIN) $(HOST_BIN) $(AGENT_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(GADGET_LIB): $(GADGET_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(GADGET_BIN): $(BUILD)/gadgets/main.o $(GADGET_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(EVENT_LIBS)

$(IMPORT_LIB): $(IMPORT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(IMPORT_BIN): $(BUILD)/gadgets/import/main.o $(IMPORT_LIB) $(GADGET_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PCAP_LIBS) $(EVENT_LIBS)

$(BUILD)/harness/%.o: harness/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iharness/common $(USB_CFLAGS) -c -o $@ $<

$(CENSUS_PROBE_C): harness/host/census-probe.sh
	@mkdir -p $(dir $@)
	sh -n $<
	{ echo '/* generated from $< by the Makefile */'; \
	  echo 'extern const char census_probe_sh[];'; \
	  echo 'const char census_probe_sh[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } >$@.tmp
	mv $@.tmp $@

$(BUILD)/gen/census_probe_sh.o: $(CENSUS_PROBE_C)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(HOST_LIB): $(HOST_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(AGENT_LIB): $(AGENT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(HARNESS_COMMON_LIB): $(HARNESS_COMMON_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(HOST_BIN): $(BUILD)/harness/host/main.o $(HOST_LIB) $(HARNESS_COMMON_LIB)
	$(CC) $(LDFLAGS) -o $@ $^

$(AGENT_BIN): $(BUILD)/harness/agent/main.o $(AGENT_LIB) $(HARNESS_COMMON_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(USB_LIBS)

$(BUILD)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iharness/common -Iharness/host -Iharness/agent \
		$(CMOCKA_CFLAGS) -c -o $@ $<

# The harness libraries first: an archive only serves what is still
# undefined when the linker reaches it.
$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(UNIT_COMMON_OBJS) \
		$(HOST_LIB) $(AGENT_LIB) $(HARNESS_COMMON_LIB) \
		$(IMPORT_LIB) $(GADGET_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(EVENT_LIBS) $(PCAP_LIBS) \
		$(USB_LIBS)

$(BUILD)/tests/socket/%: $(BUILD)/tests/socket/%.o $(SOCKET_COMMON_OBJS) $(GADGET_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(CMOCKA_LIBS) $(EVENT_LIBS)

deps:
	@missing=; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
			grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "usbrig needs, as root: apt-get install$$missing"; exit 1; \
	fi; \
	echo "deps: installing$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# deps first, then a fresh make: the pkg-config lookups above need the
# packages installed.
check: deps
	$(MAKE) check-unit check-socket check-examples check-tools check-style
	$(MAKE) check-asan check-fuzz check-fuzz-smoke
	$(MAKE) check-vm
	$(MAKE) check-vm-host
	$(MAKE) check-soak check-faults check-load
	$(MAKE) check-census
	$(MAKE) check-fuzz-kernel
	$(MAKE) check-import
	$(MAKE) check-repro
	$(MAKE) kernel
	$(MAKE) check-regressions
	$(MAKE) check-vm-patched

check-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

check-socket: $(GADGET_BIN) $(SOCKET_BINS)
	@set -e; for t in $(SOCKET_BINS); do echo "== $$t"; \
		USBRIG_GADGET=$(GADGET_BIN) $$t; done

check-examples: $(GADGET_BIN)
	$(GADGET_BIN) --check $(EXAMPLES)

check-tools: $(GADGET_BIN) $(IMPORT_BIN) $(HOST_BIN)
	tests/tools/usbip-list.sh $(GADGET_BIN) $(EXAMPLES)
	tests/tools/import-errors.sh $(IMPORT_BIN)
	tests/tools/man-check.sh $(BUILD)

# The unit and socket tests again, built with ASan + UBSan.
check-asan:
	$(MAKE) BUILD=$(BUILD)/asan SAN=1 check-unit check-socket

install: $(GADGET_BIN) $(IMPORT_BIN) $(HOST_BIN) $(AGENT_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/usbrig/examples
	install -m 755 $(GADGET_BIN) $(IMPORT_BIN) $(HOST_BIN) $(AGENT_BIN) \
		$(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(EXAMPLES) $(DESTDIR)$(PREFIX)/share/usbrig/examples/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 docs/man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -m 644 contrib/bash-completion/usbrig \
		contrib/bash-completion/usbrig-gadget \
		contrib/bash-completion/usbrig-import \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -path '$(BUILD)/kernel' -prune -o -type f -name '*.d' -print 2>/dev/null)

# ---- VM suite (harness) ----
# check-vm: every tests/scenarios/*.scenario in QEMU guests (KTAP on
# stdout, JUnit in $(BUILD)/check-vm.xml); demo: the new_id story as a
# transcript; bench: one table of timing figures (below).  USBRIG_FLAGS adds
# options (e.g. USBRIG_FLAGS="--jobs 2" or "--kernel bzImage").
SCENARIOS := $(wildcard tests/scenarios/*.scenario)
DEMO_SCENARIOS := $(wildcard tests/demo/*.scenario)
VM_BINS := $(HOST_BIN) $(AGENT_BIN) $(GADGET_BIN)
# static programs the scenarios copy into the guest with `file`
GUEST_TOOLS := $(BUILD)/tools/testusb $(BUILD)/tools/usb-timing \
	$(BUILD)/tools/pcm-io $(BUILD)/tools/v4l2-grab $(BUILD)/tools/iso-timing
USBRIG_FLAGS ?=

# guest-tools: the programs above, for a CI job that runs usbrig itself
# (a scenario whose tool is missing is skipped, not failed)
.PHONY: guest-tools
guest-tools: $(GUEST_TOOLS)

check-vm: $(VM_BINS) $(GUEST_TOOLS)
	$(HOST_BIN) $(USBRIG_FLAGS) --junit $(BUILD)/check-vm.xml $(SCENARIOS)

# check-vm-host: the same suite with the gadgets served from the host
# (--gadget-on-host), JUnit in $(BUILD)/check-vm-host.xml: the device-time
# scenarios hold in both modes; scenarios whose gadgets need the guest
# (`requires gadget in-guest`) are skipped with the reason.
check-vm-host: $(VM_BINS) $(GUEST_TOOLS)
	$(HOST_BIN) $(USBRIG_FLAGS) --gadget-on-host \
		--junit $(BUILD)/check-vm-host.xml $(SCENARIOS)

# soak: in one boot, SOAK_CYCLES (1000) attach/detach cycles over three
# gadgets (usblcd through new_id, usbhid, cdc_acm bound each time) and as
# many new_id / unbind / remove_id cycles of usblcd; the gadget server's
# descriptors and memory, sampled after 10 cycles and at the end, must not
# grow, and any kernel warning fails it (tests/soak/gen.sh writes the
# scenarios into $(BUILD)/soak/).  About 17 min without KVM.  check-soak
# (in make check): the same with SOAK_CHECK_CYCLES (40).
SOAK_CYCLES ?= 1000
SOAK_CHECK_CYCLES ?= 40

.PHONY: soak check-soak
soak: $(VM_BINS)
	tests/soak/gen.sh $(BUILD)/soak $(SOAK_CYCLES)
	$(HOST_BIN) $(USBRIG_FLAGS) --junit $(BUILD)/soak/soak.xml \
		$(BUILD)/soak/soak-attach.scenario $(BUILD)/soak/soak-newid.scenario

check-soak: $(VM_BINS)
	tests/soak/gen.sh $(BUILD)/soak-check $(SOAK_CHECK_CYCLES)
	$(HOST_BIN) $(USBRIG_FLAGS) --junit $(BUILD)/soak-check/soak.xml \
		$(BUILD)/soak-check/soak-attach.scenario \
		$(BUILD)/soak-check/soak-newid.scenario

# check-faults (in make check): the rig under faults, each followed by a
# good scenario in the same run: usbrig-gadget killed mid-transfer, the
# device's connection cut mid-transfer, a guest panic, a guest that hangs
# without a word, a driver stuck in probe (the kernel's hung-task report),
# a driver's oops in a shell and in the agent's own step.  Each fault must
# fail with its cause, each neighbour pass on an untainted kernel, the
# JUnit file list all fourteen (tests/faults/check.sh).
.PHONY: check-faults
check-faults: $(VM_BINS) $(GUEST_TOOLS)
	tests/faults/check.sh $(HOST_BIN) $(BUILD)/faults

# check-load (in make check): 100 devices at once in one guest, each bound
# (tests/load/load-100-devices.scenario, `gadget ... copies 100`).
.PHONY: check-load
check-load: $(VM_BINS)
	$(HOST_BIN) $(USBRIG_FLAGS) --junit $(BUILD)/check-load.xml \
		tests/load/load-100-devices.scenario

# soak-usbtest: the usbtest scenarios USBTEST_RUNS times in a row (20),
# a boot each, with the kernel's default preemption; stops at the first
# failure or hang (a scenario's timeout fails it).  KTAP per run in
# $(BUILD)/soak-usbtest/.
USBTEST_RUNS ?= 20
USBTEST_SCENARIOS := tests/scenarios/usbtest-zero.scenario \
	tests/scenarios/usbtest-zero-mod63.scenario

.PHONY: soak-usbtest
soak-usbtest: $(VM_BINS) $(GUEST_TOOLS)
	@mkdir -p $(BUILD)/soak-usbtest
	@for i in $$(seq $(USBTEST_RUNS)); do \
		out=$(BUILD)/soak-usbtest/run-$$i.ktap; \
		if ! $(HOST_BIN) $(USBRIG_FLAGS) $(USBTEST_SCENARIOS) >$$out 2>&1; then \
			echo "soak-usbtest: run $$i of $(USBTEST_RUNS) failed, see $$out"; \
			exit 1; \
		fi; \
		echo "soak-usbtest: run $$i of $(USBTEST_RUNS): $$(tail -1 $$out)"; \
	done

# check-vm-patched: the same suite on the patched kernel (`make kernel`
# first: a no-op when it is built), JUnit in $(BUILD)/check-vm-patched.xml;
# then tests/settle/check.sh: an `expect unbound ... for` that may end
# early still fails on a late bind (a deferred probe retried).
# On it every bind and probe error is confirmed by the usb_core
# tracepoints too; scenarios that need what the kernel lacks are skipped
# with the reason, as the stock run skips those that need the patches.
# KERNEL_FLAVOUR=kasan runs it on the KASAN + lockdep build.
PATCHED_KERNEL = $(if $(filter default,$(KERNEL_FLAVOUR)),patched,patched-$(KERNEL_FLAVOUR))

check-vm-patched: kernel $(VM_BINS) $(GUEST_TOOLS)
	USBRIG_KERNEL_DIR=$(abspath $(KERNEL_OUT)) $(HOST_BIN) $(USBRIG_FLAGS) \
		--kernel $(PATCHED_KERNEL) \
		--junit $(BUILD)/check-vm-patched.xml $(SCENARIOS)
	USBRIG_KERNEL_DIR=$(abspath $(KERNEL_OUT)) \
		tests/settle/check.sh $(HOST_BIN) $(BUILD)/settle $(PATCHED_KERNEL)

# check-kernel-tree: --kernel-tree on a tree built as a developer builds
# theirs (tests/kernel-tree/run.sh): Debian's linux-source-$(TREE_KVER)
# without usbrig's patches, USB core, vhci-hcd and some class drivers built
# in (kernel-patch/builtin.config), in an O= object tree under
# build/kernel-tree-$(TREE_KVER)/; the suite on it, JUnit in
# $(BUILD)/check-kernel-tree.xml.  A kernel build first (docs/kernel-patch.md
# has its time): a CI job of its own, not in make check.
TREE_KVER ?= 6.12

.PHONY: check-kernel-tree
check-kernel-tree: $(VM_BINS) $(GUEST_TOOLS)
	@[ -r /usr/src/linux-source-$(TREE_KVER).tar.xz ] || \
		$(MAKE) --no-print-directory deps \
			DEB_PACKAGES=linux-source-$(TREE_KVER)
	BUILD=$(BUILD) tests/kernel-tree/run.sh \
		--source /usr/src/linux-source-$(TREE_KVER).tar.xz \
		--jobs $(KERNEL_JOBS) -- $(USBRIG_FLAGS) \
		--junit $(BUILD)/check-kernel-tree.xml $(SCENARIOS)

demo: deps
	@$(MAKE) --no-print-directory demo-run

demo-run: $(VM_BINS)
	@$(HOST_BIN) $(USBRIG_FLAGS) --transcript $(DEMO_SCENARIOS)

# bench: one table of every figure (tests/bench/table.sh) and the same as
# $(BUILD)/bench.json, for tracking across commits.  Each part runs on its
# own (its output in $(BUILD)/PART.out, shown when it fails) and leaves
# its machine-readable file: bench-suite (the suite in one boot, --bench:
# boot, per scenario, attach->bind and new_id->bind latency),
# bench-zero, bench-urb, bench-load (100 devices, the server's memory),
# bench-repro; bench-census (the whole census, ~15 min) only with
# BENCH_CENSUS=1.  A failed part is "-" in the table and fails the target.
BENCH_CENSUS ?=
BENCH_PARTS := bench-suite bench-suite-ref bench-zero bench-urb bench-load \
	bench-repro \
	$(if $(filter 1,$(BENCH_CENSUS)),bench-census)

bench: $(VM_BINS) $(GUEST_TOOLS)
	@st=0; for t in $(BENCH_PARTS); do \
		$(MAKE) --no-print-directory $$t >$(BUILD)/$$t.out 2>&1 || { \
			tail -20 $(BUILD)/$$t.out; echo "bench: $$t failed"; \
			st=1; }; \
	done; \
	BENCH_CENSUS=$(BENCH_CENSUS) tests/bench/table.sh $(BUILD); exit $$st

.PHONY: bench-suite bench-suite-ref bench-load
bench-suite: $(VM_BINS) $(GUEST_TOOLS)
	@$(HOST_BIN) $(USBRIG_FLAGS) --bench $(SCENARIOS) \
		>$(BUILD)/bench.ktap; st=$$?; \
	grep -E '^# bench:|passed, ' $(BUILD)/bench.ktap; exit $$st

# bench-suite-ref: the suite as it stood when its one-job time was first
# measured (tests/bench/suite-ref.txt, 41 scenarios), so that figure stays
# comparable as scenarios are added
SUITE_REF := $(patsubst %,tests/scenarios/%.scenario,\
	$(shell sed -n '/^[^\#]/p' tests/bench/suite-ref.txt))
bench-suite-ref: $(VM_BINS) $(GUEST_TOOLS)
	@$(HOST_BIN) $(USBRIG_FLAGS) --bench $(SUITE_REF) \
		>$(BUILD)/bench-ref.ktap; st=$$?; \
	grep -E '^# bench: wall|passed, ' $(BUILD)/bench-ref.ktap; exit $$st

bench-load: $(VM_BINS)
	@$(HOST_BIN) $(USBRIG_FLAGS) --bench tests/load/load-100-devices.scenario \
		>$(BUILD)/bench-load.ktap; st=$$?; \
	grep -E '^# bench:|VmRSS|passed, ' $(BUILD)/bench-load.ktap; exit $$st

# ---- patched guest kernel ----
# kernel: Debian's linux-source-6.1 + kernel-patch/series, configured from
# kernel-patch/guest.config -> $(KERNEL_OUT)/bzImage and
# $(KERNEL_OUT)/modules/lib/modules/KVER (KERNEL_FLAVOUR=kasan adds
# kernel-patch/kasan.config -> $(KERNEL_OUT)/kasan/). Incremental; a
# no-op when nothing changed. KERNEL_JOBS: make -j (default: all CPUs).
# KERNEL_OUT is build/kernel for every BUILD: one kernel cache for all
# build folders, where `usbrig --kernel patched` looks.  KVER=6.12: the
# same from Debian's linux-source-6.12 (installed when missing), with
# kernel-patch/6.12/series and guest-6.12.config, into build/kernel-6.12
# (`usbrig --kernel patched-6.12`); docs/kernel-patch.md says what differs.
KERNEL_FLAVOUR ?= default
KERNEL_JOBS ?= $(shell nproc)
KVER ?= 6.1
KERNEL_OUT ?= build/kernel$(if $(filter-out 6.1,$(KVER)),-$(KVER))

.PHONY: kernel kernel-kasan

# which Debian source build.sh patches (its series follows the version)
KERNEL_SRC_ENV = KERNEL_TARBALL=/usr/src/linux-source-$(KVER).tar.xz \
	KERNEL_SRCPKG=linux-source-$(KVER)

kernel:
	@[ -r /usr/src/linux-source-$(KVER).tar.xz ] || \
		$(MAKE) --no-print-directory deps DEB_PACKAGES=linux-source-$(KVER)
	$(KERNEL_SRC_ENV) kernel-patch/build.sh --cache $(KERNEL_OUT) \
		--flavour $(KERNEL_FLAVOUR) --jobs $(KERNEL_JOBS)

kernel-kasan:
	@$(MAKE) --no-print-directory kernel KERNEL_FLAVOUR=kasan

# ---- kernel test tools ----
# testusb, the user side of the kernel's usbtest driver, built at test time
# from Debian's linux-source-6.1 (never committed).  Static, so the guest
# needs no libraries for it; scenarios put it in the guest with
# `file ${build}/tools/testusb /usr/bin/testusb` (${build} is $(BUILD)).
LINUX_SOURCE_TAR ?= /usr/src/linux-source-6.1.tar.xz

$(BUILD)/tools/testusb.c: $(LINUX_SOURCE_TAR)
	@mkdir -p $(dir $@)
	tar -xJOf $< linux-source-6.1/tools/usb/testusb.c >$@.tmp
	mv $@.tmp $@

$(BUILD)/tools/testusb: $(BUILD)/tools/testusb.c
	$(CC) -O2 -static -pthread -o $@ $<

# usb-timing: times a device from inside the guest (tests/tools/usb-timing.c;
# the device-time scenarios copy it in with `file`)
$(BUILD)/tools/usb-timing: tests/tools/usb-timing.c tests/tools/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -static -pthread -o $@ $<

# iso-timing: how evenly isochronous URBs complete, through usbfs
# (tests/tools/iso-timing.c; make bench-zero copies it in)
$(BUILD)/tools/iso-timing: tests/tools/iso-timing.c tests/tools/timing.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -static -o $@ $<

# pcm-io: plays and records through ALSA PCM ioctls in the guest, no
# alsa-lib (tests/tools/pcm-io.c; the audio scenarios copy it in)
$(BUILD)/tools/pcm-io: tests/tools/pcm-io.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -static -o $@ $<

# v4l2-grab: grabs YUYV frames through V4L2 ioctls in the guest, no libv4l,
# and checks them against the uvc function's test pattern, whose one
# definition it links (tests/tools/v4l2-grab.c; the video scenarios copy it in)
$(BUILD)/tools/v4l2-grab: tests/tools/v4l2-grab.c gadgets/fn/uvc_pattern.c \
		gadgets/fn/uvc_pattern.h
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -static -Igadgets/fn -o $@ tests/tools/v4l2-grab.c \
		gadgets/fn/uvc_pattern.c

# check-style: the tree in kernel coding style, checked by the kernel's own
# scripts/checkpatch.pl from the same linux-source-6.1 (extracted here,
# never committed); tests/tools/style-check.sh says what it ignores and why.
CHECKPATCH := $(BUILD)/tools/checkpatch/checkpatch.pl

$(CHECKPATCH): $(LINUX_SOURCE_TAR)
	@mkdir -p $(dir $@)
	tar -xJf $< -C $(dir $@) --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	touch $@

.PHONY: check-style
check-style: $(CHECKPATCH)
	tests/tools/style-check.sh $(CHECKPATCH)

# bench-zero: testusb bulk, scatter-gather and isochronous throughput and
# the jitter of isochronous IN completions (tests/tools/iso-timing.c) of
# usbrig's Gadget Zero against the kernel's own export path (dummy_hcd +
# configfs SourceSink + usbip-host + usbipd; it has no isochronous
# endpoints, so "kernel n/a" there) side by side in one guest boot
# (tests/bench/zero-vs-kernel.scenario, tests/tools/bench-zero.sh); then
# once more with usbrig's gadget served from the host (--gadget-on-host),
# and each host figure as a share of the in-guest one (a part of `make
# bench`).  docs/harness-design.md, "Where the device runs".
BENCH_ZERO := tests/bench/zero-vs-kernel.scenario

.PHONY: bench-zero
bench-zero: $(VM_BINS) $(GUEST_TOOLS)
	@for mode in guest host; do \
		flags=; [ $$mode = host ] && flags=--gadget-on-host; \
		out=$(BUILD)/bench-zero-$$mode.ktap; \
		saved=$(BUILD)/saved-bench-zero-$$mode; \
		rm -rf $$saved; \
		$(HOST_BIN) $(USBRIG_FLAGS) $$flags --save-dir $$saved \
			$(BENCH_ZERO) >$$out 2>$$out.log; \
		st=$$?; \
		{ cat $$saved/zero-vs-kernel/bench-zero.txt 2>/dev/null || \
			sed 's/\\n/\n/g' $$out; } | \
			grep '^bench-zero: ' | awk '!seen[$$0]++' | \
			sed "s/^bench-zero: /bench-zero (gadget on $$mode): /" | \
			tee $(BUILD)/bench-zero-$$mode.txt; \
		if [ $$st -ne 0 ]; then \
			tail -5 $$out.log; \
			echo "bench-zero: the $$mode run failed, see $$out"; exit 1; \
		fi; \
	done
	@awk -F'usbrig | MB/s' '/: test /{ split($$0, t, ":"); \
		key = t[2]; v = $$2 + 0; \
		if (FILENAME ~ /guest/) g[key] = v; else if (g[key] > 0) \
			printf "bench-zero: host/guest%s: %.2f\n", key, v / g[key] }' \
		$(BUILD)/bench-zero-guest.txt $(BUILD)/bench-zero-host.txt

# bench-urb: URB throughput of usbrig-gadget on the host, no VM: the
# client tests/bench/urb-bench.c against `usbrig-gadget --port 0` serving
# BENCH_URB_GADGET, each figure beside a loopback TCP responder of the same
# framing (48-byte header + payload) measured in the same run: control
# GET_DESCRIPTOR with 1 and 32 in flight (URB/s), 64 KiB bulk OUT + IN
# pairs, 4 in flight (MB/s each way).  "bench-urb: NAME (UNIT): usbrig X,
# loopback Y, ratio Z" lines (medians of 5 rounds; ranges and CPU time per
# URB or MB in $(BUILD)/bench-urb.log), every sample in
# $(BUILD)/bench-urb.json.  Client, responder and server share CPU
# BENCH_URB_CPU (empty: left to the scheduler); BENCH_URB_FLAGS adds client
# options (--seconds, --rounds, --bulk-depth ...).  docs/harness-design.md,
# "Host-side URB throughput".
BENCH_URB_BIN := $(BUILD)/tests/bench/urb-bench
BENCH_URB_GADGET := gadgets/examples/vendor-bulk.gadget
BENCH_URB_CPU ?= 0
BENCH_URB_FLAGS ?=

.PHONY: bench-urb

$(BENCH_URB_BIN): $(BUILD)/tests/bench/urb-bench.o \
		$(BUILD)/tests/socket/client.o $(GADGET_LIB)
	$(CC) $(LDFLAGS) -o $@ $^

bench-urb: $(GADGET_BIN) $(BENCH_URB_BIN)
	@dir=$$(mktemp -d); \
	$(GADGET_BIN) --port 0 --port-file $$dir/port $(BENCH_URB_GADGET) \
		2>$$dir/server.log & pid=$$!; \
	for i in $$(seq 100); do [ -s $$dir/port ] && break; sleep 0.1; done; \
	if [ -s $$dir/port ]; then \
		$(BENCH_URB_BIN) --port $$(cat $$dir/port) --server-pid $$pid \
			$(if $(BENCH_URB_CPU),--cpu $(BENCH_URB_CPU)) \
			--json $(BUILD)/bench-urb.json $(BENCH_URB_FLAGS) \
			2>$(BUILD)/bench-urb.log; st=$$?; \
	else \
		echo "bench-urb: usbrig-gadget wrote no port file"; st=1; \
	fi; \
	kill $$pid; wait $$pid; \
	if [ $$st -ne 0 ]; then \
		tail -5 $(BUILD)/bench-urb.log; cat $$dir/server.log; \
		echo "bench-urb: failed, see $(BUILD)/bench-urb.log"; \
	fi; \
	rm -rf $$dir; exit $$st

# ---- regression corpus ----
# check-regressions: for each kernel-patch/regressions/NNN-name/, build
# the patched kernel with its mutant.patch on top of the series (build.sh
# --patch, incremental, into $(BUILD)/regress/NNN-name/kernel: the clean
# build/kernel/bzImage is never overwritten), run the scenarios its
# `catches` file names and expect them to fail; then the clean kernel must
# pass them all. Prints one table (also $(BUILD)/regress/table.txt); exits
# 1 if a mutant is missed or does not build, or the clean kernel fails.
# REGRESS_FLAGS: --full (the whole suite on every kernel), entry numbers
# (REGRESS_FLAGS=003), --run-jobs N.  docs/regressions.md.
REGRESS_FLAGS ?=
# The kernel cache (sources, object tree, the clean kernel) is the one
# `make kernel` uses.
REGRESS_KERNEL_CACHE ?= $(or $(KERNEL_OUT),$(BUILD)/kernel)
# KVER=6.12: the same corpus on the 6.12 series, into build/regress-6.12
REGRESS_OUT ?= $(BUILD)/regress$(if $(filter-out 6.1,$(KVER)),-$(KVER))

.PHONY: check-regressions
check-regressions: $(VM_BINS)
	$(KERNEL_SRC_ENV) kernel-patch/regressions/check.sh --build $(BUILD) \
		--cache $(REGRESS_KERNEL_CACHE) --out $(REGRESS_OUT) \
		--jobs $(KERNEL_JOBS) $(REGRESS_FLAGS)

# ---- census (docs/census.md) ----
# census: what every module of the stock kernel with USB aliases does with
# a device its table matches and with one taught by new_id (usbrig census,
# CENSUS_JOBS guests), the table in $(BUILD)/census/census.md (.json,
# .xml); census-check: the same, then compared with the committed baseline
# (exit 1 on any changed row); check-census (in make check): one shard of
# it, CENSUS_SHARD, against the baseline, and the hand-written spot checks
# of tests/census/spot/ against the same baseline and in a guest.
CENSUS_JOBS ?= 2
CENSUS_SHARD ?= 1/24
CENSUS_BASELINE ?= tests/census/stock-6.1.json
CENSUS_FLAGS ?=

.PHONY: census census-check check-census
census: $(VM_BINS)
	$(HOST_BIN) census --jobs $(CENSUS_JOBS) --out $(BUILD)/census \
		$(CENSUS_FLAGS)

census-check: $(VM_BINS)
	$(HOST_BIN) census --jobs $(CENSUS_JOBS) --out $(BUILD)/census \
		--baseline $(CENSUS_BASELINE) $(CENSUS_FLAGS)

check-census: $(VM_BINS)
	$(HOST_BIN) census --jobs $(CENSUS_JOBS) --shard $(CENSUS_SHARD) \
		--out $(BUILD)/census-shard --baseline $(CENSUS_BASELINE) \
		$(CENSUS_FLAGS)
	tests/census/spot-check.sh $(HOST_BIN) $(CENSUS_BASELINE)

# census-kasan: the census on the KASAN + lockdep kernel, which carries every
# USB driver of Debian's config as a module (kernel-patch/usb-drivers.config;
# `make kernel-kasan` first; docs/census.md has its build time): the table in
# $(BUILD)/census-kasan/, compared with the stock baseline, so a row that
# changed is a KASAN or lockdep report (or a driver the two configs build
# differently).  CENSUS_FLAGS="--shard K/N" splits it across CI jobs.
.PHONY: census-kasan
census-kasan: $(VM_BINS)
	USBRIG_KERNEL_DIR=$(abspath $(KERNEL_OUT)) $(HOST_BIN) census \
		--kernel patched-kasan --jobs $(CENSUS_JOBS) \
		--out $(BUILD)/census-kasan --baseline $(CENSUS_BASELINE) \
		$(CENSUS_FLAGS)

# census-reports: every kernel report of the last `make census`, each
# reproduced by its module's scenario run alone
.PHONY: census-reports
census-reports: $(VM_BINS)
	tests/census/reports.sh $(HOST_BIN) $(BUILD)/census

# bench-census (in make bench with BENCH_CENSUS=1): the whole census,
# timed (`census:` lines); against the baseline, whose times share the
# modules between the jobs when $(BUILD)/census holds no earlier table
.PHONY: bench-census
bench-census: $(VM_BINS)
	@$(HOST_BIN) census --jobs $(CENSUS_JOBS) --out $(BUILD)/census \
		--baseline $(CENSUS_BASELINE) | grep '^census: '

# ---- import round trip ----
# check-import: every gadgets/examples/*.gadget (but those that cannot
# round trip on purpose, listed in the script) is attached in a guest under
# usbmon and tcpdump, its `lsusb -v` and sysfs folder saved to the host
# (`save` steps), each dump imported with usbrig-import (lsusb, sysfs,
# usbmon, pcap), and every import attached in a second guest and read back:
# the same descriptors, the same lsusb text.  KTAP on stdout, files in
# $(BUILD)/import-roundtrip/.  tests/import/roundtrip.sh --identity runs it
# with copies of the originals for imports (the rig alone).
# tests/import/devices.sh: the real devices of tests/data/devices/
# (SOURCES.md) imported from their lsusb -v pastes, attached, and the
# guest's lsusb -v of each compared field by field with the paste.
# tests/import/replay.sh: real usbmon captures of devices whose drivers
# talk to the chip in probe (asix, ch341), replayed: the probe succeeds.
# The guest needs the host's tcpdump (`requires tool tcpdump`).

.PHONY: check-import
check-import: $(VM_BINS) $(IMPORT_BIN)
	tests/import/roundtrip.sh --build $(BUILD)
	tests/import/devices.sh --build $(BUILD)
	tests/import/replay.sh --build $(BUILD)

# ---- repro ----
# check-repro: `usbrig repro` on the dumps of tests/repro/ (tests/repro/
# check.sh): an expected outcome (exit 0), another outcome (1), a dump
# usbrig-import rejects and a bad flag (125), and the scenario --out wrote
# passes.  bench-repro: start to verdict of one repro (import, boot,
# attach, new_id, report), a `# bench:` line of `make bench`.
# docs/reproducing-bind-bugs.md.
REPRO_BENCH_DUMP := tests/repro/pl2303-23c3.lsusb
REPRO_FLAGS ?=

.PHONY: check-repro bench-repro
check-repro: $(VM_BINS) $(IMPORT_BIN)
	tests/repro/check.sh $(BUILD)

bench-repro: $(VM_BINS) $(IMPORT_BIN)
	@$(HOST_BIN) repro $(REPRO_FLAGS) $(REPRO_BENCH_DUMP) --driver pl2303 \
		>$(BUILD)/bench-repro.txt 2>&1; st=$$?; \
	t=$$(sed -n 's/^verdict: .* after \([0-9.]*\)s$$/\1/p' \
		$(BUILD)/bench-repro.txt); \
	if [ $$st -ne 0 ] || [ -z "$$t" ]; then \
		cat $(BUILD)/bench-repro.txt; \
		echo "bench-repro: failed, see $(BUILD)/bench-repro.txt"; exit 1; \
	fi; \
	echo "# bench: repro $${t} s (start to verdict: import, boot, attach, new_id; $(REPRO_BENCH_DUMP))"

# ---- fuzzing ----
# tests/fuzz/fuzz_*.c: one libFuzzer target each (docs/fuzzing.md), seeds
# in tests/fuzz/corpus/TARGET/, inputs that once crashed in
# tests/fuzz/regressions/TARGET/.  The gadgets FUZZ_GADGETS (examples,
# and tests/fuzz/everything.gadget and hid-reports.gadget for what they
# do not show) are built
# into the targets: fuzz_pdu exports them as busids 1-1, 1-2, ... and
# fuzz_stdreq picks one by index, in this order (append only: the seeds
# name them so).  The files they write (a printer's `output`, a sink's
# or sizes `file` under /tmp) are /dev/null in the built-in copies: a fuzz
# target writes no file.  A tests/fuzz/TARGET.dict, if there, is its
# dictionary.
#
# fuzz: every target under libFuzzer (clang, FUZZ_CC) with ASan + UBSan for
# FUZZ_SECONDS each (FUZZ_TARGETS=fuzz_pdu for one); new inputs go to
# $(BUILD)/fuzz/corpus/TARGET, crashes to $(BUILD)/fuzz/crashes/TARGET/;
# FUZZ_MERGE=1 then merges what is new into the committed corpus
# (libFuzzer -merge=1: only inputs that add coverage).  FUZZ_FLAGS adds
# libFuzzer options (e.g. FUZZ_FLAGS=-jobs=2).
# check-fuzz (in make check): every target built without libFuzzer, its
# main() tests/fuzz/replay.c, under ASan + UBSan in $(BUILD)/asan, replays
# its corpus and regressions once.
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_MERGE ?= 0
FUZZ_FLAGS ?=
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev
FUZZ_GADGETS := $(addprefix gadgets/examples/,$(addsuffix .gadget, \
	zero vendor-bulk faults acm ftdi pl2303 hid-keyboard-fn mass-storage \
	alt-settings composite-iad superspeed lowspeed-interrupt hid-keyboard \
	hid-mouse malformed-total)) tests/fuzz/everything.gadget \
	gadgets/examples/cp210x.gadget gadgets/examples/ch341.gadget \
	gadgets/examples/mct_u232.gadget \
	$(addprefix gadgets/examples/,$(addsuffix .gadget, \
	cdc-ecm cdc-ncm ax88179 usbtmc uvc-bulk uvc-iso \
	printer uac1 uac2 uac2-implicit)) tests/fuzz/hid-reports.gadget
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_TARGETS ?= $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_COMMON := $(filter-out $(FUZZ_SRCS) tests/fuzz/replay.c, \
	$(wildcard tests/fuzz/*.c))
FUZZ_GEN := $(BUILD)/gen/fuzz_gadgets.c
FUZZ_COMMON_OBJS := $(FUZZ_COMMON:%.c=$(BUILD)/%.o) $(FUZZ_GEN:.c=.o)
FUZZ_LIB := $(BUILD)/libusbrig-fuzz.a
FUZZ_BINS := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/%)
# FUZZ_ENGINE=libfuzzer (set by `make fuzz`): every object with coverage
# instrumentation, the targets linked with libFuzzer's main(); otherwise
# replay.c is the main().
FUZZ_ENGINE ?= replay
ifeq ($(FUZZ_ENGINE),libfuzzer)
CFLAGS += -fsanitize=fuzzer-no-link
FUZZ_MAIN :=
FUZZ_LDFLAGS := -fsanitize=fuzzer
else
FUZZ_MAIN := $(BUILD)/tests/fuzz/replay.o
FUZZ_LDFLAGS :=
endif

.PHONY: fuzz fuzz-run check-fuzz check-fuzz-smoke fuzz-replay
# objects only the pattern rules name: keep them between runs
.SECONDARY: $(FUZZ_BINS:=.o) $(FUZZ_MAIN) $(FUZZ_COMMON_OBJS)

$(FUZZ_GEN): $(FUZZ_GADGETS) Makefile
	@mkdir -p $(dir $@)
	{ echo '/* generated from FUZZ_GADGETS by the Makefile */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const char *const fz_gadget_names[];'; \
	  echo 'extern const char *const fz_gadget_texts[];'; \
	  echo 'extern const size_t fz_gadget_count;'; \
	  echo 'const char *const fz_gadget_names[] = {'; \
	  for g in $(FUZZ_GADGETS); do echo "\"$$(basename $$g)\","; done; \
	  echo '};'; \
	  echo 'const char *const fz_gadget_texts[] = {'; \
	  for g in $(FUZZ_GADGETS); do \
		sed -e 's#\(output\|file\)\([[:space:]]*\)"/tmp/[^"]*"#\1\2"/dev/null"#g' \
			-e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' \
			$$g; echo ','; \
	  done; \
	  echo '};'; \
	  echo 'const size_t fz_gadget_count = sizeof(fz_gadget_names) / sizeof(fz_gadget_names[0]);'; \
	} >$@.tmp
	mv $@.tmp $@

$(FUZZ_GEN:.c=.o): $(FUZZ_GEN)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/tests/fuzz/%.o: tests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iharness/common -Iharness/host \
		-c -o $@ $<

$(FUZZ_LIB): $(FUZZ_COMMON_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/tests/fuzz/%: $(BUILD)/tests/fuzz/%.o $(FUZZ_MAIN) \
		$(FUZZ_LIB) $(HOST_LIB) $(HARNESS_COMMON_LIB) \
		$(IMPORT_LIB) $(GADGET_LIB)
	$(CC) $(LDFLAGS) $(FUZZ_LDFLAGS) -o $@ $^ $(EVENT_LIBS) $(PCAP_LIBS)

# the replay binaries, run over corpus and regressions (BUILD=.../asan)
fuzz-replay: $(FUZZ_BINS)
	@set -e; for t in $(FUZZ_TARGETS); do \
		dirs=; for d in corpus regressions; do \
			[ -d tests/fuzz/$$d/$$t ] && dirs="$$dirs tests/fuzz/$$d/$$t"; \
		done; \
		echo "== $$t"; $(BUILD)/tests/fuzz/$$t $$dirs; \
	done

check-fuzz:
	$(MAKE) BUILD=$(BUILD)/asan SAN=1 fuzz-replay

# check-fuzz-smoke (in make check): the libFuzzer build (clang, whose
# warnings gcc's build does not see) and FUZZ_SMOKE_SECONDS of each target:
# what `make fuzz` needs still builds and runs
FUZZ_SMOKE_SECONDS ?= 5
check-fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) \
		FUZZ_MERGE=0

# ---- the CI pipelines (ci/) ----
# check-ci: both pipeline files checked by the tools their hosts use:
# ci/github-workflow.yml against GitHub's workflow schema
# (@action-validator/cli), ci/gitlab-ci.yml parsed, expanded and checked
# against GitLab's schema by gitlab-ci-local (4.60.0, the last one for
# Debian's Node 20), which lists the jobs it would run.  Both come from
# npm, installed when missing.  Running the GitLab jobs themselves:
# `gitlab-ci-local --file ci/gitlab-ci.yml --force-shell-executor JOB`.
GITLAB_CI_LOCAL := node $(shell npm root -g 2>/dev/null)/gitlab-ci-local/src/index.js

.PHONY: check-ci
check-ci:
	@command -v action-validator >/dev/null || \
		npm install -g --no-fund --no-audit @action-validator/cli
	@[ -f "$$(npm root -g)/gitlab-ci-local/src/index.js" ] || \
		npm install -g --no-fund --no-audit gitlab-ci-local@4.60.0
	action-validator ci/github-workflow.yml
	$(GITLAB_CI_LOCAL) --file ci/gitlab-ci.yml --list

# ---- hostile devices against the guest kernel (docs/fuzzing.md) ----
# fuzz-kernel: `usbrig fuzz` on the stock kernel for FUZZ_KERNEL_DURATION
# seconds (FUZZ_KERNEL_SEED, FUZZ_KERNEL_JOBS guests): devices mutated from
# the example and census gadgets, each kernel report minimised and kept in
# $(BUILD)/fuzz-kernel/finding-N/ (fails when there is one).
# check-fuzz-kernel (in make check): a fixed seed, 8 devices and the
# planted trigger, which must come back confirmed, minimised to its one
# mutation and reproduced by its scenario (tests/fuzz-kernel/smoke.sh).
FUZZ_KERNEL_DURATION ?= 600
FUZZ_KERNEL_SEED ?= 1
FUZZ_KERNEL_JOBS ?= 2
.PHONY: fuzz-kernel check-fuzz-kernel
fuzz-kernel: $(VM_BINS)
	$(HOST_BIN) fuzz --duration $(FUZZ_KERNEL_DURATION) \
		--seed $(FUZZ_KERNEL_SEED) --jobs $(FUZZ_KERNEL_JOBS) \
		--out $(BUILD)/fuzz-kernel

check-fuzz-kernel: $(VM_BINS)
	tests/fuzz-kernel/smoke.sh $(HOST_BIN) $(BUILD)/fuzz-kernel-smoke

fuzz:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(FUZZ_PACKAGES)"
	$(MAKE) BUILD=$(BUILD)/fuzz CC=$(FUZZ_CC) SAN=1 FUZZ_ENGINE=libfuzzer \
		fuzz-run

# fuzz-coverage: what the committed corpora and regressions reach, line by
# line: every target built with clang's source-based coverage and replay.c
# in $(BUILD)/cov (no sanitizer, no libFuzzer), each replayed once over its
# inputs, the profiles merged (llvm-profdata) and reported for the sources
# the targets drive (llvm-cov): $(BUILD)/cov/report.txt per file and
# $(BUILD)/cov/functions.txt per function (regions, lines and branches
# run, of each); the per-file summary is printed.  A report, not a test:
# it fails only when a replay does.  fuzz-cov-run is its second half, for
# the build fuzz-coverage sets up; on its own it has no profiles to merge.
FUZZ_COV_FLAGS := -fprofile-instr-generate -fcoverage-mapping
FUZZ_COV_SRCS = $(GADGET_SRCS) $(wildcard gadgets/import/*.c) \
	$(wildcard harness/host/scenario*.c)
LLVM_PROFDATA ?= llvm-profdata-14
LLVM_COV ?= llvm-cov-14
.PHONY: fuzz-coverage fuzz-cov-run
fuzz-coverage:
	@$(MAKE) --no-print-directory deps \
		DEB_PACKAGES="$(FUZZ_PACKAGES) llvm-14"
	$(MAKE) BUILD=$(BUILD)/cov CC=$(FUZZ_CC) \
		CFLAGS="-O1 -g $(FUZZ_COV_FLAGS)" LDFLAGS="$(FUZZ_COV_FLAGS)" \
		fuzz-cov-run

fuzz-cov-run: $(FUZZ_BINS)
	@rm -rf $(BUILD)/prof
	@LLVM_PROFILE_FILE='$(BUILD)/prof/%p.profraw' \
		$(MAKE) --no-print-directory fuzz-replay
	@set -e; $(LLVM_PROFDATA) merge -sparse -o $(BUILD)/fuzz.profdata \
		$(BUILD)/prof/*.profraw; \
	objs=; for t in $(FUZZ_TARGETS); do \
		objs="$${objs:+$$objs -object }$(BUILD)/tests/fuzz/$$t"; done; \
	$(LLVM_COV) report $$objs -instr-profile=$(BUILD)/fuzz.profdata \
		$(FUZZ_COV_SRCS) >$(BUILD)/report.txt; \
	$(LLVM_COV) report -show-functions $$objs \
		-instr-profile=$(BUILD)/fuzz.profdata \
		$(FUZZ_COV_SRCS) >$(BUILD)/functions.txt; \
	cat $(BUILD)/report.txt; \
	echo "fuzz-coverage: $(BUILD)/report.txt, $(BUILD)/functions.txt"

# under BUILD=.../fuzz: each target for FUZZ_SECONDS, then the merge; a
# target that crashes does not stop the others, the run fails at the end
fuzz-run: $(FUZZ_BINS)
	@failed=; for t in $(FUZZ_TARGETS); do \
		new=$(BUILD)/corpus/$$t; crash=$(BUILD)/crashes/$$t; \
		mkdir -p $$new $$crash tests/fuzz/corpus/$$t; \
		dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
		regs=; [ -d tests/fuzz/regressions/$$t ] && \
			regs=tests/fuzz/regressions/$$t; \
		echo "== $$t: $(FUZZ_SECONDS) s"; \
		$(BUILD)/tests/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) \
			-timeout=30 -print_final_stats=1 $$dict \
			-artifact_prefix=$$crash/ $(FUZZ_FLAGS) \
			$$new tests/fuzz/corpus/$$t $$regs || failed="$$failed $$t"; \
		if [ "$(FUZZ_MERGE)" = 1 ]; then \
			$(BUILD)/tests/fuzz/$$t -merge=1 $$dict \
				tests/fuzz/corpus/$$t $$new || failed="$$failed $$t"; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "fuzz: failed:$$failed (inputs in $(BUILD)/crashes/)"; exit 1; \
	fi
