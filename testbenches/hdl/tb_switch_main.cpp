// Verilator driver of the switch replay (tb_switch.sv, top class Vtb).
//
// Clocks the testbench on the time base of sim_main.cpp (1 ps ticks, 5120 ps period, the first
// rising edge at 2560 ps with rst_ni low, rst_ni released at 5120 ps). When the testbench
// reports a mismatch, the replay runs again from reset with a VCD of the clock cycles around it
// (+vcd=FILE, default switch_mismatch.vcd; +vcd_window=N cycles before it, default 64) and the
// program exits with status 1. +vcd=FILE +vcd_from=C +vcd_to=C (driver clock cycles, the LFT
// writes included) dump a window of a run that matches. Prints the replay speed on stderr.
//
// The recording's cycle lines (docs/recording.md) are parsed here, not in SystemVerilog: the
// testbench reads the header itself and asks tb_switch_line for the cycle lines one at a time
// (SystemVerilog's $sscanf took about half of the replay's time on a 12-port switch).
#include "Vtb.h"
#include "Vtb__Dpi.h"
#include "verilated.h"
#include "verilated_vcd_c.h"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// Driver cycle at which the testbench reported a mismatch, and its recording cycle.
bool g_mismatch = false;
uint64_t g_mismatch_clock = 0;
long long g_mismatch_cycle = 0;
uint64_t g_clock = 0;

// The recording being replayed, positioned after its header by open_lines().
std::string g_rec_path;
FILE* g_lines = nullptr;
unsigned long long g_line_no = 0;

void open_lines() {
    if (g_lines) std::fclose(g_lines);
    g_line_no = 0;
    g_lines = std::fopen(g_rec_path.c_str(), "r");
    if (!g_lines) return;
    char buf[512];
    while (std::fgets(buf, sizeof buf, g_lines)) {
        ++g_line_no;
        if (std::strncmp(buf, "end-header", 10) == 0) return;
    }
}

std::string plusarg(VerilatedContext* ctx, const char* name) {
    const char* m = ctx->commandArgsPlusMatch(name);
    if (!m || !*m) return std::string();
    return std::string(m + std::strlen(name) + 1);
}

// One replay from reset; dumps driver cycles [from, to] to vcd_path when it is not empty.
// Returns the number of driver cycles run.
uint64_t run(int argc, char** argv, const std::string& vcd_path, uint64_t from, uint64_t to) {
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);
    ctx->traceEverOn(!vcd_path.empty());
    open_lines();
    auto top = std::make_unique<Vtb>(ctx.get());
    std::unique_ptr<VerilatedVcdC> vcd;
    if (!vcd_path.empty()) {
        vcd = std::make_unique<VerilatedVcdC>();
        top->trace(vcd.get(), 99);
        vcd->open(vcd_path.c_str());
    }
    auto dump = [&](uint64_t cycle) {
        if (vcd && cycle >= from && cycle <= to) vcd->dump(ctx->time());
    };
    const uint64_t period = 5120, half = period / 2;
    top->clk_i = 0;
    top->rst_ni = 0;
    top->eval();
    dump(0);
    uint64_t cycle = 0;
    for (; !ctx->gotFinish(); ++cycle) {
        g_clock = cycle;
        ctx->time(half + cycle * period);
        top->clk_i = 1;
        top->eval();
        dump(cycle);
        if (ctx->gotFinish()) break;
        ctx->time(period + cycle * period);
        top->clk_i = 0;
        top->rst_ni = 1;
        top->eval();
        dump(cycle);
    }
    top->final();
    if (vcd) vcd->close();
    return cycle;
}

}  // namespace

// The next cycle line of the recording, its numbers in f (see tb_switch.sv): 1 when read, 0 at
// the end of the file, -1 (the line printed) when it is not a cycle line of the format.
int tb_switch_line(long long* f) {
    static char buf[512];
    for (int i = 0; i < 16; ++i) f[i] = 0;
    if (!g_lines) return 0;
    while (std::fgets(buf, sizeof buf, g_lines)) {
        ++g_line_no;
        char* p = buf;
        if (*p == '#' || *p == '\n' || *p == '\0') continue;
        auto bad = [&]() {
            std::fprintf(stderr, "%s:%llu: not a cycle line of the recording format: %s",
                         g_rec_path.c_str(), g_line_no, buf);
            return -1;
        };
        auto number = [&](long long* out) {
            while (*p == ' ') ++p;
            if (*p < '0' || *p > '9') return false;
            char* end = nullptr;
            *out = (long long)std::strtoull(p, &end, 10);
            p = end;
            return true;
        };
        auto word = [&]() {
            while (*p == ' ') ++p;
            char c = *p;
            if (c == '\0' || c == '\n') return '\0';
            ++p;
            if (*p != ' ') return '\0';
            return c;
        };
        if (std::strncmp(p, "end ", 4) == 0) {
            p += 4;
            f[3] = 3;
            return number(&f[0]) ? 1 : bad();
        }
        if (!number(&f[0])) return bad();
        const char dir = word();
        if (dir != 'I' && dir != 'O') return bad();
        f[1] = dir == 'O';
        if (!number(&f[2])) return bad();
        const char kind = word();
        int fields;
        if (kind == 'F') {
            f[3] = 0;
            fields = 12;
        } else if (kind == 'C') {
            f[3] = 1;
            fields = 2;
        } else if (kind == 'A') {
            f[3] = 2;
            fields = dir == 'O' ? 5 : 4;
        } else if (kind == 'Q') {
            f[3] = 4;
            fields = 3;
        } else {
            return bad();
        }
        for (int i = 0; i < fields; ++i) {
            if (!number(&f[4 + i])) return bad();
        }
        while (*p == ' ' || *p == '\r') ++p;
        if (*p != '\n' && *p != '\0') return bad();
        return 1;
    }
    return 0;
}

// Called by the testbench at the first cycle with a difference.
void tb_switch_mismatch(long long cycle) {
    g_mismatch = true;
    g_mismatch_clock = g_clock;
    g_mismatch_cycle = cycle;
}

int main(int argc, char** argv) {
    std::string vcd_path, from_s, to_s, window_s;
    {
        auto probe = std::make_unique<VerilatedContext>();
        probe->commandArgs(argc, argv);
        vcd_path = plusarg(probe.get(), "vcd=");
        from_s = plusarg(probe.get(), "vcd_from=");
        to_s = plusarg(probe.get(), "vcd_to=");
        window_s = plusarg(probe.get(), "vcd_window=");
        g_rec_path = plusarg(probe.get(), "rec=");
    }
    const bool window = !from_s.empty() || !to_s.empty();
    const uint64_t from = from_s.empty() ? 0 : std::strtoull(from_s.c_str(), nullptr, 10);
    const uint64_t to = to_s.empty() ? UINT64_MAX : std::strtoull(to_s.c_str(), nullptr, 10);
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t cycles = run(argc, argv, window ? vcd_path : std::string(), from, to);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "switch replay: %llu clock cycles in %.2f s (%.0f cycles/s)\n",
                 (unsigned long long)cycles, secs, secs > 0 ? cycles / secs : 0.0);
    if (!g_mismatch) return 0;
    if (!window) {
        const uint64_t before =
            window_s.empty() ? 64 : std::strtoull(window_s.c_str(), nullptr, 10);
        const std::string path = vcd_path.empty() ? "switch_mismatch.vcd" : vcd_path;
        const uint64_t at = g_mismatch_clock;
        g_mismatch = false;
        run(argc, argv, path, at > before ? at - before : 0, at);
        std::fprintf(stderr,
                     "switch replay: VCD of driver cycles %llu..%llu (recording cycle %lld "
                     "at the end) written to %s\n",
                     (unsigned long long)(at > before ? at - before : 0),
                     (unsigned long long)at, g_mismatch_cycle, path.c_str());
    }
    return 1;
}
