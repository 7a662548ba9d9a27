// Formal harness of the board adapter's frame arbiter (`horus_pipeline::board::arbiter::
// FrameArbiter3`: three AXI-Stream inputs onto one output, round robin by frame).
//
// The test writes the port list and the instance from the emitted module (`check::harness`), with
// the arbiter's state as outputs (`probe_busy_q`, `probe_cur_q`, `probe_prev_q`) for the
// induction's invariants.
//
// Assumed (inputs only): `reset` is high in the first cycle and low after it; each input is an
// AXI-Stream source: a beat offered (`tvalid`) stays offered, with its `tdata`, `tkeep` and
// `tlast`, until it is taken (`tready`). `m_tready` is free.
//
// Asserted, for every input and back-pressure sequence:
//   - the output carries the beat of the input `m_src` names (valid, data, keep, last), only that
//     input's `tready` can be high, and it is the output's: a beat leaves exactly when it is
//     taken from its input, and no other input's beat is taken;
//   - the output is an AXI-Stream source: a beat offered and not taken is offered again, with the
//     same data, keep, last and source;
//   - a frame is never split or interleaved: from a frame's first beat taken to its last
//     (`tlast`), every beat on the output is from the same input;
//   - no input starves: while an input offers the first beat of a frame, at most two frames of
//     other inputs end before its beat is taken (round robin over three); and the output offers a
//     beat whenever no frame is in progress and an input offers one.
module harness (
    @PORTS@
);
    @WIRES@

    top dut (
        @CONNECT@
    );

    reg first = 1'b1;
    always @(posedge clock) first <= 1'b0;
    always @(*) assume (reset == first);

    wire [2:0] v = {s2_tvalid, s1_tvalid, s0_tvalid};
    wire [2:0] r = {s2_tready, s1_tready, s0_tready};
    wire [2:0] l = {s2_tlast, s1_tlast, s0_tlast};

    // The sources: a beat offered and not taken in the last cycle, as it was. (Registers and an
    // immediate assumption: one in a clocked block would bind the inputs a cycle late, after the
    // cycle whose assertions they feed.)
    reg [2:0] held = 3'd0;
    reg [511:0] d0, d1, d2;
    reg [63:0] k0, k1, k2;
    reg [2:0] l_q;
    always @(posedge clock) begin
        held <= v & ~r;
        {d0, d1, d2} <= {s0_tdata, s1_tdata, s2_tdata};
        {k0, k1, k2} <= {s0_tkeep, s1_tkeep, s2_tkeep};
        l_q <= l;
    end
    always @(*) begin
        if (held[0]) assume (s0_tvalid && s0_tdata == d0 && s0_tkeep == k0 && s0_tlast == l_q[0]);
        if (held[1]) assume (s1_tvalid && s1_tdata == d1 && s1_tkeep == k1 && s1_tlast == l_q[1]);
        if (held[2]) assume (s2_tvalid && s2_tdata == d2 && s2_tkeep == k2 && s2_tlast == l_q[2]);
    end

    wire taken = m_tvalid && m_tready;

    // The output as a source: a beat offered and not taken is offered again, unchanged.
    reg stalled = 1'b0;
    reg [511:0] m_d;
    reg [63:0] m_k;
    reg m_l;
    reg [1:0] m_s;
    always @(posedge clock) begin
        stalled <= m_tvalid && !m_tready && !reset;
        {m_d, m_k, m_l, m_s} <= {m_tdata, m_tkeep, m_tlast, m_src};
    end

    // The frame in progress on the output: its first beat taken, its last not yet.
    reg in_frame = 1'b0;
    reg [1:0] frame_src = 2'd0;
    // For each input, the frames of other inputs that ended while it offered a first beat.
    reg [1:0] passed [0:2];
    initial begin
        passed[0] = 2'd0;
        passed[1] = 2'd0;
        passed[2] = 2'd0;
    end
    // Input k offers the first beat of a frame (bit k).
    wire [2:0] waiting = v & ~({2'd0, in_frame} << frame_src);
    integer i;
    always @(posedge clock) begin
        if (taken) begin
            in_frame <= !m_tlast;
            frame_src <= m_src;
        end
        for (i = 0; i < 3; i = i + 1)
            if (!v[i] || r[i] || reset) passed[i] <= 2'd0;
            else if (waiting[i] && taken && m_tlast && m_src != i) passed[i] <= passed[i] + 2'd1;
    end

    function [1:0] after(input [1:0] k);
        after = k == 2'd2 ? 2'd0 : k + 2'd1;
    endfunction

    function [1:0] before(input [1:0] k);
        before = k == 2'd0 ? 2'd2 : k - 2'd1;
    endfunction

    always @(*) if (!reset) begin
        assert (m_src <= 2'd2);
        case (m_src)
            2'd0: assert (m_tvalid == s0_tvalid && m_tdata == s0_tdata && m_tkeep == s0_tkeep
                && m_tlast == s0_tlast);
            2'd1: assert (m_tvalid == s1_tvalid && m_tdata == s1_tdata && m_tkeep == s1_tkeep
                && m_tlast == s1_tlast);
            default: assert (m_tvalid == s2_tvalid && m_tdata == s2_tdata && m_tkeep == s2_tkeep
                && m_tlast == s2_tlast);
        endcase
        for (i = 0; i < 3; i = i + 1)
            assert (r[i] == (m_tready && m_src == i));
        if (in_frame) assert (m_src == frame_src);
        if (!in_frame && v != 3'd0) assert (m_tvalid);
        for (i = 0; i < 3; i = i + 1)
            if (waiting[i]) assert (passed[i] <= 2'd2);
        // @INVARIANTS: what makes it inductive (the mutants' tests drop it, so that they fail
        // on the claims above): the frame in progress is the arbiter's; an input passed over
        // once waits behind at most the input before it, twice behind none.
        if (in_frame) assert (probe_busy_q && probe_cur_q == frame_src);
        // Busy outside a frame: a first beat was offered and not taken, and is offered again.
        if (probe_busy_q && !in_frame) assert (held[probe_cur_q]);
        if (stalled) assert (probe_busy_q && held[probe_cur_q]);
        assert (probe_cur_q <= 2'd2 && probe_prev_q <= 2'd2);
        for (i = 0; i < 3; i = i + 1)
            if (waiting[i]) begin
                if (passed[i] == 2'd2)
                    assert (probe_prev_q == before(i) && (!probe_busy_q || probe_cur_q == i));
                if (passed[i] == 2'd1) begin
                    assert (probe_prev_q != i);
                    if (probe_prev_q == before(i)) assert (!probe_busy_q || probe_cur_q == i);
                    if (probe_prev_q == after(i))
                        assert (!probe_busy_q || probe_cur_q == i || probe_cur_q == before(i));
                end
            end
        // @END
    end

    always @(*) if (stalled && !reset)
        assert (m_tvalid && m_tdata == m_d && m_tkeep == m_k && m_tlast == m_l && m_src == m_s);
endmodule
