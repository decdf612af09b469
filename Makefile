# Two commands for a fresh clone: `make demo` and `make test`. Both create .venv when missing.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.vepd-installed
# ../shared beside the clone (CI has it): the ament linter wheels for the lint tests.
LINT_WHEELS := $(wildcard $(CURDIR)/../shared/ros2_tooling/lint/*.whl)
PIP := $(PY) -m pip install -q --disable-pip-version-check
# pip says "WARNING: Location 'file:///...' is ignored: it is neither a file nor a directory" once per
# package and configured index that lacks it (a machine-wide pip.conf listing local indexes): ~200
# lines that change nothing. Only that exact message is dropped; every other line and pip's exit
# status pass through.
PIP_QUIET := sed -u "/^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$$/d"
SOURCES := $(shell find vepd_ros launch config -type f -not -path '*/__pycache__/*' 2>/dev/null) \
           setup.py setup.cfg package.xml resource/vepd_ros

# The pip-runtime environment: loopback discovery only, logs inside the project, the venv as ament prefix.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export ROS_LOG_DIR := $(CURDIR)/.ros_log
export AMENT_PREFIX_PATH := $(CURDIR)/$(VENV)
export MPLBACKEND := Agg
unexport RMW_IMPLEMENTATION ROS_LOCALHOST_ONLY

# ../shared/ros2_sources beside the clone (CI has it): robot_localization's upstream sources, which
# `make rl` builds against the venv's wheels (tools/rl_build/build.py; cached outside the clone).
RL_SOURCES := $(CURDIR)/../shared/ros2_sources

.PHONY: venv rl rl-golden rl-if-sources test test-slow demo bench lint clean

venv: $(STAMP)

$(VENV)/.deps-installed: requirements.txt requirements-ros.txt requirements-pip-only.txt requirements-dev.txt
	@test -x $(PY) || { echo 'make venv: creating $(VENV)'; $(PYTHON) -m venv $(VENV); }
	@echo 'make venv: installing the pinned dependencies (requirements-dev.txt; ~1-2 min the first time)'
	@$(PIP) -r requirements-dev.txt 2>&1 | $(PIP_QUIET)
ifneq ($(LINT_WHEELS),)
	@echo 'make venv: installing the ament linters from ../shared/ros2_tooling/lint'
	@$(PIP) --no-deps $(LINT_WHEELS) 2>&1 | $(PIP_QUIET)
else
	@echo 'make venv: ../shared/ros2_tooling/lint not found: the ament lint tests will skip'
endif
	@touch $@

# Non-editable install: `pip install -e` does not install data_files, and the ament index must find
# share/vepd_ros (launch/, config/). Reinstalled whenever a source file changes.
# `ros2 run` and launch_ros look for executables in <prefix>/lib/vepd_ros/ (colcon puts them there
# through setup.cfg); pip puts console scripts only in bin/. So every console script of the installed
# distribution (setup.py's NODES and vepd) is linked there, the directory rebuilt on each install so
# a removed executable leaves nothing behind.
$(STAMP): $(VENV)/.deps-installed $(SOURCES)
	@echo 'make venv: installing vepd_ros into $(VENV)'
	@$(PIP) --no-deps --force-reinstall . 2>&1 | $(PIP_QUIET)
	@rm -rf build *.egg-info
	@exes=$$($(PY) -c "from importlib.metadata import distribution as d; \
	  print(*sorted(e.name for e in d('vepd_ros').entry_points.select(group='console_scripts')))"); \
	test -n "$$exes"; rm -rf $(VENV)/lib/vepd_ros; mkdir -p $(VENV)/lib/vepd_ros; \
	for exe in $$exes; do ln -s ../../bin/$$exe $(VENV)/lib/vepd_ros/$$exe; done; \
	echo "make venv: ready ($(VENV); executables in $(VENV)/lib/vepd_ros: $$exes)"
	@touch $@

# The real ekf_node/ukf_node/navsat_transform_node: ~12 min the first time on 2 cores, seconds when
# the cache (${XDG_CACHE_HOME:-~/.cache}/vepd_ros/rl/<key>) has them. Writes .venv/vepd_rl_env.sh.
rl: $(STAMP)
	@nice -n 10 $(PY) tools/rl_build/build.py --sources $(RL_SOURCES)

# With ../shared/ros2_sources present the real robot_localization is built (or reused) first, so
# its tests run; without it they skip with the reason.
# `make test`: every test not marked slow (~4 min on 2 cores). `make test-slow`: the slow real-tool
# tests (real ros2 launch, the demo under load, every help example, the real robot_localization;
# ~30 min). CI (.ci/run) runs both.
test: $(STAMP) rl-if-sources
	$(PY) -m pytest -n 2 --durations=15 -m 'not slow' test

test-slow: $(STAMP) rl-if-sources
	$(PY) -m pytest -n 2 --durations=25 -m slow test

rl-if-sources: $(STAMP)
	@if [ -d $(RL_SOURCES) ]; then $(MAKE) --no-print-directory rl; \
	else echo 'make test: $(RL_SOURCES) not found: the real robot_localization tests will skip'; fi

demo: $(STAMP)
	$(VENV)/bin/vepd demo

# Every benchmark runs; the ones that miss their target (exit 1) are listed at the end and make bench fails.
bench: $(STAMP)
	@missed=""; for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || missed="$$missed $$b"; done; \
	if [ -n "$$missed" ]; then echo "targets missed:$$missed"; exit 1; fi

lint: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider test/test_facts_once.py
	$(PY) -m mypy
	$(PY) -c "from catkin_pkg.package import parse_package; p=parse_package('package.xml'); p.validate(); print(p.name, p.get_build_type())"

# The filter-core golden driver: upstream ekf.cpp / ukf.cpp / filter_base.cpp unmodified from
# ../shared/ros2_sources, built with g++ and Eigen, cached under $${XDG_CACHE_HOME:-~/.cache}/vepd_ros
# (tools/rl_golden/rl_golden.py runs it). Skipped with the reason without ../shared, g++ or Eigen.
rl-golden:
	@rc=0; bash tools/rl_golden/build.sh || rc=$$?; if [ $$rc -ne 0 ] && [ $$rc -ne 77 ]; then exit $$rc; fi

clean:
	rm -rf $(VENV) .ros_log build *.egg-info .pytest_cache
