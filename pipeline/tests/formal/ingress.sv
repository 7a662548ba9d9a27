// Formal harness of the ingress's input side (`horus_pipeline::ingress::Ingress`): no beat is
// taken while `s_axis_tready` is low.
//
// Two copies of the ingress, `a` and `b`, get the same inputs in every cycle, except that
// while `a`'s `s_axis_tready` is low their `s_axis` beats (`tvalid`, `tdata`, `tkeep`, `tlast`)
// are free and independent: one may offer a beat where the other offers another or none.
// Asserted: the two copies stay alike in every cycle: the same `s_axis_tready`, the same frames
// offered to the core, the same writes into the frame buffer and the descriptor table (their
// write ports are outputs here, `check::with_probes`): a beat offered while `tready` is low
// changes nothing, then or later. Every input is free; the slot ring starts in any state (full
// or not), the same in both copies.
module harness (
    @PORTS@,
    input wire [511:0] b_s_axis_tdata,
    input wire [63:0] b_s_axis_tkeep,
    input wire b_s_axis_tvalid,
    input wire b_s_axis_tlast
);
    @WIRES@

    // Both copies start alike: the slot ring's occupancy and allocation pointer, free here (the
    // test removes their initial values), are the same in both.
    reg first = 1'b1;
    always @(posedge clock) first <= 1'b0;
    always @(*) if (first)
        assume (a_probe_busy_q == b_probe_busy_q && a_probe_alloc_q == b_probe_alloc_q);

    // While `a` is not ready, `b` sees its own beats; otherwise `a`'s.
    wire [511:0] b_tdata = a_s_axis_tready ? s_axis_tdata : b_s_axis_tdata;
    wire [63:0] b_tkeep = a_s_axis_tready ? s_axis_tkeep : b_s_axis_tkeep;
    wire b_tvalid = a_s_axis_tready ? s_axis_tvalid : b_s_axis_tvalid;
    wire b_tlast = a_s_axis_tready ? s_axis_tlast : b_s_axis_tlast;

    top a (
        @CONNECT_A@
    );
    top b (
        @CONNECT_B@
    );

    always @(*) begin
        assert (a_s_axis_tready == b_s_axis_tready);
        @EQUAL@
    end
endmodule
