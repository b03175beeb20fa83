# Two commands on a fresh machine: `make demo` scans a real server, `make test` runs the whole suite.
# Both create .venv, install the project, make sure a Docker engine answers and build the runtime images first.
VENV ?= .venv
PY := $(VENV)/bin/python
CLI := $(VENV)/bin/mcp-sandbox
DEMO_TARGET ?= npm:@modelcontextprotocol/server-everything

.PHONY: setup engine images redis chromium demo test bench gc clean-images

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[test,distributed]'
	touch $@

engine:
	bash scripts/ensure-engine.sh

# redis-server for the distributed-batch tests (Debian's package, installed when missing)
redis:
	bash scripts/ensure-redis.sh

# headless chromium for the batch summary.html browser test (Debian's package, installed when missing)
chromium:
	bash scripts/ensure-chromium.sh

images: engine setup
	bash scripts/ensure-base-image.sh
	$(CLI) images build

demo: images
	$(CLI) scan $(DEMO_TARGET) --fail-on never -- stdio

test: images redis chromium
	$(PY) scripts/run_tests.py

bench: images
	$(PY) benchmarks/bench_startup.py
	$(PY) benchmarks/bench_check.py --tools 3000
	$(PY) benchmarks/bench_check.py --tools 50000 --runs 1
	$(PY) benchmarks/bench_config_lint.py
	$(PY) benchmarks/bench_attestations.py
	$(PY) benchmarks/bench_sandbox.py
	$(PY) benchmarks/bench_scan.py --p10-off
	$(PY) benchmarks/bench_timeline.py --runs 3 --p10-off
	$(PY) benchmarks/bench_cold.py --pairs 1
	$(PY) benchmarks/bench_big_server.py --pairs 1
	$(PY) benchmarks/bench_batch.py --record benchmarks/results/batch.json
	$(PY) benchmarks/bench_images_cache.py --rounds 1

gc: setup
	$(CLI) gc
