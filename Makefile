# Two commands for a fresh clone: `make demo` and `make test`. Both create .venv when missing.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.vepd-installed
SOURCES := $(shell find vepd_ros launch config -type f -not -path '*/__pycache__/*' 2>/dev/null) \
           setup.py setup.cfg package.xml resource/vepd_ros

# The pip-runtime environment: loopback discovery only, logs inside the project, the venv as ament prefix.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_LOG_DIR := $(CURDIR)/.ros_log
export AMENT_PREFIX_PATH := $(CURDIR)/$(VENV)
export MPLBACKEND := Agg
unexport RMW_IMPLEMENTATION ROS_LOCALHOST_ONLY

.PHONY: venv test demo bench lint clean

venv: $(STAMP)

$(VENV)/.deps-installed: requirements.txt requirements-ros.txt requirements-dev.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	@touch $@

# Non-editable install: `pip install -e` does not install data_files, and the ament index must find
# share/vepd_ros (launch/, config/). Reinstalled whenever a source file changes.
$(STAMP): $(VENV)/.deps-installed $(SOURCES)
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --force-reinstall .
	@rm -rf build *.egg-info
	@touch $@

test: $(STAMP)
	$(PY) -m pytest -n 2 test

demo: $(STAMP)
	$(VENV)/bin/vepd demo

# Every benchmark runs; the ones that miss their target (exit 1) are listed at the end and make bench fails.
bench: $(STAMP)
	@missed=""; for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || missed="$$missed $$b"; done; \
	if [ -n "$$missed" ]; then echo "targets missed:$$missed"; exit 1; fi

lint: $(STAMP)
	$(PY) -c "from catkin_pkg.package import parse_package; p=parse_package('package.xml'); p.validate(); print(p.name, p.get_build_type())"

clean:
	rm -rf $(VENV) .ros_log build *.egg-info .pytest_cache
