# make demo: build the example kernels and run them on the emulator.
# make test: install what the tests need (Python packages, the Debian RISC-V toolchain, gdb-multiarch),
# then test.
PYTHON ?= python3
RISCV_GCC := riscv64-unknown-elf-gcc

.PHONY: test demo deps toolchain gdb lint bench

toolchain:
	@command -v $(RISCV_GCC) >/dev/null 2>&1 || { \
	  echo "installing gcc-riscv64-unknown-elf"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-riscv64-unknown-elf >/dev/null; }

gdb:
	@command -v gdb-multiarch >/dev/null 2>&1 || { \
	  echo "installing gdb-multiarch"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gdb-multiarch >/dev/null; }

deps: toolchain gdb
	$(PYTHON) -m pip install -q -e '.[test]'
	@# The tools' wheels exist for some Pythons and platforms only: without them their tests skip.
	$(PYTHON) -m pip install -q -e '.[test,tools]' || echo "tt-umd / tt-exalens not installed: tests/test_tools.py skips"

lint: deps
	$(PYTHON) -m ruff check tensixsim tests benchmarks tools

test: deps lint
	$(PYTHON) -m pytest -n 2 --dist loadgroup -q --hypothesis-profile=ci tests

demo: toolchain
	$(PYTHON) -m pip install -q -e .
	$(PYTHON) -m tensixsim demo

bench: deps
	@for script in benchmarks/*.py; do echo "== $$script"; $(PYTHON) $$script | tail -3; done
