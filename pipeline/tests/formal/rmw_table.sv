// Formal harness of the read-modify-write table (`horus_pipeline::table::RmwTable`) inside its
// test bench (`pipeline/tests/table.rs`, `Bench`: each cycle a pass may present an index, one
// cycle later it adds `inc` to the entry it sees and writes it back).
//
// The entry a pass sees in cycle 1 must be the value the last earlier pass on its index wrote,
// whatever the inputs: back to back on one index, two behind, with a read-back in between.
// Assumptions are on inputs only: the table's kind fixes which ones it takes (`SUMMED`: any
// offset, else 0; `PICKS`: the stage picks a read-back's index itself).
module harness #(parameter SUMMED = 0, parameter PICKS = 0) (
    input wire clock,
    input wire valid,
    input wire [2:0] addr,
    input wire [2:0] off,
    input wire [15:0] inc,
    input wire indexed,
    input wire [2:0] index
);
    wire [15:0] seen;
    top dut (
        .clock(clock), .valid(valid), .addr(addr), .off(off), .inc(inc),
        .indexed(indexed), .index(index), .picks(PICKS[0]), .seen(seen)
    );

    always @(*) if (!SUMMED) assume (off == 3'd0);

    // One entry, at an index the solver picks (any of them: the proof holds for each), is
    // followed: from the first write to it on, a pass reading it must see the last value
    // written. Before that first write the table's content is whatever the block RAM held (the
    // proof assumes nothing about it).
    (* anyconst *) reg [2:0] x;
    reg known = 1'b0;
    reg [15:0] value = 16'd0;
    reg p_valid = 1'b0;
    reg [2:0] p_addr = 3'd0;
    reg [15:0] p_inc = 16'd0;

    wire [2:0] a = indexed ? index : addr + off;
    always @(posedge clock) begin
        p_valid <= valid;
        p_addr <= a;
        p_inc <= inc;
        if (p_valid && p_addr == x) begin
            known <= 1'b1;
            value <= seen + p_inc;
        end
    end

    always @(*) if (p_valid && p_addr == x && known) assert (seen == value);
endmodule
