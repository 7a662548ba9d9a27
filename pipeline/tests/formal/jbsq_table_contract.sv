    // The read-modify-write table as its contract, for a table of two entries of @W@ bits (the
    // body of the stage's table module, below its port declarations). `RmwTable`'s forwarding
    // proof (`rmw_table.sv`) shows the table keeps it: the entry a pass sees in cycle 1 is the
    // value the last earlier pass on its index wrote. Here the entries are registers, as free as
    // the block RAM's content at the start, and `state` shows them to the harness.
    reg [@W@ - 1:0] m0;
    reg [@W@ - 1:0] m1;
    reg addr_q = 1'b0;
    wire addr = rd_indexed ? rd_index : rd_addr + rd_off;
    always @(posedge clock) begin
        addr_q <= addr;
        if (wr_en && wr_addr) m1 <= wr_data;
        if (wr_en && !wr_addr) m0 <= wr_data;
    end
    always @(*) rd_data = addr_q ? m1 : m0;
    wire unused_contract = rd_same;
    wire [2 * @W@:0] state = {addr_q, m1, m0};
endmodule // top$ctl_table
