// Formal harness of the board adapter's AXI4-Lite bridge (`horus_pipeline::board::axil_cdc::
// AxilCdc`): the shell's register window (slave side: 32-bit addresses, `wstrb` tied to all ones
// by the OpenNIC box, free here) onto the switch's port (master side), in one of two clockings:
//   - one clock, `clk`, for both sides (a NetFPGA-PLUS datapath's case; the bridge hands over by
//     toggles through two flip-flops either way): one proof step is one cycle;
//   - with `TWO_CLOCKS` defined, the OpenNIC shell's: the slave side on 125 MHz, the master side
//     on 250 MHz, phase-aligned (every other master edge is a slave edge). One proof step is a
//     tick of `$global_clock`, a quarter of a slave cycle (Yosys `clk2fflogic`); each side's
//     inputs change only at its own clock's rising edge, and the bookkeeping below runs on the
//     clock of the side it watches.
//
// Assumed (inputs only): both resets high at first and low after (one cycle; or with two
// clocks, the slave side's for 5 ticks and the master side's two master edges longer, through a
// synchronizer as on the board); the manager on the
// slave side holds each request (address, data, strobes) until it is taken; the switch's port on
// the master side answers only a request it has taken (a write once both its address and data
// are), once each, with OKAY or SLVERR.
//
// Asserted, for every request sequence and every timing of the switch's answers:
//   - slave side: at most one request is outstanding (a write from its address or data taken to
//     its response, a read from its address taken to its response), and a response answers one;
//     a response stays valid with its code and data until it is taken; codes are OKAY or SLVERR;
//   - a request at or above the switch's 4 KiB window is answered SLVERR (a read with data 0)
//     and never reaches the master side;
//   - master side: a request starts only for a request taken on the slave side within the
//     window, once, with its address's low 12 bits, its data and strobes, and each of its
//     channels stays valid until taken;
//   - the slave side's response is the switch's: its code, and for a read its data.
module harness (
    input wire clk,  // both sides' clock; unused with TWO_CLOCKS
    input wire [31:0] s_awaddr,
    input wire s_awvalid,
    input wire [31:0] s_wdata,
    input wire [3:0] s_wstrb,
    input wire s_wvalid,
    input wire s_bready,
    input wire [31:0] s_araddr,
    input wire s_arvalid,
    input wire s_rready,
    input wire m_awready,
    input wire m_wready,
    input wire [1:0] m_bresp,
    input wire m_bvalid,
    input wire m_arready,
    input wire [31:0] m_rdata,
    input wire [1:0] m_rresp,
    input wire m_rvalid
);
    localparam [31:0] WINDOW = 32'd@WINDOW@;

`ifdef TWO_CLOCKS
    // Ticks t = 0, 1, 2, 3: the master clock rises at t = 0 and 2, the slave clock at t = 2.
    reg [1:0] t = 2'd0;
    reg [2:0] age = 3'd0;
    always @($global_clock) begin
        t <= t + 2'd1;
        if (age != 3'd7) age <= age + 3'd1;
    end
    wire m_clock = ~t[0];
    wire s_clock = t[1];
    // The slave side's reset for 5 ticks (a slave edge and two master edges); the master side's
    // is it through two master-clock flip-flops, as the board's reset synchronizer makes it.
    wire s_reset = age < 3'd5;
    reg [1:0] m_sync = 2'b11;
    always @(posedge m_clock) m_sync <= {m_sync[0], s_reset};
    wire m_reset = m_sync[1];
    // A master-side block reads `aligned` at the edges that are slave edges too.
    wire aligned = t == 2'd1;
    // Each side's inputs hold between its rising edges.
    wire [104:0] s_in = {s_awaddr, s_awvalid, s_wdata, s_wstrb, s_wvalid, s_bready, s_araddr,
                         s_arvalid, s_rready};
    wire [40:0] m_in = {m_awready, m_wready, m_bresp, m_bvalid, m_arready, m_rdata, m_rresp,
                        m_rvalid};
    reg [104:0] s_in_q;
    reg [40:0] m_in_q;
    always @($global_clock) begin
        s_in_q <= s_in;
        m_in_q <= m_in;
    end
    always @(*) if (age != 3'd0) begin
        if (t != 2'd2) assume (s_in == s_in_q);
        if (t != 2'd2 && t != 2'd0) assume (m_in == m_in_q);
    end
`else
    wire s_clock = clk, m_clock = clk;
    reg first = 1'b1;
    always @(posedge clk) first <= 1'b0;
    wire s_reset = first, m_reset = first;
    wire aligned = 1'b1;
`endif

    wire s_awready, s_wready, s_bvalid, s_arready, s_rvalid;
    wire [1:0] s_bresp, s_rresp;
    wire [31:0] s_rdata;
    wire [11:0] m_awaddr, m_araddr;
    wire [31:0] m_wdata;
    wire [3:0] m_wstrb;
    wire m_awvalid, m_wvalid, m_bready, m_arvalid, m_rready;

    // The bridge's AXI4-Lite bundles `s_axil` and `m_axil` (rust-hdl names their signals
    // `s_axil$awaddr`, ...).
    top dut (
        .s_clock(s_clock), .s_reset(s_reset),
        .s_axil$awaddr(s_awaddr), .s_axil$awvalid(s_awvalid), .s_axil$awready(s_awready),
        .s_axil$wdata(s_wdata), .s_axil$wstrb(s_wstrb), .s_axil$wvalid(s_wvalid), .s_axil$wready(s_wready),
        .s_axil$bresp(s_bresp), .s_axil$bvalid(s_bvalid), .s_axil$bready(s_bready),
        .s_axil$araddr(s_araddr), .s_axil$arvalid(s_arvalid), .s_axil$arready(s_arready),
        .s_axil$rdata(s_rdata), .s_axil$rresp(s_rresp), .s_axil$rvalid(s_rvalid), .s_axil$rready(s_rready),
        .m_clock(m_clock), .m_reset(m_reset),
        .m_axil$awaddr(m_awaddr), .m_axil$awvalid(m_awvalid), .m_axil$awready(m_awready),
        .m_axil$wdata(m_wdata), .m_axil$wstrb(m_wstrb), .m_axil$wvalid(m_wvalid), .m_axil$wready(m_wready),
        .m_axil$bresp(m_bresp), .m_axil$bvalid(m_bvalid), .m_axil$bready(m_bready),
        .m_axil$araddr(m_araddr), .m_axil$arvalid(m_arvalid), .m_axil$arready(m_arready),
        .m_axil$rdata(m_rdata), .m_axil$rresp(m_rresp), .m_axil$rvalid(m_rvalid), .m_axil$rready(m_rready)
    );

    // ---- The manager: a request not taken in the last cycle is offered again, unchanged.
    reg aw_held = 1'b0, w_held = 1'b0, ar_held = 1'b0;
    reg [31:0] aw_q, w_q, ar_q;
    reg [3:0] strb_q;
    always @(posedge s_clock) begin
        aw_held <= s_awvalid && !s_awready;
        w_held <= s_wvalid && !s_wready;
        ar_held <= s_arvalid && !s_arready;
        aw_q <= s_awaddr;
        w_q <= s_wdata;
        strb_q <= s_wstrb;
        ar_q <= s_araddr;
    end
    always @(*) begin
        if (aw_held) assume (s_awvalid && s_awaddr == aw_q);
        if (w_held) assume (s_wvalid && s_wdata == w_q && s_wstrb == strb_q);
        if (ar_held) assume (s_arvalid && s_araddr == ar_q);
    end

    // ---- The slave side's requests: taken, not yet answered, and what they asked.
    wire aw_take = s_awvalid && s_awready;
    wire w_take = s_wvalid && s_wready;
    wire ar_take = s_arvalid && s_arready;
    wire b_done = s_bvalid && s_bready;
    wire r_done = s_rvalid && s_rready;
    reg aw_out = 1'b0, w_out = 1'b0, r_out = 1'b0;
    reg [31:0] req_addr = 32'd0, req_data = 32'd0;
    reg [3:0] req_strb = 4'd0;
    always @(posedge s_clock) if (!s_reset) begin
        if (aw_take) begin
            aw_out <= 1'b1;
            req_addr <= s_awaddr;
        end
        if (w_take) begin
            w_out <= 1'b1;
            req_data <= s_wdata;
            req_strb <= s_wstrb;
        end
        if (ar_take) begin
            r_out <= 1'b1;
            req_addr <= s_araddr;
        end
        if (b_done) begin
            aw_out <= 1'b0;
            w_out <= 1'b0;
        end
        if (r_done) r_out <= 1'b0;
    end
    wire inside = req_addr < WINDOW;

    // ---- The master side: the switch's port, answering only what it took, once.
    wire m_aw_take = m_awvalid && m_awready;
    wire m_w_take = m_wvalid && m_wready;
    wire m_ar_take = m_arvalid && m_arready;
    reg m_aw = 1'b0, m_w = 1'b0, m_r = 1'b0;
    // The switch's answer to the slave side's outstanding request.
    reg answered = 1'b0;
    reg [1:0] m_code = 2'd0;
    reg [31:0] m_data_q = 32'd0;
    always @(posedge m_clock) if (!m_reset) begin
        if (m_aw_take) m_aw <= 1'b1;
        if (m_w_take) m_w <= 1'b1;
        if (m_ar_take) m_r <= 1'b1;
        if (m_bvalid && m_bready) begin
            m_aw <= 1'b0;
            m_w <= 1'b0;
            answered <= 1'b1;
            m_code <= m_bresp;
        end
        if (m_rvalid && m_rready) begin
            m_r <= 1'b0;
            answered <= 1'b1;
            m_code <= m_rresp;
            m_data_q <= m_rdata;
        end
        // The slave side's response taken, at a master edge that is a slave edge too.
        if ((b_done || r_done) && aligned) answered <= 1'b0;
    end
    always @(*) begin
        if (m_bvalid) assume (m_aw && m_w && (m_bresp == 2'b00 || m_bresp == 2'b10));
        if (m_rvalid) assume (m_r && (m_rresp == 2'b00 || m_rresp == 2'b10));
    end

    // ---- The master side's requests as a source; in-window requests answered so far.
    reg maw_stall = 1'b0, mw_stall = 1'b0, mar_stall = 1'b0;
    reg [1:0] answers = 2'd0;
    always @(posedge m_clock) begin
        maw_stall <= m_awvalid && !m_awready && !m_reset;
        mw_stall <= m_wvalid && !m_wready && !m_reset;
        mar_stall <= m_arvalid && !m_arready && !m_reset;
    end
    always @(posedge s_clock)
        if (!s_reset && ((b_done && inside) || (r_done && inside)) && answers != 2'd3)
            answers <= answers + 2'd1;

    // ---- The slave side's responses as a source.
    reg b_stall = 1'b0, r_stall = 1'b0;
    reg [1:0] bresp_q, rresp_q;
    reg [31:0] rdata_q;
    always @(posedge s_clock) begin
        b_stall <= s_bvalid && !s_bready && !s_reset;
        r_stall <= s_rvalid && !s_rready && !s_reset;
        bresp_q <= s_bresp;
        rresp_q <= s_rresp;
        rdata_q <= s_rdata;
    end

    always @(*) if (!s_reset) begin
        // One request at a time; a response answers one.
        assert (!(r_out && (aw_out || w_out)));
        if (s_bvalid) assert (aw_out && w_out);
        if (s_rvalid) assert (r_out);
        if (s_bvalid || s_rvalid) assert (!s_awready && !s_wready && !s_arready);
        if (aw_out) assert (!s_awready);
        if (w_out) assert (!s_wready);
        if (r_out || aw_out || w_out) assert (!s_arready);
        if (r_out) assert (!s_awready && !s_wready);
        if (b_stall) assert (s_bvalid && s_bresp == bresp_q);
        if (r_stall) assert (s_rvalid && s_rresp == rresp_q && s_rdata == rdata_q);
        assert (s_bresp == 2'b00 || s_bresp == 2'b10);
        assert (s_rresp == 2'b00 || s_rresp == 2'b10);
        // Outside the window: refused here, never on the master side.
        if (s_bvalid && !inside) assert (s_bresp == 2'b10);
        if (s_rvalid && !inside) assert (s_rresp == 2'b10 && s_rdata == 32'd0);
        // The master side: only the slave side's request, within the window, as asked.
        if (m_awvalid || m_wvalid) assert (aw_out && w_out && inside && !r_out);
        if (m_arvalid) assert (r_out && inside);
        if (m_awvalid) assert (m_awaddr == req_addr[11:0]);
        if (m_wvalid) assert (m_wdata == req_data && m_wstrb == req_strb);
        if (m_arvalid) assert (m_araddr == req_addr[11:0]);
        if (maw_stall) assert (m_awvalid);
        if (mw_stall) assert (m_wvalid);
        if (mar_stall) assert (m_arvalid);
        if (m_aw) assert (!m_awvalid);
        if (m_w) assert (!m_wvalid);
        if (m_r) assert (!m_arvalid);
        if (answered) assert (!m_awvalid && !m_wvalid && !m_arvalid);
        // The answer passed through.
        if (s_bvalid && inside) assert (answered && s_bresp == m_code);
        if (s_rvalid && inside) assert (answered && s_rresp == m_code && s_rdata == m_data_q);
    end
endmodule
