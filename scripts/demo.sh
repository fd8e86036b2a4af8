#!/usr/bin/env bash
# The main job: install, serve the demo site on 127.0.0.1, crawl it with the
# example project and write a template-free feed (example_project/output/items.jsonl).
EXTRAS="" source "$(dirname "$0")/_venv.sh"
exec .venv/bin/python example_project/run_demo.py "$@"
