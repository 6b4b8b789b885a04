# usnic_rel: kernel module, userspace library, tests and the VM harness.
# 'make' builds the module for the running kernel (KDIR= overrides), the library,
# tools and tests; 'make check' runs everything; 'make demo' shows it working.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
SRC := $(CURDIR)
BUILD ?= $(SRC)/build
KVER ?= $(shell uname -r)
KDIR ?= $(firstword $(wildcard /lib/modules/$(KVER)/build) \
	$(wildcard /usr/src/linux-headers-$(shell tests/vm/stock-kernel 2>/dev/null)))

CC ?= gcc
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CPPFLAGS += -Iinclude -D_GNU_SOURCE
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 $(WARN) -fPIC -fvisibility=hidden
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# PMIx (libpmix-dev) for urel_job_init_pmix(); without it that call says -ENOSYS.
# Its headers are system headers: our warnings are not theirs.
PMIX_LIBS := $(shell pkg-config --libs pmix 2>/dev/null)
ifneq ($(PMIX_LIBS),)
CPPFLAGS += -DUREL_HAVE_PMIX $(patsubst -I%,-isystem %,$(shell pkg-config --cflags pmix))
endif

LIB_VERSION := 0.2.0
LIB_SONAME := libusnicrel.so.0
LIB_SRCS := $(sort $(wildcard lib/*.c lib/msg/*.c lib/osc/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_SAN_OBJS := $(LIB_SRCS:%.c=$(BUILD)/san/%.o)
TEST_SRCS := $(sort $(wildcard tests/user/*.c))
TESTS := $(TEST_SRCS:tests/user/%.c=$(BUILD)/tests/%)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
TOOL_SRCS := $(sort $(wildcard tools/*.c))
TOOL_BINS := $(TOOL_SRCS:tools/%.c=$(BUILD)/tools/%)
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
MPI_TESTS := $(patsubst tests/mpi/%.c,$(BUILD)/tests/%,$(sort $(wildcard tests/mpi/*.c)))
FI_TESTS := $(patsubst tests/fi/%.c,$(BUILD)/tests/%,$(sort $(wildcard tests/fi/*.c)))
PROV_SRCS := $(sort $(wildcard prov/*.c))
PROV_OBJS := $(PROV_SRCS:%.c=$(BUILD)/%.o)

.PHONY: all lib prov tools examples tests bench-bins module module-stock module-debug debug-kernel \
	deps check demo bench clean install sparse
all: lib prov tools examples tests bench-bins module

lib: $(BUILD)/libusnicrel.so $(BUILD)/libusnicrel.a

$(BUILD)/lib/%.o: lib/%.c $(wildcard lib/*.h lib/msg/*.h lib/osc/*.h include/*.h include/uapi/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/san/lib/%.o: lib/%.c $(wildcard lib/*.h lib/msg/*.h lib/osc/*.h include/*.h include/uapi/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -c -o $@ $<

$(BUILD)/libusnicrel.so: $(LIB_OBJS) lib/libusnicrel.map
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=lib/libusnicrel.map \
		-Wl,-z,defs -o $@.$(LIB_VERSION) $(LIB_OBJS) $(PMIX_LIBS) -lpthread
	ln -sf libusnicrel.so.$(LIB_VERSION) $(BUILD)/$(LIB_SONAME)
	ln -sf libusnicrel.so.$(LIB_VERSION) $@

$(BUILD)/libusnicrel.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

# The libfabric provider (prov/, libfabric-dev): liburel-fi.so carries the static
# library inside and exports only fi_prov_ini, so libfabric loads it by itself.
prov: $(BUILD)/prov/liburel-fi.so
$(BUILD)/prov/%.o: prov/%.c $(wildcard prov/*.h include/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<
$(BUILD)/prov/liburel-fi.so: $(PROV_OBJS) $(BUILD)/libusnicrel.a prov/urel-fi.map
	$(CC) -shared -Wl,--version-script=prov/urel-fi.map -Wl,-z,defs -o $@ $(PROV_OBJS) \
		$(BUILD)/libusnicrel.a $(PMIX_LIBS) -lfabric -lpthread

# Tools (tools/): plain C11, no library needed.
tools: $(TOOL_BINS)
$(BUILD)/tools/%: tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

# Examples (examples/): built as a user would, against the shared library.
examples: $(EXAMPLE_BINS)
$(BUILD)/examples/%: examples/%.c $(wildcard include/*.h) $(BUILD)/libusnicrel.so
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< -L$(BUILD) -Wl,-rpath,$(BUILD) -lusnicrel

# Tests link the sanitized library objects statically: ASan and UBSan cover both.
# The in-VM tests also run the tools and the examples.
tests: $(TESTS) tools examples prov $(MPI_TESTS) $(FI_TESTS)
$(BUILD)/tests/%: tests/user/%.c $(LIB_SAN_OBJS) $(wildcard tests/user/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN) -Itests/user -o $@ $< $(LIB_SAN_OBJS) $(PMIX_LIBS) -lpthread \
		$(TEST_LDFLAGS)
# Allocation-failure tests route every allocation through tests/user/urt_nomem.h.
$(BUILD)/tests/vm_nomem_%: TEST_LDFLAGS = \
	-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign

# libfabric programs (tests/fi/) for the provider's tests: libfabric's API only.
$(BUILD)/tests/fi_%: tests/fi/fi_%.c tests/fi/fi_check.h
	@mkdir -p $(@D)
	$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -lfabric

# MPI programs (tests/mpi/) for the provider's tests, built with Open MPI's mpicc.
$(BUILD)/tests/mpi_%: tests/mpi/mpi_%.c tests/mpi/mpi_check.h
	@mkdir -p $(@D)
	mpicc -std=c11 -O2 -g $(WARN) -o $@ $<

# Benchmark programs (bench/): plain C11, no sanitizers, optimized; the
# urel_* ones link the static library.
bench-bins: $(BENCH_BINS) $(BUILD)/bench/np_info_null.so $(BUILD)/bench/osc_mpi
$(BUILD)/bench/%: bench/%.c $(wildcard bench/*.h) $(BUILD)/libusnicrel.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libusnicrel.a $(PMIX_LIBS) -lpthread

# bench/osc_bench.c's measurements over Open MPI's one-sided operations.
$(BUILD)/bench/osc_mpi: bench/mpi/osc_mpi.c
	@mkdir -p $(@D)
	mpicc -std=c11 -O2 -g $(WARN) -o $@ $<

# NPopenmpi2's MPI_Win_create shim (bench/mpi/np_info_null.c), for make bench.
$(BUILD)/bench/np_info_null.so: bench/mpi/np_info_null.c
	@mkdir -p $(@D)
	mpicc -std=c11 -O2 -g $(WARN) -shared -fPIC -o $@ $<

# The module for KDIR (default: the running kernel, else Debian's stock headers).
module:
	@test -n "$(KDIR)" || { echo "no kernel headers: install linux-headers-$(KVER) or set KDIR="; exit 1; }
	$(MAKE) -C $(KDIR) M=$(SRC) modules

# Module builds for the two test kernels, each in its own tree of symlinks so
# that their objects never mix.
define kmod_tree
	rm -rf $(1) && mkdir -p $(1) && cp -as $(SRC)/Kbuild $(SRC)/kmod $(SRC)/include \
		$(SRC)/tests $(1)/
endef

module-stock:
	$(call kmod_tree,$(BUILD)/kmod-stock)
	$(MAKE) -C /usr/src/linux-headers-$$(tests/vm/stock-kernel) M=$(BUILD)/kmod-stock \
		W=1 modules 2>&1 | tee $(BUILD)/kmod-stock.log
	@! grep -E 'warning:|error:' $(BUILD)/kmod-stock.log

debug-kernel:
	@tests/vm/build-debug-kernel >/dev/null

module-debug: debug-kernel
	$(call kmod_tree,$(BUILD)/kmod-debug)
	$(MAKE) -C $$(tests/vm/build-debug-kernel) M=$(BUILD)/kmod-debug W=1 modules 2>&1 \
		| tee $(BUILD)/kmod-debug.log
	@! grep -E 'warning:|error:' $(BUILD)/kmod-debug.log

# sparse over the module (and, on the debug kernel, the KUnit suites); C=2 checks
# every file whether rebuilt or not. Any report fails.
sparse: module-stock module-debug
	$(MAKE) -C /usr/src/linux-headers-$$(tests/vm/stock-kernel) M=$(BUILD)/kmod-stock \
		C=2 CHECK=sparse modules 2>&1 | tee $(BUILD)/sparse-stock.log
	$(MAKE) -C $$(tests/vm/build-debug-kernel) M=$(BUILD)/kmod-debug \
		C=2 CHECK=sparse modules 2>&1 | tee $(BUILD)/sparse-debug.log
	@! grep -E 'warning:|error:' $(BUILD)/sparse-stock.log $(BUILD)/sparse-debug.log

deps:
	@scripts/install-deps

check: deps
	@scripts/check

demo: deps
	@scripts/demo

bench: deps
	@scripts/bench

# Installation: library, header, pkg-config file, man pages, tools; the module goes
# through the kernel's modules_install (then depmod) when KDIR is available.
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BINDIR ?= $(PREFIX)/bin
UDEVRULESDIR ?= /lib/udev/rules.d
# libfabric's own provider directory, where it looks without FI_PROVIDER_PATH.
FI_PROVDIR ?= $(shell pkg-config --variable=libdir libfabric 2>/dev/null || echo $(LIBDIR))/libfabric
install: install-lib install-prov install-tools install-module install-udev
install-prov: prov
	install -d $(DESTDIR)$(FI_PROVDIR)
	install -m 755 $(BUILD)/prov/liburel-fi.so $(DESTDIR)$(FI_PROVDIR)/
install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(foreach s,3 4 7,$(DESTDIR)$(MANDIR)/man$(s))
	install -m 755 $(BUILD)/libusnicrel.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libusnicrel.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf libusnicrel.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/libusnicrel.so
	install -m 644 $(BUILD)/libusnicrel.a $(DESTDIR)$(LIBDIR)/
	install -m 644 include/usnicrel.h include/usnicrel_msg.h include/usnicrel_win.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIB_VERSION)|' \
		-e 's|@PRIVATE_LIBS@|$(PMIX_LIBS)|' \
		lib/libusnicrel.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/libusnicrel.pc
	$(foreach s,3 4 7,install -m 644 man/man$(s)/*.$(s) $(DESTDIR)$(MANDIR)/man$(s)/;)
install-tools: tools
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 755 $(TOOL_BINS) $(DESTDIR)$(BINDIR)/
	install -m 644 man/man8/*.8 $(DESTDIR)$(MANDIR)/man8/
install-module: module
	$(MAKE) -C $(KDIR) M=$(SRC) INSTALL_MOD_PATH=$(DESTDIR) modules_install
# The device node's group and mode (the module itself creates it root-only).
install-udev:
	install -d $(DESTDIR)$(UDEVRULESDIR)
	install -m 644 udev/60-usnic-rel.rules $(DESTDIR)$(UDEVRULESDIR)/
.PHONY: install-lib install-prov install-tools install-module install-udev

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C $(KDIR) M=$(SRC) clean 2>/dev/null
.SECONDARY:

# Userspace C follows .clang-format; the kernel side follows checkpatch.
USER_C := $(wildcard lib/*.[ch] lib/msg/*.[ch] lib/osc/*.[ch] prov/*.[ch] include/usnicrel*.h tests/user/*.[ch] tests/mpi/*.[ch] tests/fi/*.[ch] tools/*.[ch] examples/*.[ch] bench/*.[ch] bench/mpi/*.c)
.PHONY: format format-check
format:
	clang-format -i $(USER_C)
format-check:
	clang-format --dry-run -Werror $(USER_C)
