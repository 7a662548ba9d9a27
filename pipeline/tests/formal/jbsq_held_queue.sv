// Formal harness of the JBSQ leaf's held queue (`horus_pipeline::jbsq::queue_ctl::QueueCtlStage`,
// `pipeline/tests/jbsq_held_queue_formal.rs`): the stage for two pools, its table as the
// read-modify-write table's proven contract (`jbsq_table_contract.sv`), whose entries the
// harness sees (`probe_ctl_table_state`).
//
// The test writes the port list and the instance (`check::harness`); a field's name between at
// signs after a descriptor is that field's bits (`[lo +: width]`), `@PHV_MSB@` the descriptor's
// top bit, `@W@` the table entry's width.
//
// Assumed (what the stages before `queueCtl` and the core guarantee): the pass in the stage is
// the pass that entered a clock before; a bubble names no operation and a pass at most one; a
// pass for a pool that is not dropped names pool 0 or 1 and carries that pool's region size
// (`poolCfg`), 1 to 4 slots, fixed, and its hold limit (`hold_slots`: the size, or 0 while the
// pool does not hold, decision 37); traffic for a pool that was never configured arrives
// dropped (`poolCfg`'s unknown pool), a move of a pool's region too. Lengths, more-packets,
// drops, the hold limit from pass to pass and the entries' token-ring lanes (whether a task
// finds a token) are free. A move (`is_ctl_move`) starts the pool's queue afresh as a
// configuration does, its region's size kept.
//
// The harness keeps, per pool, which offsets of the region hold a task (`busy`), the arrival
// number of each (`stamp`) and how many have left (`n_out`). Asserted, for every input sequence,
// at every depth (k-induction):
// - a held task goes to an offset inside the region that holds none (no held task is
//   overwritten: none is lost);
// - a release takes an offset that holds a task, the oldest (each held task leaves once, in
//   arrival order), and empties it;
// - a reply or a returned place releases whenever the pool holds a task, and a task that took no
//   token and can be held is held whenever the region has room and the pool holds (every held
//   task leaves, no slot is left unused); a pool that does not hold holds nothing;
// - the region is full (`buf_full`) only when every slot holds a task or the pool does not
//   hold (decision 37: such a task is counted as a full region's), the depth a pass reports
//   is the number of slots holding a task, and the depth and greatest depth never exceed the
//   region;
// - @INVARIANTS: each configured pool's entry (head, depth, greatest depth) is within its
//   region and the busy offsets are exactly the ring `[head, head + depth)`, numbered in order
//   from `n_out`; the table's registered address is the pool of the pass in the stage.
module harness (
    @PORTS@
);
    @WIRES@

    top dut (
        @CONNECT@
    );

    wire [@PHV_MSB@:0] early = port$up$early;
    wire [@PHV_MSB@:0] pass = port$up$pass;
    // The pass in the stage as it leaves: its decisions (the stage's register input).
    wire [@PHV_MSB@:0] o = port$down$early;

    (* anyconst *) reg [2:0] size0;
    (* anyconst *) reg [2:0] size1;
    always @(*) assume (size0 >= 3'd1 && size0 <= 3'd4 && size1 >= 3'd1 && size1 <= 3'd4);

    wire live = pass@live@;
    wire is_task = pass@is_task@;
    wire is_reply = pass@is_reply@;
    wire is_return = pass@is_return@;
    wire is_ctl = pass@is_ctl_pool@;
    wire is_move = pass@is_ctl_move@;
    wire [15:0] hold_slots = pass@hold_slots@;
    wire dropped = pass@drop@;
    wire [15:0] pool = pass@pool@;
    wire pp = pool[0];
    wire active = live && !dropped;
    wire holdable = !pass@more@ && pass@len@ <= 16'd256;
    wire [15:0] S = {13'd0, pp ? size1 : size0};

    reg [@PHV_MSB@:0] prev_early = 0;
    reg [1:0] configured = 2'b00;
    reg [3:0] busy0 = 4'd0;
    reg [3:0] busy1 = 4'd0;
    reg [15:0] stamps0 = 16'd0;
    reg [15:0] stamps1 = 16'd0;
    reg [3:0] n_out0 = 4'd0;
    reg [3:0] n_out1 = 4'd0;

    always @(*) begin
        assume (pass == prev_early);
        assume ({2'd0, is_task} + {2'd0, is_reply} + {2'd0, is_return} + {2'd0, is_ctl}
                + {2'd0, is_move} <= 3'd1);
        if (!live) assume (!is_task && !is_reply && !is_return && !is_ctl && !is_move);
        if (is_ctl) assume (!dropped);
        if (live && !dropped) begin
            assume (pool <= 16'd1);
            assume (pass@queue_slots@ == S);
            assume (hold_slots == S || hold_slots == 16'd0);
            if (!is_ctl) assume (configured[pp]);
        end
    end

    // The pass's pool, as the harness holds it.
    wire [3:0] busy = pp ? busy1 : busy0;
    wire [15:0] stamps = pp ? stamps1 : stamps0;
    wire [3:0] n_out = pp ? n_out1 : n_out0;
    function [2:0] count(input [3:0] b);
        count = {2'd0, b[0]} + {2'd0, b[1]} + {2'd0, b[2]} + {2'd0, b[3]};
    endfunction
    wire [15:0] occupied = {13'd0, count(busy)};

    wire held = o@held@;
    wire release_ = o@release@;
    wire full = o@buf_full@;
    wire [15:0] at = o@at@;
    wire [1:0] at2 = at[1:0];
    wire [15:0] depth = o@depth@;
    wire [15:0] max_depth = o@max_depth@;

    reg [3:0] busy_n;
    reg [15:0] stamps_n;
    reg [3:0] n_out_n;
    always @(*) begin
        busy_n = busy;
        stamps_n = stamps;
        n_out_n = n_out;
        if (held) begin
            busy_n[at2] = 1'b1;
            stamps_n[{at2, 2'b00} +: 4] = n_out + {1'b0, count(busy)};
        end
        if (release_) begin
            busy_n[at2] = 1'b0;
            n_out_n = n_out + 4'd1;
        end
        if (is_ctl || is_move) begin
            busy_n = 4'd0;
            n_out_n = 4'd0;
        end
    end

    always @(posedge clock) begin
        prev_early <= early;
        if (live && (is_ctl || !dropped)) begin
            if (pp) begin
                busy1 <= busy_n;
                stamps1 <= stamps_n;
                n_out1 <= n_out_n;
            end else begin
                busy0 <= busy_n;
                stamps0 <= stamps_n;
                n_out0 <= n_out_n;
            end
            if (is_ctl) configured[pp] <= 1'b1;
        end
    end

    // The table's entries: head, depth, greatest depth of each pool.
    wire [@W@ - 1:0] m0 = probe_ctl_table_state[0 +: @W@];
    wire [@W@ - 1:0] m1 = probe_ctl_table_state[@W@ +: @W@];
    wire addr_q = probe_ctl_table_state[2 * @W@];

    // Offset `i`'s place in the ring from `head` (region `s`).
    function [3:0] place(input [1:0] i, input [15:0] head, input [15:0] s);
        place = ({2'd0, i} >= head[3:0]) ? {2'd0, i} - head[3:0] : {2'd0, i} + s[3:0] - head[3:0];
    endfunction
    function [3:0] ring(input [15:0] head, input [15:0] d, input [15:0] s);
        integer i;
        for (i = 0; i < 4; i = i + 1)
            ring[i] = i < s && {12'd0, place(i[1:0], head, s)} < d;
    endfunction
    function numbered(input [3:0] b, input [15:0] st, input [3:0] first, input [15:0] head,
                      input [15:0] s);
        integer i;
        begin
            numbered = 1'b1;
            for (i = 0; i < 4; i = i + 1)
                if (b[i] && st[4 * i +: 4] != first + place(i[1:0], head, s))
                    numbered = 1'b0;
        end
    endfunction
    wire [15:0] S0 = {13'd0, size0};
    wire [15:0] S1 = {13'd0, size1};

    always @(*) begin
        if (live && held) assert (at < S && !busy[at2] && occupied < hold_slots);
        if (live && release_) assert (at < S && busy[at2] && stamps[{at2, 2'b00} +: 4] == n_out);
        if (live && full) assert (occupied == S || hold_slots == 16'd0);
        if (active && (is_reply || is_return) && busy != 4'd0) assert (release_);
        if (active && is_task && !o@token@ && holdable && occupied < hold_slots) assert (held);
        if (active) begin
            assert (depth == {13'd0, count(busy_n)});
            assert (depth <= S && max_depth <= S && depth <= max_depth);
        end
        // @INVARIANTS
        assert (addr_q == pp);
        if (configured[0]) begin
            assert (m0[0 +: 16] < S0 && m0[16 +: 16] <= S0);
            assert (m0[16 +: 16] <= m0[32 +: 16] && m0[32 +: 16] <= S0);
            assert (busy0 == ring(m0[0 +: 16], m0[16 +: 16], S0));
            assert (numbered(busy0, stamps0, n_out0, m0[0 +: 16], S0));
        end
        if (configured[1]) begin
            assert (m1[0 +: 16] < S1 && m1[16 +: 16] <= S1);
            assert (m1[16 +: 16] <= m1[32 +: 16] && m1[32 +: 16] <= S1);
            assert (busy1 == ring(m1[0 +: 16], m1[16 +: 16], S1));
            assert (numbered(busy1, stamps1, n_out1, m1[0 +: 16], S1));
        end
        // @END
    end
endmodule
