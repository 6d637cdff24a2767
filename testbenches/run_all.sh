#!/usr/bin/env bash
# Runs every test of the model: unit tests, proptest properties, and the HDL cross-check of every
# block against its Verilated SystemVerilog twin. Installs Verilator 5 from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v verilator >/dev/null 2>&1; then
    echo "verilator not found: installing Debian's verilator package"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq verilator >/dev/null
fi
major=$(verilator --version | awk '{print $2}' | cut -d. -f1)
if [ "${major:-0}" -lt 5 ]; then
    echo "Verilator 5 or newer is needed, found: $(verilator --version)" >&2
    exit 1
fi
echo "using $(verilator --version)"

cargo test --all-features "$@"
