// Formal harness of a scheduler core (`horus_pipeline::core::HorusCore`, the paper leaf's and
// spine's; `horus_pipeline::jbsq::core::JbsqCore`, the JBSQ leaf's): the contract the datapath's
// admission rule rests on (`admission.sv` uses it as a model, `core_model.sv`).
//
// The test writes the port list and the instance (`check::harness`), with the pass registers
// of the pipeline as outputs (`probe_*`, `check::with_probes`: the register behind the pass mux
// and each stage's output, and the rescale hold of `pool_avg`) for the induction's invariant;
// the test declares sums over those registers: `live_sum` (live passes), `second_sum` (live
// second passes), `ctl_sum` (live control passes), and flags `clash`, `multi`, `bubble_flags`,
// `held_ok` (below), `holding` (the rescale hold of `pool_avg`), and writes in a pass's
// second-pass flags, what a control pass never carries, which second passes may come back again
// (none in the paper core; a retry in the JBSQ core) and the hold's own invariant.
//
// Assumed (inputs only): a control pass carries exactly one operation flag and none of a
// packet's, no second-pass flag and no resubmit request (the AXI4-Lite ports' proof shows that
// neither port offers another: `axil.sv`, through `tests/axil.rs` and
// `tests/jbsq_axil_formal.rs`); packets are free.
//
// Asserted, for every input sequence, at every depth (k-induction):
//   - `in_flight` counts the passes in the core, first passes and second passes (counted here
//     from the ports: a pass enters on `trace_valid`, as a second pass when `out_again`, and
//     leaves on `out_valid`, as a second pass when it carries a second-pass flag), and is at
//     most CORE_LATENCY;
//   - one pass enters at a time: a second pass (`out_again`), a packet taken
//     (`pkt_valid && pkt_ready`) or a control pass taken (`ctl_valid && ctl_ready`), never two,
//     and nothing else enters;
//   - a pass that comes back is a pass leaving (`out_again` only with `out_valid`), a first pass
//     or a second pass the core lets come back again (the JBSQ core's retry);
//   - a pass leaves only when one of its kind is in the core.
module harness (
    @PORTS@
);
    @WIRES@

    top dut (
        @CONNECT@
    );

    localparam L = @CORE_LATENCY@;

    wire out_second = @SECOND_out@;
    wire trace_second = @SECOND_trace@;
    always @(*) if (ctl_valid) assume (!(@CTL_BAD@));

    // Passes in the core by kind, from the ports.
    reg [7:0] n_first = 8'd0;
    reg [7:0] n_second = 8'd0;
    always @(posedge clock) begin
        n_second <= n_second + {7'd0, out_again} - {7'd0, out_valid && out_second};
        n_first <= n_first + {7'd0, trace_valid && !out_again} - {7'd0, out_valid && !out_second};
    end

@REGS@
    always @(*) begin
        assert ({1'b0, in_flight} == {1'b0, n_first} + {1'b0, n_second});
        assert (in_flight <= L);
        assert (trace_valid == (out_again || (pkt_valid && pkt_ready) || (ctl_valid && ctl_ready)));
        assert (!(pkt_valid && pkt_ready && ctl_valid && ctl_ready));
        if (out_again) assert (!pkt_ready && !ctl_ready);
        if (out_again) assert (out_valid && (!out_second || @COMES_BACK@) && trace_second);
        if (trace_valid && trace_second) assert (out_again);
        if (out_valid) assert (out_second ? n_second != 8'd0 : n_first != 8'd0);
        @COMES_BACK_EMPTY@
        // @INVARIANTS: what makes it inductive. The count is the live passes in the registers,
        // and the pass a rescale holds in `pool_avg` (its output shows a bubble meanwhile); the
        // second passes are those with a second-pass flag, which never carry a first pass's
        // kind (`clash`); a pass has at most one kind (`multi`); a bubble carries no control
        // flag (`bubble_flags`); the registered resubmit decision is for the pass leaving now.
        assert (in_flight == live_sum + {7'd0, holding});
        assert (n_second == second_sum);
        assert (!clash && !multi && !bubble_flags);
        if (probe_again_q) assert (out_valid && (!out_second || @COMES_BACK@));
        // A control pass runs alone: it enters an empty core, `ctl_busy` holds until it leaves,
        // and a rescale holds it (`held_ok`: one live control pass adding or removing a worker)
        // for a count of clocks `held` mirrors.
        assert (probe_occupied_q == (in_flight != 8'd0));
        assert (ctl_sum + {7'd0, holding} <= 8'd1);
        assert (probe_ctl_busy_q == (ctl_sum + {7'd0, holding} == 8'd1));
        if (probe_ctl_busy_q) assert (live_sum == ctl_sum);
        if (holding) assert (held_ok);
        @HOLD_INVARIANT@
        // @END
    end
endmodule
