# Thin wrapper over CMake: make, make test, make run, make asan.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)

.PHONY: all build build-quiet test run asan test-asan clean

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

# Every test: unit and functional, normal build then ASan+UBSan build.
test: build asan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow

asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBLK_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory

# The main job: the default matrix on null, ram and uring (over a file in a
# temporary folder, removed afterwards).
run: build-quiet
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	./$(BUILD)/blkstack bench --dev=null,ram,uring --filename=$$tmp/blkstack.img --dev_size=1G

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
