// Formal harness of the switch's admission rule (`horus_pipeline::switch`, `JOB_ROOM`): the
// switch as emitted, ingress and egress included, with its scheduler core replaced by the core's
// proven contract (`core_model.sv`; the proof of the contract is `core_contract.sv`).
//
// The test writes the port list and the instance (`check::harness`), with the egress's job
// count and its job FIFO's flags, the admission register and the model's counts of first and
// second passes as outputs (`probe_*`); `@JOB_SLOTS@`, `@JOB_ROOM@` and `@CORE_LATENCY@` are the
// sizes.
//
// Assumed (inputs only): nothing; frames, control passes, configuration and back-pressure are
// free (the core's contract assumes control passes as the register file stages them).
//
// Asserted, for every input sequence, at every depth (k-induction): the egress is handed a
// pass only while its job FIFO has room for the pass's job, and the FIFO is never full: the
// egress proof's admission assumption (`egress.sv`) holds, so together they prove that the
// switch never drops what it admitted.
module harness (
    @PORTS@
);
    @WIRES@

    top dut (
        @CONNECT@
    );

    localparam JOB_SLOTS = @JOB_SLOTS@;
    localparam JOB_ROOM = @JOB_ROOM@;
    localparam L = @CORE_LATENCY@;

    wire [8:0] jobs = {1'b0, probe_egress_jobs};
    wire [8:0] passes = {1'b0, in_flight};
    wire [8:0] firsts = {1'b0, probe_core_n_first};
    wire [8:0] seconds = {1'b0, probe_core_n_second};

    always @(*) begin
        if (done_valid) assert (jobs < JOB_SLOTS);
        assert (!probe_egress_job_fifo_full);
        // @INVARIANTS: each first pass in the core may still queue two jobs (its own and its
        // second pass's), each second pass one; admission is granted only while the queued
        // jobs and the passes in the core are below JOB_ROOM, and that sum grows by at most one
        // a clock, so the jobs queued and promised stay within the FIFO.
        assert (firsts + seconds <= L);
        assert (jobs + passes + firsts <= JOB_SLOTS - 1);
        if (probe_room_r_q) assert (jobs + passes <= JOB_ROOM - 1);
        assert (probe_egress_job_fifo_head_valid == (jobs != 9'd0));
        // @END
    end
endmodule
