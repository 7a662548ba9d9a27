// Formal harness of the JBSQ leaf's egress (`horus_pipeline::jbsq::egress::JbsqEgress`): the
// passes leaving the core become jobs, the emitter works each job's phases (forward, copy into
// the frame store, release from it, signal) one beat a clock, and the output FIFO drives `m_axis`.
//
// The test writes the port list and the instance from the emitted module (`check::harness`),
// with the two FIFOs' counts, the emitter's four pipeline tags and the beat register as outputs
// (`probe_*`, `check::with_probes`); `@J_<FIELD>@` is a job field's part-select in `job_in`,
// `@T_<FIELD>@` a beat tag's, `@JOB_SLOTS@` the job FIFO's size, `@SB@` the frame store's
// address bits and `@STORE_SLOT_BEATS@` the beats of a held task's slot.
//
// Assumed (inputs only): a job arrives only while the job FIFO has a free entry (the leaf's
// admission rule, `jbsq::switch::JOB_ROOM`, proven in `tests/jbsq_admission.rs`); a job's frames
// are well formed, as the job map builds them from a pass (`tests/jbsq_core.rs` holds the map to
// the model's jobs): a forwarded frame is 1 to 2,048 bytes, a held or released one at most a
// store slot's 256, each with its beats ceil(length / 64), `single` exactly for one beat and its
// last beat's bytes the length mod 64; the frame buffer's data, the configuration, the job's
// other fields and `m_axis_tready` are free.
//
// Asserted, for every sequence of jobs and back-pressure:
//   - never drop: neither FIFO is pushed while full (`overflow` stays 0): the emitter issues an
//     output beat only while the output FIFO has room for it and every beat in its pipeline (a
//     copy's beat goes to the store, not out);
//   - a bounded wait: once `m_axis_tready` has been high for 8 cycles, the emitter is never held
//     back for the output FIFO's room (`probe_room`);
//   - `m_axis` is an AXI-Stream source: a beat offered and not taken is offered again with the
//     same `tdata`, `tkeep`, `tlast` and `tuser`;
//   - framing: `tkeep` is contiguous from byte 0 and not empty, all ones on a beat that is not a
//     frame's last; every beat of a frame carries its length in `tuser`, and the frame ends
//     (`tlast`) exactly at beat ceil(length / 64), whose `tkeep` keeps length mod 64 bytes;
//   - the store (`STORE`): a released frame's beat is read as the last copy issued before the
//     release wrote it: for a store address the solver picks, every beat a release reads there
//     is the data of the last copy's beat to it (a copy's beat is written a clock after it is
//     issued, and a read in the clock of the write gives the old data: the release waits).
module harness (
    @PORTS@
);
    @WIRES@

    top dut (
        @CONNECT@
    );

    localparam JOB_SLOTS = @JOB_SLOTS@;
    localparam SB = @SB@;

    reg first = 1'b1;
    always @(posedge clock) first <= 1'b0;

    // A frame of `len` bytes in `beats` beats, its last keeping `tail` (0: 64) bytes.
    function automatic well_formed(input [11:0] len, input [5:0] beats, input single,
        input [5:0] tail, input [11:0] max_len);
        well_formed = len >= 12'd1 && len <= max_len
            && {1'b0, beats} == {1'b0, len[11:6]} + (len[5:0] != 6'd0 ? 7'd1 : 7'd0)
            && single == (beats == 6'd1) && tail == len[5:0];
    endfunction
    localparam [11:0] SLOT_BYTES = @STORE_SLOT_BEATS@ * 64;
    always @(*) if (job_valid) begin
        assume (jobs < JOB_SLOTS);
        if (job_in@J_FWD@)
            assume (well_formed(job_in@J_OWN_LEN@, job_in@J_OWN_BEATS@, job_in@J_OWN_SINGLE@,
                job_in@J_OWN_TAIL@, 12'd2048));
        if (job_in@J_HOLD@)
            assume (well_formed(job_in@J_OWN_LEN@, job_in@J_OWN_BEATS@, job_in@J_OWN_SINGLE@,
                job_in@J_OWN_TAIL@, SLOT_BYTES));
        if (job_in@J_RELEASE@)
            assume (well_formed(job_in@J_REL_LEN@, job_in@J_REL_BEATS@, job_in@J_REL_SINGLE@,
                job_in@J_REL_TAIL@, SLOT_BYTES));
    end

    @AXIS_OUT@

    // The store at one address the solver picks: the data of the last copy's beat written there
    // (a copy's beat is written in the clock its tag is in `tag1`), as of the clock before.
    (* anyconst *) reg [SB-1:0] at;
    wire [15:0] tag1_at = probe_tag1_q@T_STORE_AT@;
    wire [15:0] tag2_at = probe_tag2_q@T_STORE_AT@;
    wire copy_here = probe_tag1_q@T_COPY@ && tag1_at[SB-1:0] == at;
    reg [511:0] kept = 512'd0;
    reg written = 1'b0;
    reg [511:0] kept_q = 512'd0;
    reg written_q = 1'b0;
    always @(posedge clock) begin
        if (copy_here) begin
            kept <= buf_data;
            written <= 1'b1;
        end
        kept_q <= kept;
        written_q <= written;
    end

    // The emitter's output beats in flight (copies go to the store).
    wire [4:0] in_flight = {4'd0, probe_tag1_q@T_VALID@} + {4'd0, probe_tag2_q@T_VALID@}
        + {4'd0, probe_tag3_q@T_VALID@} + {4'd0, probe_tag4_q@T_VALID@};

    always @(*) begin
        assert (!overflow);
        // @FRAMING (bounded: the induction leaves it out, since it rests on the FIFOs' entries)
        @AXIS_FRAMING@
        // @END_FRAMING
        // @STORE (bounded: the store's entries are no probe): a release's beat read at `at`, in
        // the beat register with its tag in `tag2`, is the last copy's data there as of the
        // clock the release issued it in (a copy issued before it has been written by then).
        if (probe_tag2_q@T_FROM_STORE@ && tag2_at[SB-1:0] == at && written_q)
            assert (probe_beat_r_q == kept_q);
        // @END_STORE
        // @LATENCY: once the output has been ready for 8 cycles, the emitter is never held back
        // for the output FIFO's room.
        if (&ready_hist) assert (probe_room);
        // @END_LATENCY
        // @INVARIANTS: what makes never-drop inductive: the FIFOs' counts within their sizes, and
        // the output FIFO's entries plus the output beats in the emitter's pipeline within 16.
        assert (probe_out_fifo_count <= 5'd16 && probe_job_fifo_count <= JOB_SLOTS);
        assert (probe_out_fifo_full == (probe_out_fifo_count == 5'd16));
        assert (probe_job_fifo_full == (probe_job_fifo_count == JOB_SLOTS));
        assert (probe_out_fifo_head_valid == (probe_out_fifo_count != 5'd0));
        assert (probe_job_fifo_head_valid == (probe_job_fifo_count != 8'd0));
        assert ({1'b0, probe_out_fifo_count} + {1'b0, in_flight} <= 6'd16);
        // @END
    end
endmodule
