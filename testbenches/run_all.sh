#!/usr/bin/env bash
# Runs every test of the model: unit tests, proptest properties, and the HDL cross-check of every
# block against its Verilated SystemVerilog twin. Installs Verilator 5 (with ccache, which compiles
# Verilator's runtime once for the many builds, and clang, which compiles the switch's models with
# less CPU than g++), the OTF2 library and otf2-print for the OTF2 trace tests, and Open MPI for
# the MPI ranks' tests, from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=""
command -v verilator >/dev/null 2>&1 || missing="$missing verilator"
command -v ccache >/dev/null 2>&1 || missing="$missing ccache"
command -v clang++ >/dev/null 2>&1 || missing="$missing clang"
command -v vcd2fst >/dev/null 2>&1 && command -v gtkwave >/dev/null 2>&1 || missing="$missing gtkwave"
command -v xvfb-run >/dev/null 2>&1 && command -v xauth >/dev/null 2>&1 || missing="$missing xvfb xauth"
command -v otf2-print >/dev/null 2>&1 && dpkg -s libotf2-trace-dev >/dev/null 2>&1 || missing="$missing libotf2-trace-dev otf2-tools"
# MPI ranks (the `mpi` feature): Open MPI, and libclang for the bindings to its headers.
command -v mpirun >/dev/null 2>&1 || missing="$missing openmpi-bin"
dpkg -s libopenmpi-dev libclang-dev >/dev/null 2>&1 || missing="$missing libopenmpi-dev libclang-dev"
if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
major=$(verilator --version | awk '{print $2}' | cut -d. -f1)
if [ "${major:-0}" -lt 5 ]; then
    echo "Verilator 5 or newer is needed, found: $(verilator --version)" >&2
    exit 1
fi
echo "using $(verilator --version)"

cargo test --all-features "$@"

# The checks below run the program the tests ran: built with the tests' dependencies and features
# (`cargo run` would build the library and program again without them, minutes on two cores); a
# no-op after a whole `cargo test`, a build of the program and that test after a filtered one.
cargo test --all-features --no-run --quiet --test outputs
arnsim="${CARGO_TARGET_DIR:-target}/debug/arnsim"
test -x "$arnsim"

# A fabric waveform that GTKWave's own converter must accept.
smoke=target/smoke
rm -rf "$smoke"
"$arnsim" run default --out "$smoke" --set sim_time=100us \
    --vcd "$smoke/fabric.vcd" --scope 'fabric.s2_*.out*' --scope 'fabric.n5.*' --trigger-before 5us
vcd2fst "$smoke/fabric.vcd" "$smoke/fabric.fst" >/dev/null
test -s "$smoke/fabric.fst"
echo "waveform check: vcd2fst converted $smoke/fabric.vcd"
# The same dump written as FST by arnsim itself, read back by GTKWave's own FST library.
"$arnsim" run default --out "$smoke/native-run" --set sim_time=100us \
    --fst "$smoke/native/fabric.fst" --scope 'fabric.s2_*.out*' --scope 'fabric.n5.*' --trigger-before 5us
fst2vcd "$smoke/native/fabric.fst" > "$smoke/native/back.vcd"
grep -q 'detector_state' "$smoke/native/back.vcd"
echo "waveform check: fst2vcd read $smoke/native/fabric.fst"
# A replay's port interface written as FST by arnsim, read back the same way.
"$arnsim" run default --out "$smoke/rec-run" --set sim_time=20us --record-switch s2_1 >/dev/null
"$arnsim" replay "$smoke/rec-run/s2_1.rec" --fst "$smoke/replay.fst" --from 1000 --to 1100 >/dev/null
fst2vcd "$smoke/replay.fst" > "$smoke/replay-back.vcd"
grep -q 'in_flit_desc_i' "$smoke/replay-back.vcd"
echo "waveform check: fst2vcd read $smoke/replay.fst"

# The save files as GTKWave opens them, headless under Xvfb (testbenches/gtkw_open.tcl): the dump
# above, a 40 us window of two stages' outputs and a leaf switch, and every block of the demo.
"$arnsim" run default --out "$smoke/window-run" --set sim_time=100us \
    --vcd "$smoke/window/f.vcd" --scope 'fabric.s2_*.out*' --scope 'fabric.s1_0.*' --from 40us --to 80us
"$arnsim" demo --out "$smoke/demo" >/dev/null
opened=0
for g in "$smoke/fabric.gtkw" "$smoke/window/f.gtkw" "$smoke"/demo/*.gtkw; do
    line=$(timeout 60 xvfb-run -a gtkwave -S testbenches/gtkw_open.tcl "$g" 2>&1 | grep '^gtkw-open: ' || true)
    if [[ "$line" != "gtkw-open: ok "* ]]; then
        echo "GTKWave check of $g failed: ${line:-GTKWave gave no result (does xvfb-run start Xvfb?)}" >&2
        exit 1
    fi
    echo "$line"
    opened=$((opened + 1))
done
echo "waveforms: $((1 + opened)) passed, 0 failed"

# Both models of a switch side by side (testbenches/hdl/waves_pair.sh): switch s2_1 of default
# recorded for 80 us (a congestion root, ARNs in and out, adapted packets), recording cycles
# 15280..15600 dumped by the Rust cycle engine and by the Verilated switch (the build of the
# switch_hdl test's s2_1, same parameters), merged with every signal's value changes compared
# (--check), and the merged save file opened in GTKWave.
start=$(date +%s)
pair=target/smoke/pair
"$arnsim" run default --out "$pair" --set sim_time=80us \
    --record-switch s2_1 >/dev/null
if ! said=$(ARNSIM="$arnsim" bash testbenches/hdl/waves_pair.sh \
    "$pair/s2_1.rec" --from 15280 --to 15600 --out "$pair" --check 2>&1); then
    echo "$said" >&2
    echo "waves side by side of $pair/s2_1.rec failed" >&2
    exit 1
fi
echo "$said" | grep -E '^(waves-pair|switch replay|replay_switch)' || true
line=$(timeout 60 xvfb-run -a gtkwave -S testbenches/gtkw_open.tcl "$pair/both.gtkw" 2>&1 | grep '^gtkw-open: ' || true)
if [[ "$line" != "gtkw-open: ok "* ]]; then
    echo "GTKWave check of $pair/both.gtkw failed: ${line:-GTKWave gave no result}" >&2
    exit 1
fi
echo "$line"
echo "waves side by side: rust and hdl alike, $pair/both.gtkw opened ($(( $(date +%s) - start )) s)"
