# Thin wrapper over CMake: make, make test, make run, make asan.
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# make test's TSan run: every race report fails its test; the suppressions
# are device data copied by overlapping requests (tests/tsan.supp says why)
TSAN_ENV = TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp"
JOBS ?= $(shell nproc)
# ThreadSanitizer (gcc 12's) aborts with "unexpected memory mapping" where
# mmap randomisation has more bits than it expects (vm.mmap_rnd_bits=32 on
# some kernels): its tests run with address randomisation off where the
# kernel allows that (setarch -R; the runtime of LLVM 18 and later does
# this itself).
NO_ASLR = $(shell setarch $$(uname -m) -R true 2>/dev/null && echo setarch $$(uname -m) -R)

.PHONY: all build build-quiet test run asan tsan test-asan clean fuzz

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# The same, printing the compiler's output only when the build fails.
build-quiet:
	@echo "building blkstack in $(BUILD)/ ..."
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory >$(BUILD)/build.log 2>&1 || \
		{ cat $(BUILD)/build.log; exit 1; }

# Every test: unit and functional, normal build, then ASan+UBSan, then
# ThreadSanitizer.
test: build asan tsan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow
	cd $(TSAN_BUILD) && $(TSAN_ENV) $(NO_ASLR) ctest --output-on-failure -j $(JOBS) -LE slow

asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBLK_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory

tsan:
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBLK_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) -- --no-print-directory

# The main job: the default matrix on null, ram and uring (over a file in a
# temporary folder, removed afterwards).
run: build-quiet
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	./$(BUILD)/blkstack bench --dev=null,ram,uring --filename=$$tmp/blkstack.img --dev_size=1G

# libFuzzer targets (clang): build in build-fuzz/ and run each for FUZZ_TIME
# seconds, starting from the seed corpus in fuzz/corpus/<target>/ (copied:
# new inputs stay in build-fuzz/corpus-<target>/; crashes in build-fuzz/).
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME ?= 60
fuzz:
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBLK_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_nbd_handshake fuzz_nbd_transmission fuzz_scsi_tgt fuzz_iscsi_keys -- --no-print-directory
	@for t in nbd_handshake nbd_transmission scsi_tgt iscsi_keys; do \
		mkdir -p $(FUZZ_BUILD)/corpus-$$t && cp -n fuzz/corpus/$$t/* $(FUZZ_BUILD)/corpus-$$t/ ; \
		echo "fuzzing $$t for $(FUZZ_TIME) s"; \
		( cd $(FUZZ_BUILD) && ./fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) -max_len=70000 \
			-print_final_stats=1 corpus-$$t ) || exit 1; \
	done

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
