// The egress harnesses' view of `m_axis` (`egress.sv`, `jbsq_egress.sv`): the declarations
// (`@AXIS_OUT@`, at the module's top level) and the framing claims (`@AXIS_FRAMING@`, inside
// the harness's `always @(*)`), between the two markers below; the test puts each part in its
// place.
// @DECLARATIONS
    // The output as a source.
    reg stalled = 1'b0;
    reg [511:0] d_q;
    reg [63:0] k_q;
    reg l_q;
    reg [31:0] u_q;
    always @(posedge clock) begin
        stalled <= m_axis_tvalid && !m_axis_tready;
        {d_q, k_q, l_q, u_q} <= {m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tuser};
    end

    // `m_axis_tready` in the last 8 cycles.
    reg [7:0] ready_hist = 8'd0;
    always @(posedge clock) ready_hist <= {ready_hist[6:0], m_axis_tready};

    // The frame on the output: beats taken of it, and its length.
    wire taken = m_axis_tvalid && m_axis_tready;
    wire [11:0] out_len = m_axis_tuser[27:16];
    reg [5:0] beats = 6'd0;
    reg [11:0] frame_len = 12'd0;
    always @(posedge clock) if (taken) begin
        beats <= m_axis_tlast ? 6'd0 : beats + 6'd1;
        frame_len <= out_len;
    end
    // The beats of a frame of `out_len` bytes, and its last beat's keep.
    wire [6:0] want_beats = {1'b0, out_len[11:6]} + (out_len[5:0] != 6'd0 ? 7'd1 : 7'd0);
    wire [63:0] want_keep = out_len[5:0] == 6'd0 ? {64{1'b1}} : ~({64{1'b1}} << out_len[5:0]);
// @CLAIMS
        if (stalled)
            assert (m_axis_tvalid && m_axis_tdata == d_q && m_axis_tkeep == k_q
                && m_axis_tlast == l_q && m_axis_tuser == u_q);
        if (m_axis_tvalid) begin
            assert (m_axis_tkeep[0]);
            if (!m_axis_tlast) assert (m_axis_tkeep == {64{1'b1}});
            if (beats != 6'd0) assert (out_len == frame_len);
            assert ({1'b0, beats} < want_beats);
            assert (m_axis_tlast == ({1'b0, beats} + 7'd1 == want_beats));
            if (m_axis_tlast) assert (m_axis_tkeep == want_keep);
        end
