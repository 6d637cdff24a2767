// Checks of input_port_ctrl.sv (an input port controller): the packed views they read, the parameters' ranges, the
// input contract (ASSUME), the outputs known and the invariants (ASSERT). Included in the module's
// body, after its logic; the macros are in arnsim_assert.svh.
`ifndef SYNTHESIS
  // Packed views of this cycle's state ($isunknown and properties need packed values).
  logic [V-1:0]  chk_occ_le_cap, chk_flits_conserved;
  logic [P-1:0]  chk_dep_arrived, chk_dep_used, chk_pop_head;
  logic [15:0]   chk_arr_occ;
  logic [7:0]    chk_rx_vc;
  logic [63:0]   chk_in_q [V], chk_out_q [V];
  logic          chk_voq_le_occ;
  always_comb begin
    logic [31:0] voq_sum, occ_sum;
    logic [15:0] arrived;
    voq_sum = '0;
    occ_sum = '0;
    for (int v = 0; v < V; v++) begin
      chk_occ_le_cap[v]      = 32'(occ_q[v]) <= Cap;
      chk_flits_conserved[v] = chk_in_q[v] - chk_out_q[v] == 64'(occ_q[v]);
      occ_sum                = occ_sum + 32'(occ_q[v]);
    end
    for (int o = 0; o < P; o++) begin
      voq_sum = voq_sum + 32'(voq_q[o]);
      // A flit leaves only after it arrived (cut-through: the flit arriving now may leave now).
      arrived = desc_q[SIdxW'(dep_slot_i[o])].len;
      if (rx_valid_q && rx_slot_q == dep_slot_i[o]) begin
        arrived = arrived - rx_left_q + 16'(body_we);
      end
      chk_dep_arrived[o] = !dep_valid_i[o] || dep_sent_i[o] < arrived;
      chk_dep_used[o]    = !dep_valid_i[o] || used_q[SIdxW'(dep_slot_i[o])];
      chk_pop_head[o]    = !pop_valid_i[o] || head_q[VcW'(pop_vc_i[o])][o] != Nil;
    end
    chk_voq_le_occ = voq_sum <= occ_sum;
    chk_arr_occ    = occ_q[VcW'(flit_vc_i)];
    chk_rx_vc      = desc_q[SIdxW'(rx_slot_q)].vc;
  end
  // Flits in and out of each VC, counted since reset.
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      chk_in_q  <= '{default: '0};
      chk_out_q <= '{default: '0};
    end else begin
      for (int v = 0; v < V; v++) begin
        chk_in_q[v]  <= chk_in_q[v] + 64'(flit_valid_i && 32'(arr_vc) == v);
        chk_out_q[v] <= chk_out_q[v] + 64'(credit_o[v]);
      end
    end
  end
`endif

  // Parameters (checked at elaboration).
  // P in 1..64, V in 1..16 (4-bit VC fields).
  `ASSERT_INIT(a_param_ports_vcs, P >= 1 && P <= 64 && V >= 1 && V <= 16)
  // The pool holds at least one packet, and its NIL code is no slot.
  `ASSERT_INIT(a_param_pool, Pool >= 1 && Pool < (1 << SlotW) && Pool <= 65534)
  // Cap in 1..65535.
  `ASSERT_INIT(a_param_cap, Cap >= 1 && Cap <= 65535)

  // Input contract: the link protocol.
  // Every input is known outside reset.
  `ASSUME(m_inputs_known, !$isunknown({flit_valid_i, flit_vc_i, flit_head_i, flit_tail_i,
                                       flit_desc_i, pop_valid_i, dep_valid_i, dep_tail_i}))
  // A flit names one of the V VCs.
  `ASSUME(m_flit_vc_in_range, flit_valid_i |-> 32'(flit_vc_i) < V)
  // A flit arrives only against a credit: its VC has room.
  `ASSUME(m_no_overflow, flit_valid_i && 32'(flit_vc_i) < V |-> 32'(chk_arr_occ) < Cap)
  // A head arrives only between packets, with a free descriptor, its tail bit telling a
  // one-flit packet, its length non-zero.
  `ASSUME(m_head_between_packets, flit_valid_i && flit_head_i |-> !rx_valid_q)
  `ASSUME(m_head_has_slot, flit_valid_i && flit_head_i |-> free_found)
  `ASSUME(m_head_tail_bit, flit_valid_i && flit_head_i |->
                           flit_desc_i.len != '0 && flit_tail_i == (flit_desc_i.len == 16'd1))
  // A body flit continues the packet arriving, on its VC, its tail bit on its last flit.
  `ASSUME(m_body_in_step, flit_valid_i && !flit_head_i |->
                          rx_valid_q && 8'(flit_vc_i) == chk_rx_vc
                          && flit_tail_i == (rx_left_q == 16'd1))
  // The outputs pop only FIFO heads and send only flits of held packets that have arrived.
  `ASSUME(m_pop_head, &chk_pop_head)
  `ASSUME(m_dep_used, &chk_dep_used)
  `ASSUME(m_dep_arrived, &chk_dep_arrived)

  // Outputs.
  // The ARN and the credits sent upstream are known outside reset.
  `ASSERT_KNOWN(a_outputs_known, {arn_valid_o, arn_o, lk_en_o, rng_req_o, at_req_o})

  // Invariants.
  // A VC never holds more flits than its credits upstream allow.
  `ASSERT(a_occ_le_cap, &chk_occ_le_cap)
  // Per VC, the flits received less the credits returned are the flits buffered.
  `ASSERT(a_flits_conserved, &chk_flits_conserved)
  // Routed flits never outnumber the buffered ones.
  `ASSERT(a_voq_le_occ, chk_voq_le_occ)
  // The routing stage holds a head only in the cycle after it arrived.
  `ASSERT(a_route_after_head, rt_valid_q == $past(head_we))
  // The routing stage routes only a held packet.
  `ASSERT(a_route_slot_used, !rt_valid_q || used_q[SIdxW'(rt_slot_q)])
  // The LFT read the routing stage uses is the head's.
  `ASSERT(a_route_reads_lft, !rt_valid_q || (lft_rd_valid && lft_rd_dlid == rt_desc.dlid))
