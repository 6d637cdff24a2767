// Shared testbench plumbing, included inside every tb_<block> module.
// - +stim=FILE: header line of input names, then one line of hex values per cycle.
// - +trace=FILE: written here: the header line TRACE_HEADER (at the reset edge), then one line
//   per cycle.
// - cycle_q counts cycles since reset, as the Rust VCD's cycle_q does.
// - columns(head, name, n) appends the trace header's columns name[0] .. name[n-1] to head.
// The including module defines TRACE_HEADER, reads its stimulus at each rising edge into
// the DUT input registers (non-blocking, so the DUT samples the previous values), and writes
// its trace line at the same edge from pre-edge values.
  integer stim_fd, trace_fd, n_read;
  string  stim_path, trace_path, header;
  logic [63:0] cycle_q;

  initial begin
    if (!$value$plusargs("stim=%s", stim_path)) $fatal(1, "missing +stim=FILE");
    if (!$value$plusargs("trace=%s", trace_path)) $fatal(1, "missing +trace=FILE");
    stim_fd = $fopen(stim_path, "r");
    if (stim_fd == 0) $fatal(1, "cannot open stimulus %s", stim_path);
    trace_fd = $fopen(trace_path, "w");
    if (trace_fd == 0) $fatal(1, "cannot open trace %s", trace_path);
    n_read = $fgets(header, stim_fd);
  end

  // The trace header goes out at the reset edge, after every initial block has run (a
  // testbench may build TRACE_HEADER in one), and before the first trace line.
  logic header_done_q = 1'b0;
  always @(posedge clk_i) begin
    if (!header_done_q) $fwrite(trace_fd, "%s\n", TRACE_HEADER);
    header_done_q <= 1'b1;
  end

  always @(posedge clk_i) begin
    if (!rst_ni) cycle_q <= '0;
    else         cycle_q <= cycle_q + 64'd1;
  end

  final begin
    $fclose(stim_fd);
    $fclose(trace_fd);
  end

  function automatic string columns(string head, string name, int unsigned n);
    string s, col_idx;
    s = head;
    for (int unsigned i = 0; i < n; i++) begin
      col_idx = $sformatf("%0d", i);
      s = {s, (s.len() == 0) ? "" : " ", name, "[", col_idx, "]"};
    end
    return s;
  endfunction
