// Formal harness of the FIFO (`horus_pipeline::fifo::Fifo`, here 4 entries of 8 bits:
// `pipeline/tests/fifo.rs`). The egress's output FIFO drives `m_axis` directly (`head_valid` is
// `tvalid`, `head` carries `tdata`, `tkeep`, `tlast` and `tuser`, `pop` is `tready`), and its job
// queue is the same block, so these properties are the AXI-Stream master's and the queue's.
//
// A reference queue in this harness takes the same pushes and pops; whatever the inputs:
// - the FIFO holds what the reference holds: `count`, `full` and `head_valid` agree, and the head
//   is the reference's oldest entry (nothing lost, duplicated, reordered or changed);
// - AXI-Stream: an offered head that is not taken (`head_valid` and no `pop`) is offered again in
//   the next cycle, unchanged.
// No assumption: pushes into a full FIFO and pops of an empty one are ignored by both.
module harness (
    input wire clock,
    input wire push,
    input wire [7:0] data,
    input wire pop
);
    wire full, head_valid;
    wire [7:0] head;
    wire [2:0] count;
    top dut (
        .clock(clock), .push(push), .data(data), .pop(pop),
        .full(full), .head_valid(head_valid), .head(head), .count(count)
    );

    // The reference: entries q[0] (oldest) .. q[n - 1].
    reg [7:0] q0 = 8'd0, q1 = 8'd0, q2 = 8'd0, q3 = 8'd0;
    reg [2:0] n = 3'd0;
    wire do_pop = pop && n != 3'd0;
    wire do_push = push && n != 3'd4;
    wire [2:0] kept = n - (do_pop ? 3'd1 : 3'd0);
    always @(posedge clock) begin
        if (do_pop) begin
            q0 <= q1;
            q1 <= q2;
            q2 <= q3;
        end
        if (do_push) begin
            case (kept)
                3'd0: q0 <= data;
                3'd1: q1 <= data;
                3'd2: q2 <= data;
                default: q3 <= data;
            endcase
        end
        n <= kept + (do_push ? 3'd1 : 3'd0);
    end

    always @(*) begin
        assert (count == n);
        assert (full == (n == 3'd4));
        assert (head_valid == (n != 3'd0));
        if (n != 3'd0) assert (head == q0);
    end

    // AXI-Stream: valid held and the beat stable while stalled.
    reg stalled = 1'b0;
    reg [7:0] offered = 8'd0;
    always @(posedge clock) begin
        stalled <= head_valid && !pop;
        offered <= head;
    end
    always @(*) if (stalled) assert (head_valid && head == offered);
endmodule
