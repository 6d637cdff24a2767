// Generic Verilator driver for every block testbench (top class Vtb).
//
// Clock and reset follow the time base of the Rust VCD writer (src/trace/vcd_writer.rs):
// 1 ps ticks, 5120 ps period, reset edge at 2560 ps with rst_ni low, rst_ni released at 5120 ps;
// cycle c opens at the rising edge 2560 + 5120 c. The testbench itself reads the stimulus and
// writes the trace; this driver only clocks it and dumps the VCD window.
//
// Plusargs: +vcd=FILE (optional), +vcd_from=C, +vcd_to=C (cycles, inclusive), and the
// testbench's own +stim=FILE +trace=FILE.
#include "Vtb.h"
#include "verilated.h"
#include "verilated_vcd_c.h"
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

// Value of +NAMEVALUE for a name ending in "=", or "" when absent. (commandArgsPlusMatch returns a shared buffer,
// so the value is copied at once.)
static std::string plusarg(VerilatedContext* ctx, const char* name) {
    const char* m = ctx->commandArgsPlusMatch(name);
    if (!m || !*m) return std::string();
    return std::string(m + std::strlen(name) + 1);  // skip "+name"
}

int main(int argc, char** argv) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    ctx->traceEverOn(true);
    auto top = std::make_unique<Vtb>(ctx.get());

    const uint64_t period = 5120, half = period / 2;
    const std::string vcd_path = plusarg(ctx.get(), "vcd=");
    const std::string from_s = plusarg(ctx.get(), "vcd_from=");
    const std::string to_s = plusarg(ctx.get(), "vcd_to=");
    const uint64_t from = from_s.empty() ? 0 : std::strtoull(from_s.c_str(), nullptr, 10);
    const uint64_t to = to_s.empty() ? UINT64_MAX : std::strtoull(to_s.c_str(), nullptr, 10);
    std::unique_ptr<VerilatedVcdC> vcd;
    if (!vcd_path.empty()) {
        vcd = std::make_unique<VerilatedVcdC>();
        top->trace(vcd.get(), 99);
        vcd->open(vcd_path.c_str());
    }
    auto dump = [&](uint64_t cycle) {
        if (vcd && cycle >= from && cycle <= to) vcd->dump(ctx->time());
    };

    top->clk_i = 0;
    top->rst_ni = 0;
    top->eval();
    dump(0);
    for (uint64_t cycle = 0; !ctx->gotFinish(); ++cycle) {
        ctx->time(half + cycle * period);
        top->clk_i = 1;
        top->eval();
        if (ctx->gotFinish()) break;
        dump(cycle);
        ctx->time(period + cycle * period);
        top->clk_i = 0;
        top->rst_ni = 1;
        top->eval();
        dump(cycle);
    }
    top->final();
    if (vcd) vcd->close();
    return 0;
}
