# What GTKWave shows when it opens a save file written by arnsim, checked inside GTKWave itself:
#
#     xvfb-run -a gtkwave -S testbenches/gtkw_open.tcl FILE.gtkw
#
# prints one line, `gtkw-open: ok FILE: ...` or `gtkw-open: FAIL FILE: reasons`, and quits.
#
# - Every row of the save file is on screen (GTKWave drops, without a word, a row whose name is
#   not a signal of the dump).
# - No two rows read the same in the names column.
# - The view: a fabric dump opens on its whole window, from its first time stamp (the primary
#   marker there too) to past the end of its last sample, with at most 5% to spare; a block dump
#   (signals under TOP) from time 0 on its first 100 cycles (5120 ps each, from 2560 ps), or on
#   the whole run when it is shorter.
# - Values, read at the end of the dump: one-bit rows binary; a fabric row decimal, never
#   hexadecimal; a block row hexadecimal only for masks and packed fields (req_, gnt_, _mask_,
#   _ports_, over_, root_info_) and decimal otherwise; detector states (detector_state, state_q)
#   through a translate filter, reading idle, wait or root.

set problems {}
proc problem {msg} {
    global problems
    if {[llength $problems] < 6} { lappend problems $msg }
}

set save [gtkwave::getSaveFileName]
set fh [open $save]
set text [read $fh]
close $fh
# Signal rows of the save file: a name, or `+{alias} name`.
set wanted 0
foreach line [split $text "\n"] {
    if {[regexp {^(\+\{|[A-Za-z_])} $line]} { incr wanted }
}

set start [gtkwave::getWindowStartTime]
set end [gtkwave::getWindowEndTime]
set min [gtkwave::getMinTime]
set max [gtkwave::getMaxTime]
set marker [gtkwave::getMarker]
set full [gtkwave::getDisplayedSignals]
set block [string match "TOP.*" [lindex $full 0]]

# The view.
set half 2560
if {$block} {
    set want_start 0
    set want_end [expr {$half + 100 * 2 * $half}]
    if {$max < $want_end} { set want_end $max }
} else {
    set want_start $min
    set want_end [expr {$max + $half}]
}
set slack [expr {($want_end - $want_start) / 20}]
if {$start != $want_start || $marker != $want_start} {
    problem "opens at $start (marker $marker), not $want_start"
}
if {$end < $want_end || $end > $want_end + $slack} {
    problem "shows $start..$end ps, not $want_start..$want_end"
}

# The rows.
gtkwave::setMarker $max
set n [gtkwave::getTotalNumTraces]
set k 0
array set seen {}
for {set i 0} {$i < $n} {incr i} {
    set flags [gtkwave::getTraceFlagsFromIndex $i]
    # Blank rows, group starts and ends.
    if {$flags & 0x1800200} { continue }
    set name [lindex $full $k]
    incr k
    set shown [gtkwave::getTraceNameFromIndex $i]
    set value [gtkwave::getTraceValueAtMarkerFromIndex $i]
    if {[info exists seen($shown)]} {
        problem "two rows read $shown"
    }
    set seen($shown) 1
    set leaf [lindex [split [lindex [split $name {[}] 0] .] end]
    set wide [regexp {\[[0-9]+:[0-9]+\]$} $name]
    if {[regexp {^(detector_state|state_q)$} $leaf] && !($flags & 0x2000)} {
        problem "$shown not through the states filter"
    }
    if {$flags & 0x2000} {
        if {[lsearch -exact {idle wait root} $value] < 0} {
            problem "$shown reads `$value` through its filter"
        }
    } elseif {!$wide} {
        if {!($flags & 0x8)} { problem "$shown: one bit not in binary (flags $flags)" }
    } elseif {$flags & 0x2} {
        if {!$block || ![regexp {req_|gnt_|_mask_|_ports_|over_|root_info_} $leaf]} {
            problem "$shown in hexadecimal"
        }
    } elseif {!($flags & 0x4)} {
        problem "$shown not in decimal (flags $flags)"
    } elseif {![regexp {^[0-9]+$} $value]} {
        problem "$shown reads `$value`, not a decimal number"
    }
}
if {$k != $wanted} {
    problem "$k rows on screen of the $wanted in the save file"
}

if {[llength $problems]} {
    puts "gtkw-open: FAIL $save: [join $problems {; }]"
} else {
    puts "gtkw-open: ok $save: $k rows, view $start..$end ps of the dump $min..$max"
}
gtkwave::/File/Quit
