#!/usr/bin/env bash
# Replays a switch recording (docs/recording.md) through the Verilated hdl-ref/switch.sv and
# compares every port output, cycle by cycle (testbenches/hdl/tb_switch.sv).
#
#   testbenches/hdl/replay_switch.sh REC [--build-only] [--gflags] [--vcd FILE] [-- +plusargs...]
#
# --gflags prints the -G values of the recording and exits; --build-only builds and exits.
# The switch's sizes and thresholds are Verilator -G values, so the testbench is built once per
# parameter set, in target/hdl/switch-<hash of the -G values>/ (reused when present). The header
# maps to them as follows:
#   param ports P vcs V vc_capacity C max_packets N lmc L banks B rows R
#                                                     -GP -GV -GCap=C -GPool=N -GLmc -GRows
#   param arn_entries E arn_ttl T arn_gap G hcdth H lcdth L fcth F crt C adaptive_threshold A
#         adapted_refresh R                           -GEntries -GTtl -GArnGap -GHcdth -GLcdth
#                                                     -GFcth -GCrt (at least 1) -GAdaptiveTh
#   param snoop_entries E snoop_ttl T (snooped AR)    -GSnEntries -GSnTtl
#   param route_cache_entries E (flow routing)        -GPrcEntries
#   out_capacity p c (per port)                       -GOutCaps=1024'h... (port p in bits 16p+15:16p)
# The rest of the header (the switch line: id, stage, up ports, seed; the routing line: mode,
# scheme and its VCs, arbitration; adapted_refresh) is the switch's configuration, which the
# testbench drives on cfg_i at run time: one build replays every switch of a fabric and every
# routing mode.
# Verilator builds with one job (VERILATOR_JOBS to change it). The replay prints
#   switch replay: <cycles> cycles, 0 mismatches
# and exits 0, or prints the first differing cycle's signals, writes a VCD around it (--vcd,
# default <build dir>/mismatch.vcd) and exits 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
rec=${1:?usage: replay_switch.sh REC [--build-only] [--vcd FILE] [-- +plusargs...]}
shift
build_only=0
print_gflags=0
vcd=""
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --build-only) build_only=1 ;;
        --gflags) print_gflags=1 ;;
        --vcd) vcd=$2; shift ;;
        --) shift; extra=("$@"); break ;;
        *) echo "replay_switch.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -r "$rec" ] || { echo "replay_switch.sh: cannot read $rec" >&2; exit 2; }

# The -G values from the header (awk stops at end-header).
gflags=$(awk '
    NR == 1 && $0 != "arnsim-switch-recording 2" {
        print "replay_switch.sh: not a switch recording (format 2)" > "/dev/stderr"; exit 2
    }
    $1 == "param" && $2 == "ports" {
        printf "-GP=%s -GV=%s -GCap=%s -GPool=%s -GLmc=%s -GRows=%s ", $3, $5, $7, $9, $11, $15
        ports = $3
    }
    $1 == "param" && $2 == "arn_entries" {
        printf "-GEntries=%s -GTtl=%s -GArnGap=%s -GHcdth=%s -GLcdth=%s -GFcth=%s -GCrt=%d ",
               $3, $5, $7, $9, $11, $13, ($15 == 0 ? 1 : $15)
        printf "-GAdaptiveTh=%s ", $17
    }
    $1 == "param" && $2 == "snoop_entries" { printf "-GSnEntries=%s -GSnTtl=%s ", $3, $5 }
    $1 == "param" && $2 == "route_cache_entries" { printf "-GPrcEntries=%s ", $3 }
    $1 == "out_capacity" { cap[$2] = $3 }
    $1 == "end-header" {
        hex = ""
        for (p = 63; p >= 0; p--) hex = hex sprintf("%04x", (p in cap) ? cap[p] : 1)
        printf "-GOutCaps=1024'"'"'h%s\n", hex
        exit 0
    }
' "$rec")

if [ $print_gflags = 1 ]; then
    echo "$gflags"
    exit 0
fi
# ARNSIM_HDL_DIR: another folder of the switch's sources (default hdl-ref/); ARNSIM_HDL_OPT: the
# C++ optimisation of the model (e.g. -O0, a shorter build for a short replay). Both are hashed.
# By default the code run every cycle is compiled -O1 and the code run once (initial blocks and
# the first settling, Verilator's "slow" files, nearly half of the C++) -O0: at 12 ports and 4
# VCs this halves the build against -Os/-O2 and replays at the same speed.
hdl=${ARNSIM_HDL_DIR:-$root/hdl-ref}
opt=${ARNSIM_HDL_OPT:-}
if [ -n "$opt" ]; then
    cxx=(-MAKEFLAGS "OPT_FAST=$opt" -MAKEFLAGS "OPT_SLOW=$opt" -MAKEFLAGS "OPT_GLOBAL=$opt")
else
    cxx=(-MAKEFLAGS OPT_FAST=-O1 -MAKEFLAGS OPT_SLOW=-O0 -MAKEFLAGS OPT_GLOBAL=-O1)
fi
# The C++ compiler: ARNSIM_HDL_CXX, else clang++ when installed (it compiles the model's C++ with a
# third less CPU than g++, which replays at the same speed), else Verilator's default (g++).
compiler=${ARNSIM_HDL_CXX:-}
if [ -z "$compiler" ] && command -v clang++ >/dev/null 2>&1; then compiler=clang++; fi
if [ -n "$compiler" ]; then
    cxx+=(-MAKEFLAGS "CXX=$compiler" -MAKEFLAGS "LINK=$compiler")
fi
# Modules are not inlined: one C++ class per module rather than a copy per instance (49 MB of C++
# instead of 76 MB at 12 ports and 4 VCs, built with a fifth less CPU, replayed at the same speed).
vflags=(--inline-mult 1)
hash=$(printf '%s' "$gflags${ARNSIM_HDL_DIR:+ $hdl} ${cxx[*]} ${vflags[*]}" | sha1sum | cut -c1-12)
dir="$root/target/hdl/switch-$hash"
mkdir -p "$dir"
srcs=(
    "$root/hdl-ref/switch_pkg.sv"
    "$root/hdl-ref/arn_table.sv"
    "$root/hdl-ref/congestion_detector.sv"
    "$root/hdl-ref/credit_counter.sv"
    "$root/hdl-ref/lft_banks.sv"
    "$root/hdl-ref/rr_arbiter.sv"
    "$root/hdl-ref/routing_stage.sv"
    "$root/hdl-ref/arn_sender.sv"
    "$root/hdl-ref/input_port_ctrl.sv"
    "$root/hdl-ref/fecn_marker.sv"
    "$root/hdl-ref/output_port.sv"
    "$root/hdl-ref/congestion_point.sv"
    "$root/hdl-ref/congestion_table.sv"
    "$root/hdl-ref/cnm_unit.sv"
    "$root/hdl-ref/arn_cmd_queue.sv"
    "$root/hdl-ref/route_cache.sv"
    "$root/hdl-ref/flow_unit.sv"
    "$root/hdl-ref/switch.sv"
    "$root/testbenches/hdl/tb_switch.sv"
    "$root/testbenches/hdl/tb_switch_main.cpp"
)
srcs=("${srcs[@]/#$root\/hdl-ref\//$hdl/}")
# Rebuild when a source or an included file (hdl-ref's .svh) is newer than the executable.
need_build=1
if [ -x "$dir/sim" ]; then
    need_build=0
    for s in "${srcs[@]}" "$hdl"/*.svh; do
        [ "$s" -nt "$dir/sim" ] && need_build=1
    done
fi
# With ccache installed, Verilator's runtime (the same C++ in every build) is compiled once.
if [ -z "${OBJCACHE+x}" ] && command -v ccache >/dev/null 2>&1; then
    export OBJCACHE=ccache
fi
if [ $need_build = 1 ]; then
    echo "replay_switch.sh: building $dir ($gflags)" >&2
    start=$(date +%s)
    # shellcheck disable=SC2086
    verilator --cc --exe --build -j "${VERILATOR_JOBS:-1}" --trace --assert -Wall -O3 \
        --x-assign 0 --x-initial 0 --prefix Vtb --top-module tb_switch "${vflags[@]}" \
        "${cxx[@]}" \
        -I"$hdl" -I"$root/testbenches/hdl" --Mdir "$dir" -o sim \
        $gflags "${srcs[@]}" > "$dir/build.log" 2>&1 || {
        cat "$dir/build.log" >&2
        echo "replay_switch.sh: verilator build failed" >&2
        exit 2
    }
    echo "replay_switch.sh: built in $(( $(date +%s) - start )) s" >&2
fi
[ $build_only = 1 ] && exit 0
exec "$dir/sim" +rec="$rec" +vcd="${vcd:-$dir/mismatch.vcd}" ${extra[@]+"${extra[@]}"}
