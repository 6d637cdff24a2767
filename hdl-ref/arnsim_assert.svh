// Assertion macros of the hdl-ref blocks, in the manner of OpenTitan's prim_assert.
//
// Every block includes this file and writes its executable spec with these macros, one named
// property per rule: a_<name> for an assertion, m_<name> for an assumption on the inputs.
// The clock and reset default to the blocks' clk_i and rst_ni (synchronous, active low).
//
//   `ASSERT(name, prop, clk = clk_i, rst_n = rst_ni)
//       Concurrent assertion sampled at the rising edge, disabled while rst_n is low. prop may use
//       |->, |=>, $past, $stable, $rose, $fell, $onehot0 (Verilator 5.006 supports these).
//       A select of an unpacked array inside a property stops Verilator 5.006 with an internal
//       error (V3Unknown); such a value is first assigned to a packed check signal.
//   `ASSERT_NEVER(name, prop, clk = clk_i, rst_n = rst_ni)
//       prop never holds outside reset (a boolean expression).
//   `ASSERT_KNOWN(name, sig, clk = clk_i, rst_n = rst_ni)
//       sig has no X or Z bit outside reset. sig must be a packed value: Verilator 5.006 fails
//       on $isunknown of an unpacked array element, so a block packs such outputs first.
//       Being a two-state simulator, Verilator always finds the check true; a four-state
//       simulator catches X/Z with it.
//   `ASSUME(name, prop, clk = clk_i, rst_n = rst_ni)
//       Contract on the inputs. A formal tool takes it as an assumption; a simulator, Verilator
//       included, checks it like an assertion, so a stimulus that breaks the contract fails
//       with the assumption's name.
//   `ASSERT_INIT(name, cond)
//       Elaboration-time check of parameters: when cond is false the elaboration stops with
//       $fatal naming the check (Verilator 5.006 reports it as %Warning-USERFATAL and the
//       build fails). cond must be a constant expression.
//
// A failing concurrent assertion prints, under Verilator,
//   [<time>] %Error: <file>:<line>: Assertion failed in TOP.<hierarchy>.<name>: 'assert' failed.
// (assumptions too) and stops the simulation; +verilator+error+limit+<n> lets it run on.
// The sampled values are those of the cycle that the edge closes, so a failure reported at
// time t concerns cycle (t - 2560) / 5120 - 1 of the testbench time base.
//
// Liveness is bounded: Verilator 5.006 has no s_eventually, no ##[m:n] and no unbounded
// sequences, so a "sooner or later" rule is written as a counter kept beside the block
// (under `ifndef SYNTHESIS) and an assertion that the counter stays under its bound.
//
// With SYNTHESIS defined the concurrent macros expand to nothing.

`ifndef ARNSIM_ASSERT_SVH
`define ARNSIM_ASSERT_SVH

`ifndef SYNTHESIS

`define ASSERT(__name, __prop, __clk = clk_i, __rst_n = rst_ni) \
  __name: assert property (@(posedge __clk) disable iff (!(__rst_n)) (__prop));

`define ASSERT_NEVER(__name, __prop, __clk = clk_i, __rst_n = rst_ni) \
  __name: assert property (@(posedge __clk) disable iff (!(__rst_n)) !(__prop));

`define ASSERT_KNOWN(__name, __sig, __clk = clk_i, __rst_n = rst_ni) \
  __name: assert property (@(posedge __clk) disable iff (!(__rst_n)) !$isunknown(__sig));

`define ASSUME(__name, __prop, __clk = clk_i, __rst_n = rst_ni) \
  __name: assume property (@(posedge __clk) disable iff (!(__rst_n)) (__prop));

`else

`define ASSERT(__name, __prop, __clk = clk_i, __rst_n = rst_ni)
`define ASSERT_NEVER(__name, __prop, __clk = clk_i, __rst_n = rst_ni)
`define ASSERT_KNOWN(__name, __sig, __clk = clk_i, __rst_n = rst_ni)
`define ASSUME(__name, __prop, __clk = clk_i, __rst_n = rst_ni)

`endif

`define ASSERT_INIT(__name, __cond) \
  if (!(__cond)) begin : __name \
    $fatal(1, "ASSERT_INIT %s failed: %s", `"__name`", `"__cond`"); \
  end

`endif  // ARNSIM_ASSERT_SVH
