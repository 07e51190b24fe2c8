# DLPerf Suite — `make help` lists the targets.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
CAMPAIGN ?= rn50_4gpu
LOG_DIR ?= data/raw_logs/$(CAMPAIGN)
OUT ?= reports/$(CAMPAIGN)
#: published figures the bundled campaign is compared with on page 1 (`--references`)
REFERENCES ?= examples/references/rn50_4gpu.yaml
TITLE ?= ResNet-50 v1.5 training on 4× H200 (built-in PyTorch workload)|ResNet-50 v1.5 训练性能：4 × H200（DLPerf 内置 PyTorch 实现）
#: the GPT campaign (workloads.gpt), published apart from `all`
GPT_CAMPAIGN ?= gpt_4gpu
GPT_TITLE ?= GPT training on 1–4× H200 (built-in PyTorch workload)|GPT 训练性能：1～4 × H200（DLPerf 内置 PyTorch 实现）

.DEFAULT_GOAL := help
.PHONY: help setup all reports-gpt summarize test test-fast lint schema bench lab example-store clean

help:  ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

setup:  ## install Debian packages and the .venv (idempotent)
	@bash scripts/setup.sh

all: setup  ## the main job: summary + en/zh HTML/PDF reports of the bundled campaign
	$(VENV)/bin/dlperf summarize $(LOG_DIR)
	$(VENV)/bin/dlperf report $(LOG_DIR) -o $(OUT) --title "$(TITLE)" \
		$(if $(REFERENCES),--references $(REFERENCES))

reports-gpt: setup  ## summary + en/zh HTML/PDF reports of the GPT campaign (not part of all)
	$(VENV)/bin/dlperf summarize data/raw_logs/$(GPT_CAMPAIGN)
	$(VENV)/bin/dlperf report data/raw_logs/$(GPT_CAMPAIGN) -o reports/$(GPT_CAMPAIGN) --title "$(GPT_TITLE)"

summarize: setup  ## summarise LOG_DIR (default: the bundled campaign)
	$(VENV)/bin/dlperf summarize $(LOG_DIR)

test: setup  ## run the whole test suite (what CI runs)
	$(PY) -m pytest -q

test-fast: setup  ## tests without the slow end-to-end ones
	$(PY) -m pytest -q -m "not slow"

lint: setup  ## ruff check, and the layer contracts (import-linter, pyproject.toml)
	$(VENV)/bin/ruff check analysis workloads tests benchmarks
	$(VENV)/bin/lint-imports

schema: setup  ## write docs/campaign.schema.json (the campaign spec's JSON Schema, for editors)
	$(PY) -m analysis.campaign.spec_schema > docs/campaign.schema.json

bench: setup  ## parse-speed benchmark, DLPERF_REPO=<checkout of Oneflow-Inc/DLPerf> (figures to stdout)
	$(PY) benchmarks/parse_speed.py

lab: setup example-store  ## start JupyterLab on the project folder, opening notebooks/10_analyse (127.0.0.1, LAB_PORT=8888; prints the URL)
	VENV=$(VENV) bash scripts/lab.sh

#: results store of the two bundled GPT campaigns (fp32, then bf16 weights) that 40_trends shows;
#: made by `dlperf store add`, not committed, so it is always in the store's current format
EXAMPLE_STORE := data/example_store
EXAMPLE_CAMPAIGNS := data/raw_logs/gpt_4gpu data/raw_logs/gpt_4gpu_bf16w

example-store: $(EXAMPLE_STORE)/campaigns  ## the results store 40_trends shows by default (data/example_store)

$(EXAMPLE_STORE)/campaigns: $(addsuffix /status.json,$(EXAMPLE_CAMPAIGNS)) | setup
	rm -rf $(EXAMPLE_STORE) $(EXAMPLE_STORE).tmp
	for c in $(EXAMPLE_CAMPAIGNS); do $(VENV)/bin/dlperf store add $$c --store $(EXAMPLE_STORE).tmp || exit 1; done
	mv $(EXAMPLE_STORE).tmp $(EXAMPLE_STORE)

clean:  ## remove caches (keeps .venv)
	rm -rf .pytest_cache .ruff_cache build *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
