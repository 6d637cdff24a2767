// Checks of switch.sv (the switch): the packed views they read, the parameters' ranges, the
// input contract (ASSUME), the outputs known and the invariants (ASSERT). Included in the module's
// body, after its logic; the macros are in arnsim_assert.svh.
`ifndef SYNTHESIS
  // Flits in and out of the switch since reset, and flits buffered now.
  logic [63:0] chk_in_q, chk_out_q, chk_buffered;
  logic [31:0] chk_credits_out;
  logic [P-1:0] chk_credit_le_cap;
  logic [P-1:0][3:0] chk_out_vc;
  logic [P-1:0][$bits(desc_t)-1:0] chk_out_desc;
  logic [P-1:0][71:0] chk_out_arn;
  logic [P-1:0][8*V-1:0] chk_out_credit;
  logic [P-1:0] chk_out_vc_ok;
  always_comb begin
    chk_buffered    = '0;
    chk_credits_out = '0;
    for (int p = 0; p < P; p++) begin
      chk_buffered         = chk_buffered + 64'(buffered[p]);
      chk_out_vc[p]        = out_flit_vc_o[p];
      chk_out_desc[p]      = out_flit_desc_o[p];
      chk_out_arn[p]       = out_arn_o[p];
      chk_out_vc_ok[p]     = !out_flit_valid_o[p] || 32'(out_flit_vc_o[p]) < V;
      chk_credit_le_cap[p] = 1'b1;
      for (int v = 0; v < V; v++) begin
        chk_credits_out             = chk_credits_out + 32'(out_credit_o[p][v]);
        chk_out_credit[p][8*v +: 8] = out_credit_o[p][v];
        if (32'(credits[p][v]) > 32'(OutCaps[16*p +: 16])) chk_credit_le_cap[p] = 1'b0;
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_in_q  <= '0;
      chk_out_q <= '0;
    end else begin
      chk_in_q  <= chk_in_q + 64'($countones(in_flit_valid_i));
      chk_out_q <= chk_out_q + 64'($countones(out_flit_valid_o));
    end
  end
`endif

  // Parameters (checked at elaboration).
  // P in 1..64 ports, V in 1..16 VCs.
  `ASSERT_INIT(a_param_ports, P >= 1 && P <= 64)
  `ASSERT_INIT(a_param_vcs, V >= 1 && V <= 16)
  // Input VC capacity, pool and LFT in range.
  `ASSERT_INIT(a_param_cap, Cap >= 1 && Cap <= 65535)
  `ASSERT_INIT(a_param_pool, Pool >= 1 && Pool <= 65534)
  `ASSERT_INIT(a_param_lft, Lmc <= 4 && Rows >= 1 && Rows <= 49152 && (Rows << Lmc) <= 65536)
  // ARN machinery: 1..64 entries, a TTL and a CRT of 24 bits, a power-of-two command queue.
  `ASSERT_INIT(a_param_arn, Entries >= 1 && Entries <= 64 && Ttl >= 1 && Ttl <= 24'hFF_FFFF
                            && CmdDepth >= 2 && (1 << $clog2(CmdDepth)) == CmdDepth)
  `ASSERT_INIT(a_param_detector, Lcdth <= Hcdth && Hcdth <= 65535 && Fcth <= 65535 && Crt >= 1
                                 && Crt <= 24'hFF_FFFF && AdaptiveTh <= 65535)
  // Input contract.
  // The configuration names a routing mode (RtDModK .. RtFlow; every value of the 2-bit
  // queuing field names a scheme), and the scheme's VCs (the regular ones plus the AFC under
  // AFI) are the V VCs of the build, and it holds while the switch runs.
  `ASSUME(m_cfg_modes, 32'(cfg_i.routing) <= RtFlow)
  // Snooped AR's table: 1..32 entries, a TTL of 24 bits.
  `ASSERT_INIT(a_param_snoop, SnEntries >= 1 && SnEntries <= 32 && SnTtl >= 1
                              && SnTtl <= 24'hFF_FFFF)
  `ASSUME(m_cfg_vcs, V == ((32'(cfg_i.queuing) == QuOneQ || cfg_i.qvcs == '0) ? 32'd1
                                                                                : 32'(cfg_i.qvcs))
                          + (afi ? 32'd1 : 32'd0))
  `ASSUME(m_cfg_stable, $stable(cfg_i))
  // Every input is known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({in_flit_valid_i, in_flit_head_i, in_flit_tail_i,
                                       in_arn_valid_i, lft_wr_en_i, sl2vl_wr_en_i}))
  // The LFT and the SL-to-VL tables are written only while the links are idle, the tables with
  // a VL of the build (an adapted packet's AFC is not the tables').
  `ASSUME(m_lft_write_idle, lft_wr_en_i |-> in_flit_valid_i == '0 && in_arn_valid_i == '0)
  `ASSUME(m_sl2vl_write_idle, sl2vl_wr_en_i |-> in_flit_valid_i == '0 && in_arn_valid_i == '0
                                               && 32'(sl2vl_wr_out_i) < P
                                               && 32'(sl2vl_wr_in_i) < P
                                               && 32'(sl2vl_wr_vl_i) < V)

  // Outputs.
  // Every output is known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {out_flit_valid_o, chk_out_vc, out_flit_head_o,
                                  out_flit_tail_o, chk_out_desc, chk_out_credit,
                                  out_arn_valid_o, chk_out_arn})

  // Invariants.
  // Flits out equal flits in less the flits buffered.
  `ASSERT(a_flits_conserved, chk_out_q == chk_in_q - chk_buffered)
  // Every flit that leaves returns one credit upstream, in the same cycle.
  `ASSERT(a_credit_per_flit, chk_credits_out == 32'($countones(out_flit_valid_o)))
  // Credits never exceed the far buffer's capacity.
  `ASSERT(a_credits_le_cap, &chk_credit_le_cap)
  // A flit leaves on one of the V VCs.
  `ASSERT(a_out_vc_in_range, &chk_out_vc_ok)
