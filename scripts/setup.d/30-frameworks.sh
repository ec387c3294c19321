#!/usr/bin/env bash
# Framework environments for the runner tests (BENCHCAT_SETUP_FOR=test only; the site needs none).
# One virtual environment per framework, from runners/requirements/<fw>-cpu.txt, in
# ${BENCHCAT_ENVS:-~/.cache/benchcat/envs}/<fw>-<flavour>-<hash of the pins>: shared by every clone,
# a new one only when the pins change.
# Measured from scratch on a 2-core machine: pytorch 106 s (1.0 GB), mxnet 24 s (0.3 GB),
# tensorflow 55 s (1.6 GB), mindspore 93 s (2.8 GB): about 5 minutes and 5.7 GB in all.
# Sourced by scripts/setup (set -euo pipefail is in force).
if [ "${BENCHCAT_SETUP_FOR:-test}" = "test" ] && [ -z "${BENCHCAT_SKIP_FRAMEWORKS:-}" ]; then
  py=$(command -v python3.11 || command -v python3)
  "$py" -m benchcat.envs setup all
fi
