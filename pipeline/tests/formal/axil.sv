// Formal harness of the AXI4-Lite port (`horus_pipeline::axil::AxiLiteRegs`).
//
// The test writes the port list: every input of the port is an input here, free for the solver
// (the manager's side of AXI4-Lite, the pipeline's status, passes and read-backs); the `@...@`
// marks are replaced by the declarations and connections and by `horus_pipeline::regmap`'s word
// numbers.
// The AXI4-Lite signals are the port's bundle `s_axil`: rust-hdl names them `s_axil$awaddr`,
// `s_axil$awvalid`, and so on.
//
// Assumed (inputs only): the manager keeps a request valid, with its address, data and strobes
// unchanged, until it is taken; the port's reset stays low.
//
// Asserted:
//   - a write is taken whole (address and data in the same cycle) and answered in the next
//     cycle; a read is answered two cycles after it is taken; at most one request is outstanding
//     on each channel, and nothing is answered that was not asked;
//   - a response stays valid, with its data and response code unchanged, until it is taken;
//   - response codes are OKAY or SLVERR; a write or a read of a read-write word answers OKAY, a
//     write to a word that is neither read-write nor the doorbell SLVERR; a read beyond the map
//     answers SLVERR with data 0; but a write to the operation flags' word while a staged pass
//     waits (`ctl_valid`) answers SLVERR and changes nothing;
//   - the staged pass the pipeline is offered (`ctl_valid`) has exactly one operation flag
//     (`@CTL_OPS@`, their count) and none of a packet's or a second pass's (`@CTL_OTHER@`):
//     what the scheduler core's contract assumes of a control pass (`contract::Contract`);
//   - the register file changes only by an accepted write: the configuration, the spine table
//     and the staged control pass the port drives change only in the cycle after a write was
//     taken; and for a read-write word the solver picks, the register file holds, and a read of
//     it returns, in every byte written since the start, the byte the last accepted write with
//     that byte's strobe set wrote.
//
// Proven by k-induction (the test's depth): the register file's flip-flops are an output of the
// port for this harness (`probe_regs_q`, added by `check::with_probes`); the followed word's
// known bytes asserted equal to them tie the harness's state to the port's.
module harness (
    @PORTS@
);
    localparam FIRST_RW = @FIRST_RW@;
    localparam LAST_RW = @LAST_RW@;
    localparam GO = @GO@;
    localparam WORDS = @WORDS@;
    localparam OPS = @OPS@;

    @WIRES@

    top dut (
        @CONNECT@
    );

    reg past = 1'b0;
    always @(posedge clk) past <= 1'b1;

    // The manager: a request not taken in the last cycle is offered again, unchanged (an
    // immediate assumption on registers of the last cycle).
    always @(*) assume (!rst);
    reg aw_held = 1'b0, w_held = 1'b0, ar_held = 1'b0;
    reg [11:0] aw_q, ar_q;
    reg [31:0] w_q;
    reg [3:0] strb_q;
    always @(posedge clk) begin
        aw_held <= s_axil$awvalid && !s_axil$awready;
        w_held <= s_axil$wvalid && !s_axil$wready;
        ar_held <= s_axil$arvalid && !s_axil$arready;
        aw_q <= s_axil$awaddr;
        w_q <= s_axil$wdata;
        strb_q <= s_axil$wstrb;
        ar_q <= s_axil$araddr;
    end
    always @(*) begin
        if (aw_held) assume (s_axil$awvalid && s_axil$awaddr == aw_q);
        if (w_held) assume (s_axil$wvalid && s_axil$wdata == w_q && s_axil$wstrb == strb_q);
        if (ar_held) assume (s_axil$arvalid && s_axil$araddr == ar_q);
    end

    wire w_taken = s_axil$awvalid && s_axil$awready;
    wire r_taken = s_axil$arvalid && s_axil$arready;
    wire b_done = s_axil$bvalid && s_axil$bready;
    wire r_done = s_axil$rvalid && s_axil$rready;
    wire [9:0] aw_word = s_axil$awaddr[11:2];
    wire [9:0] ar_word = s_axil$araddr[11:2];

    // Requests taken and not yet answered; a write and a read taken in the last cycle, and the
    // word each named.
    reg [1:0] w_out = 2'd0;
    reg [1:0] r_out = 2'd0;
    reg w_taken_q = 1'b0;
    reg r_taken_q = 1'b0;
    reg r_taken_qq = 1'b0;
    reg [9:0] w_word = 10'd0;
    // A write refused: to the operation flags' word while a staged pass waits.
    wire w_refused = w_taken && aw_word == OPS && ctl_valid;
    reg w_refused_q = 1'b0;
    reg [9:0] r_word = 10'd0;
    always @(posedge clk) begin
        w_out <= w_out + w_taken - b_done;
        r_out <= r_out + r_taken - r_done;
        w_taken_q <= w_taken;
        r_taken_q <= r_taken;
        r_taken_qq <= r_taken_q;
        if (w_taken) w_word <= aw_word;
        if (w_taken) w_refused_q <= w_refused;
        if (r_taken) r_word <= ar_word;
    end

    // One read-write word, followed: the bytes written to it since the start and their values,
    // and what a read taken of it will find.
    (* anyconst *) reg [9:0] watch;
    always @(*) assume (watch >= FIRST_RW && watch <= LAST_RW && watch != GO);
    reg [31:0] value = 32'd0;
    reg [3:0] known = 4'd0;
    reg [31:0] r_value = 32'd0;
    reg [3:0] r_known = 4'd0;
    integer b;
    always @(posedge clk) begin
        if (w_taken && aw_word == watch && !w_refused)
            for (b = 0; b < 4; b = b + 1)
                if (s_axil$wstrb[b]) begin
                    value[8 * b +: 8] <= s_axil$wdata[8 * b +: 8];
                    known[b] <= 1'b1;
                end
        // A read sees the file as it is in the cycle it is taken (a write taken in the same
        // cycle lands after it).
        if (r_taken) begin
            r_value <= value;
            r_known <= ar_word == watch ? known : 4'd0;
        end
    end

    always @(*) begin
        assert (s_axil$awready == s_axil$wready);
        // Outstanding: a write until its response; a read for a cycle in the port, then until
        // its response.
        assert (w_out == {1'b0, s_axil$bvalid});
        assert (r_out == {1'b0, s_axil$rvalid} + {1'b0, r_taken_q});
        assert (!(s_axil$rvalid && r_taken_q));
        if (s_axil$bvalid || w_taken_q) assert (!s_axil$awready);
        if (s_axil$rvalid || r_taken_q) assert (!s_axil$arready);
        assert (s_axil$bresp == 2'b00 || s_axil$bresp == 2'b10);
        assert (s_axil$rresp == 2'b00 || s_axil$rresp == 2'b10);
        if (s_axil$rvalid && s_axil$rresp == 2'b10) assert (s_axil$rdata == 32'd0);
        if (s_axil$rvalid && r_word == watch)
            for (b = 0; b < 4; b = b + 1)
                if (r_known[b]) assert (s_axil$rdata[8 * b +: 8] == r_value[8 * b +: 8]);
        if (s_axil$rvalid && r_word >= WORDS) assert (s_axil$rresp == 2'b10);
        if (s_axil$rvalid && r_word >= FIRST_RW && r_word <= LAST_RW) assert (s_axil$rresp == 2'b00);
        if (s_axil$bvalid && w_word >= FIRST_RW && w_word <= LAST_RW)
            assert (s_axil$bresp == (w_refused_q ? 2'b10 : 2'b00));
        if (ctl_valid) assert (@CTL_OPS@ == 4'd1 && !@CTL_OTHER@);
        if (s_axil$bvalid && !(w_word >= FIRST_RW && w_word <= LAST_RW) && w_word != GO)
            assert (s_axil$bresp == 2'b10);
        // The register file holds, in every byte of the followed word written since the start,
        // what the last accepted write with that byte's strobe wrote (a claim on the file
        // itself, and the induction's invariant).
        for (b = 0; b < 4; b = b + 1)
            if (known[b]) assert (probe_regs_q[32 * watch + 8 * b +: 8] == value[8 * b +: 8]);
    end

    always @(posedge clk) if (past) begin
        if ($past(w_taken)) assert (s_axil$bvalid);
        if ($past(r_taken_q)) assert (s_axil$rvalid);
        if ($past(s_axil$bvalid && !s_axil$bready))
            assert (s_axil$bvalid && s_axil$bresp == $past(s_axil$bresp));
        if ($past(s_axil$rvalid && !s_axil$rready))
            assert (s_axil$rvalid && s_axil$rdata == $past(s_axil$rdata)
                && s_axil$rresp == $past(s_axil$rresp));
        if (!$past(w_taken))
            assert (cfg == $past(cfg) && spines == $past(spines) && ctl == $past(ctl));
    end
endmodule
