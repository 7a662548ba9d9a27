// Formal harness of the egress (`horus_pipeline::egress::Egress`): the passes leaving the core
// become jobs, the emitter turns each into beats, and the output FIFO drives `m_axis`.
//
// The test writes the port list and the instance from the emitted module (`check::harness`),
// with the output FIFO's and the job FIFO's counts and the emitter's four pipeline tags as
// outputs (`probe_*`, `check::with_probes`) for the induction's invariant; `@LEN@` is the bit
// offset of the pass's length in the pass descriptor, `@CONTROL@` its control-pass flags,
// `@FORWARDING@` the flags that make the egress forward a frame,
// `@JOB_SLOTS@` the job FIFO's size.
//
// Assumed (inputs only): a control pass has none of the flags that forward a frame (the core
// builds it so), and a pass with one of them is 1 to 2,048 bytes long (a frame-buffer slot: the
// ingress classifies a longer frame malformed, and the core gives a malformed frame no such
// flag); a pass arrives only while the job FIFO has a free entry (the switch's admission rule,
// `switch::JOB_ROOM`, proven in `admission.sv`); the frame buffer's data, the configuration and
// `m_axis_tready` are free.
//
// Asserted, for every sequence of passes and back-pressure:
//   - never drop: neither FIFO is pushed while full (`overflow` stays 0): for the output FIFO,
//     the emitter issues a beat only while it has room for it and every beat in its pipeline;
//   - a bounded wait: once `m_axis_tready` has been high for 8 cycles, the emitter is never
//     held back for the output FIFO's room (`probe_room`), so each job's beats leave one a
//     cycle, behind at most the 11 beats in the output FIFO;
//   - `m_axis` is an AXI-Stream source: a beat offered and not taken is offered again with the
//     same `tdata`, `tkeep`, `tlast` and `tuser`;
//   - per job (`DELIVERY`): a job at the head of the job FIFO leaves it after its own work, one
//     step in each cycle in which the emitter has room for a beat: its frame's beats if it
//     forwards one, then its signal's beat if it sends one (a job with neither leaves at once);
//     jobs are queued well-formed (a forwarded frame of 1 to 32 beats, `single` exactly for one);
//   - framing: `tkeep` is contiguous from byte 0 and not empty, and all ones on a beat that is not
//     a frame's last; every beat of a frame carries the frame's length in `tuser`, and the frame
//     ends (`tlast`) exactly at beat ceil(length / 64), whose `tkeep` keeps length mod 64 bytes
//     (64 when 0).
module harness (
    @PORTS@
);
    @WIRES@

    top dut (
        @CONNECT@
    );

    localparam LEN = @LEN@;
    localparam JOB_SLOTS = @JOB_SLOTS@;

    reg first = 1'b1;
    always @(posedge clock) first <= 1'b0;

    wire [15:0] len = pass[LEN +: 16];
    // A control pass carries no frame and is never forwarded: the core builds it with every
    // packet flag clear (only a packet's classification sets them).
    wire control = @CONTROL@;
    wire forwarding = @FORWARDING@;
    always @(*) if (pass_valid) begin
        assume (jobs < JOB_SLOTS);
        if (control) assume (!forwarding);
        else if (forwarding) assume (len >= 16'd1 && len <= 16'd2048);
    end

    @AXIS_OUT@

    // The head job and the job being queued (`DELIVERY`).
    localparam J_BEATS = @J_BEATS@;
    wire [5:0] h_beats = probe_head[J_BEATS +: 6];
    wire h_fwd = probe_head[@J_FWD@];
    wire h_sig = probe_head[@J_SIG@];
    wire h_ok = !h_fwd || (h_beats >= 6'd1 && h_beats <= 6'd32
        && probe_head[@J_SINGLE@] == (h_beats == 6'd1));
    wire [5:0] j_beats = probe_job[J_BEATS +: 6];
    wire j_fwd = probe_job[@J_FWD@];
    wire j_ok = j_beats >= 6'd1 && j_beats <= 6'd32 && probe_job[@J_SINGLE@] == (j_beats == 6'd1);
    wire [6:0] need = (h_fwd ? {1'b0, h_beats} : 7'd0) + {6'd0, h_sig};
    reg [6:0] age = 7'd0;
    always @(posedge clock)
        if (probe_done) age <= 7'd0;
        else if (probe_job_fifo_head_valid && probe_room) age <= age + 7'd1;

    // The emitter's beats in flight (each tag's valid bit is its lowest).
    wire [4:0] in_flight = {4'd0, probe_tag1_q[0]} + {4'd0, probe_tag2_q[0]}
        + {4'd0, probe_tag3_q[0]} + {4'd0, probe_tag4_q[0]};

    always @(*) begin
        assert (!overflow);
        // @FRAMING (bounded: the induction leaves it out, since it rests on the FIFO's entries)
        @AXIS_FRAMING@
        // @END_FRAMING
        // @LATENCY: once the output has been ready for 8 cycles, the emitter is never held back
        // for the output FIFO's room: it issues a beat in every cycle in which its head job
        // has one, and each beat reaches `m_axis` four cycles later and leaves within the 11
        // ahead of it.
        if (&ready_hist) assert (probe_room);
        // @END_LATENCY
        // @DELIVERY: `age` counts the cycles with room since the head job became the head; a
        // well-formed head needs `need` of them, and leaves in the last.
        if (probe_job_fifo_push && j_fwd) assert (j_ok);
        if (probe_job_fifo_head_valid && h_ok) begin
            if (need == 7'd0) assert (age == 7'd0 && probe_done);
            else assert (age < need);
        end
        // @END_DELIVERY
        // @STEPS: what makes it inductive: the beat counter counts the frame's beats issued, the
        // signal phase follows the frame's last beat, `last_r` marks the next beat as the last,
        // and the job FIFO's head changes only when it is popped (its pointers and count agree).
        if (!probe_job_fifo_head_valid) assert (age == 7'd0 && probe_beat_q == 6'd0 && !probe_phase_q);
        if (probe_job_fifo_head_valid && h_fwd && !probe_phase_q)
            assert (probe_beat_q == age[5:0]);
        if (probe_job_fifo_head_valid && h_fwd && !probe_phase_q && probe_beat_q != 6'd0)
            assert (probe_last_r_q == (probe_beat_q + 6'd1 == h_beats));
        if (probe_job_fifo_head_valid && h_ok && h_fwd && !probe_phase_q) assert (age < {1'b0, h_beats});
        if (probe_phase_q)
            assert (probe_job_fifo_head_valid && h_fwd && h_sig && probe_beat_q == 6'd0
                && (!h_ok || age == {1'b0, h_beats}));
        if (probe_job_fifo_head_valid && !h_fwd) assert (age == 7'd0 && probe_beat_q == 6'd0 && !probe_phase_q);
        assert (probe_job_fifo_count == probe_job_fifo_wr_ptr_q - probe_job_fifo_rd_ptr_q);
        // @END_STEPS
        // @INVARIANTS: what makes never-drop inductive: the FIFOs' counts within their sizes, and
        // the output FIFO's entries plus the beats in the emitter's pipeline within its 16.
        assert (probe_out_fifo_count <= 5'd16 && probe_job_fifo_count <= JOB_SLOTS);
        assert (probe_out_fifo_full == (probe_out_fifo_count == 5'd16));
        assert (probe_job_fifo_full == (probe_job_fifo_count == JOB_SLOTS));
        assert (probe_out_fifo_head_valid == (probe_out_fifo_count != 5'd0));
        assert (probe_job_fifo_head_valid == (probe_job_fifo_count != 8'd0));
        assert ({1'b0, probe_out_fifo_count} + {1'b0, in_flight} <= 6'd16);
        // @END
    end
endmodule
