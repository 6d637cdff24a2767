#!/usr/bin/env bash
# The Rust cycle engine and the Verilated hdl-ref/switch.sv side by side on one window of a switch
# recording (docs/waveforms.md, "Both models of a switch side by side"):
#
#   testbenches/hdl/waves_pair.sh REC [--from T] [--to T] [--out DIR] [--check]
#
# 1. arnsim replay REC --vcd DIR/rust.vcd --from T --to T: the cycle engine's dump of the window
#    (recording cycles, or times such as 10us at 5.12 ns a cycle; the recording's whole length
#    without them), which prints the Verilated replay's clock cycles of the same window;
# 2. testbenches/hdl/replay_switch.sh REC --vcd DIR/hdl.vcd -- +vcd_from=A +vcd_to=B: the
#    Verilated replay (built once per parameter set) dumping those clock cycles;
# 3. arnsim waves-pair --rust DIR/rust.vcd --hdl DIR/hdl.vcd --out DIR/both.vcd [--check]: the
#    merged dump and its save file, every signal's value changes compared (--check: a difference
#    fails and nothing is written).
#
# Then: gtkwave DIR/both.gtkw. DIR defaults to the recording's folder. arnsim is run as $ARNSIM
# (default: cargo run --quiet --release --).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
rec=${1:?usage: waves_pair.sh REC [--from T] [--to T] [--out DIR] [--check]}
shift
from=()
to=()
out=$(dirname "$rec")
check=()
while [ $# -gt 0 ]; do
    case "$1" in
        --from) from=(--from "$2"); shift ;;
        --to) to=(--to "$2"); shift ;;
        --out) out=$2; shift ;;
        --check) check=(--check) ;;
        *) echo "waves_pair.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out"
rec=$(realpath "$rec")
out=$(realpath "$out")
read -r -a arnsim <<< "${ARNSIM:-cargo run --quiet --release --}"

said=$(cd "$root" && "${arnsim[@]}" replay "$rec" --vcd "$out/rust.vcd" \
    ${from[@]+"${from[@]}"} ${to[@]+"${to[@]}"})
echo "$said"
window=$(printf '%s\n' "$said" | grep -o '+vcd_from=[0-9]* +vcd_to=[0-9]*' | head -1)
[ -n "$window" ] || { echo "waves_pair.sh: arnsim replay named no window" >&2; exit 1; }
# shellcheck disable=SC2086
if ! bash "$root/testbenches/hdl/replay_switch.sh" "$rec" --vcd "$out/hdl.vcd" -- $window; then
    # A replay that differs from the recording stops at its first mismatch: its dump ends there,
    # and the merged dump shows both models up to it.
    echo "waves_pair.sh: the Verilated replay differs from the recording (above)" >&2
    [ -s "$out/hdl.vcd" ] || exit 1
fi
(cd "$root" && "${arnsim[@]}" waves-pair --rust "$out/rust.vcd" --hdl "$out/hdl.vcd" \
    --out "$out/both.vcd" ${check[@]+"${check[@]}"})
