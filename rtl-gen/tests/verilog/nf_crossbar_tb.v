// A test bench for the NetFPGA-PLUS datapath behind a model of the reference projects' register
// crossbar (NetFPGA-PLUS 70b333f, hw/projects/reference_switch/hw/tcl/reference_switch.tcl:
// axi_crossbar_0, AXI4-Lite, SASD, M00/M01/M02 at 0x00000/0x10000/0x20000 with 16 address
// bits each, wired to S0/S1/S2 by hw/lib/common/hdl/top.v). Like Xilinx's crossbar, the model
// hands a window the whole address unchanged and answers an address no window decodes with
// DECERR itself. Verilog-2005: it runs in Verilator and in Icarus Verilog (-g2005).
//
// It reads and writes through the crossbar as the host's window does and prints one line per
// access: `read ADDR DATA RESP` or `write ADDR RESP`.
`timescale 1ns/1ps
module tb;
    reg clk = 1'b0;
    reg resetn = 1'b0;
    always #2 clk = ~clk;

    // The crossbar's slave side (the host's window), one transaction at a time.
    reg  [31:0] awaddr = 32'd0, araddr = 32'd0, wdata = 32'd0;
    reg         awvalid = 1'b0, wvalid = 1'b0, arvalid = 1'b0, bready = 1'b0, rready = 1'b0;

    // The master side: S0-S2 of nf_datapath.
    wire [31:0] S_AWADDR [0:2];
    wire [31:0] S_ARADDR [0:2];
    wire [2:0]  s_awvalid, s_wvalid, s_arvalid, s_awready, s_wready, s_arready, s_bvalid, s_rvalid;
    wire [1:0]  s_bresp [0:2];
    wire [1:0]  s_rresp [0:2];
    wire [31:0] s_rdata [0:2];

    // Decode: M0i takes [0x10000 * i, 0x10000 * i + 0xFFFF]; anything else is no window's.
    wire [15:0] aw_hi = awaddr[31:16];
    wire [15:0] ar_hi = araddr[31:16];
    wire        aw_hit = aw_hi < 16'd3;
    wire        ar_hit = ar_hi < 16'd3;
    wire [1:0]  aw_sel = aw_hi[1:0];
    wire [1:0]  ar_sel = ar_hi[1:0];

    genvar i;
    generate
        for (i = 0; i < 3; i = i + 1) begin : route
            assign S_AWADDR[i]  = awaddr;
            assign S_ARADDR[i]  = araddr;
            assign s_awvalid[i] = awvalid && aw_hit && aw_sel == i;
            assign s_wvalid[i]  = wvalid && aw_hit && aw_sel == i;
            assign s_arvalid[i] = arvalid && ar_hit && ar_sel == i;
        end
    endgenerate

    // Streams: idle inputs, outputs always ready.
    wire [511:0] m_tdata [0:2];
    wire [63:0]  m_tkeep [0:2];
    wire [127:0] m_tuser [0:2];
    wire [2:0]   m_tvalid, m_tlast, s_tready;

    nf_datapath dut (
        .axis_aclk(clk), .axis_resetn(resetn), .axi_aclk(clk), .axi_resetn(resetn),
        .S0_AXI_AWADDR(S_AWADDR[0]), .S0_AXI_AWVALID(s_awvalid[0]), .S0_AXI_WDATA(wdata),
        .S0_AXI_WSTRB(4'hf), .S0_AXI_WVALID(s_wvalid[0]), .S0_AXI_BREADY(bready),
        .S0_AXI_ARADDR(S_ARADDR[0]), .S0_AXI_ARVALID(s_arvalid[0]), .S0_AXI_RREADY(rready),
        .S0_AXI_ARREADY(s_arready[0]), .S0_AXI_RDATA(s_rdata[0]), .S0_AXI_RRESP(s_rresp[0]),
        .S0_AXI_RVALID(s_rvalid[0]), .S0_AXI_WREADY(s_wready[0]), .S0_AXI_BRESP(s_bresp[0]),
        .S0_AXI_BVALID(s_bvalid[0]), .S0_AXI_AWREADY(s_awready[0]),
        .S1_AXI_AWADDR(S_AWADDR[1]), .S1_AXI_AWVALID(s_awvalid[1]), .S1_AXI_WDATA(wdata),
        .S1_AXI_WSTRB(4'hf), .S1_AXI_WVALID(s_wvalid[1]), .S1_AXI_BREADY(bready),
        .S1_AXI_ARADDR(S_ARADDR[1]), .S1_AXI_ARVALID(s_arvalid[1]), .S1_AXI_RREADY(rready),
        .S1_AXI_ARREADY(s_arready[1]), .S1_AXI_RDATA(s_rdata[1]), .S1_AXI_RRESP(s_rresp[1]),
        .S1_AXI_RVALID(s_rvalid[1]), .S1_AXI_WREADY(s_wready[1]), .S1_AXI_BRESP(s_bresp[1]),
        .S1_AXI_BVALID(s_bvalid[1]), .S1_AXI_AWREADY(s_awready[1]),
        .S2_AXI_AWADDR(S_AWADDR[2]), .S2_AXI_AWVALID(s_awvalid[2]), .S2_AXI_WDATA(wdata),
        .S2_AXI_WSTRB(4'hf), .S2_AXI_WVALID(s_wvalid[2]), .S2_AXI_BREADY(bready),
        .S2_AXI_ARADDR(S_ARADDR[2]), .S2_AXI_ARVALID(s_arvalid[2]), .S2_AXI_RREADY(rready),
        .S2_AXI_ARREADY(s_arready[2]), .S2_AXI_RDATA(s_rdata[2]), .S2_AXI_RRESP(s_rresp[2]),
        .S2_AXI_RVALID(s_rvalid[2]), .S2_AXI_WREADY(s_wready[2]), .S2_AXI_BRESP(s_bresp[2]),
        .S2_AXI_BVALID(s_bvalid[2]), .S2_AXI_AWREADY(s_awready[2]),
        .s_axis_0_tdata(512'd0), .s_axis_0_tkeep(64'd0), .s_axis_0_tuser(128'd0),
        .s_axis_0_tvalid(1'b0), .s_axis_0_tready(s_tready[0]), .s_axis_0_tlast(1'b0),
        .s_axis_1_tdata(512'd0), .s_axis_1_tkeep(64'd0), .s_axis_1_tuser(128'd0),
        .s_axis_1_tvalid(1'b0), .s_axis_1_tready(s_tready[1]), .s_axis_1_tlast(1'b0),
        .s_axis_2_tdata(512'd0), .s_axis_2_tkeep(64'd0), .s_axis_2_tuser(128'd0),
        .s_axis_2_tvalid(1'b0), .s_axis_2_tready(s_tready[2]), .s_axis_2_tlast(1'b0),
        .m_axis_0_tdata(m_tdata[0]), .m_axis_0_tkeep(m_tkeep[0]), .m_axis_0_tuser(m_tuser[0]),
        .m_axis_0_tvalid(m_tvalid[0]), .m_axis_0_tready(1'b1), .m_axis_0_tlast(m_tlast[0]),
        .m_axis_1_tdata(m_tdata[1]), .m_axis_1_tkeep(m_tkeep[1]), .m_axis_1_tuser(m_tuser[1]),
        .m_axis_1_tvalid(m_tvalid[1]), .m_axis_1_tready(1'b1), .m_axis_1_tlast(m_tlast[1]),
        .m_axis_2_tdata(m_tdata[2]), .m_axis_2_tkeep(m_tkeep[2]), .m_axis_2_tuser(m_tuser[2]),
        .m_axis_2_tvalid(m_tvalid[2]), .m_axis_2_tready(1'b1), .m_axis_2_tlast(m_tlast[2])
    );

    integer cycles;

    task read(input [31:0] addr);
        reg done;
        begin
            @(negedge clk);
            araddr = addr;
            arvalid = 1'b1;
            rready = 1'b1;
            done = 1'b0;
            cycles = 0;
            if (addr[31:16] >= 16'd3) begin
                // The crossbar's own DECERR.
                @(negedge clk);
                arvalid = 1'b0;
                rready = 1'b0;
                $display("read %08x %08x %0d", addr, 32'd0, 3);
            end else begin
                while (!done) begin
                    @(posedge clk);
                    if (s_arready[ar_sel]) begin
                        #1 arvalid = 1'b0;
                    end
                    if (s_rvalid[ar_sel]) begin
                        $display("read %08x %08x %0d", addr, s_rdata[ar_sel], s_rresp[ar_sel]);
                        done = 1'b1;
                    end
                    cycles = cycles + 1;
                    if (cycles > 1000) begin
                        $display("read %08x timed out", addr);
                        $finish;
                    end
                end
                @(negedge clk);
                arvalid = 1'b0;
                rready = 1'b0;
            end
        end
    endtask

    task write(input [31:0] addr, input [31:0] data);
        reg aw_done, w_done, done;
        begin
            @(negedge clk);
            awaddr = addr;
            wdata = data;
            awvalid = 1'b1;
            wvalid = 1'b1;
            bready = 1'b1;
            aw_done = 1'b0;
            w_done = 1'b0;
            done = 1'b0;
            cycles = 0;
            if (addr[31:16] >= 16'd3) begin
                @(negedge clk);
                awvalid = 1'b0;
                wvalid = 1'b0;
                bready = 1'b0;
                $display("write %08x %0d", addr, 3);
            end else begin
                while (!done) begin
                    @(posedge clk);
                    if (s_awready[aw_sel]) aw_done = 1'b1;
                    if (s_wready[aw_sel]) w_done = 1'b1;
                    if (s_bvalid[aw_sel]) begin
                        $display("write %08x %0d", addr, s_bresp[aw_sel]);
                        done = 1'b1;
                    end
                    #1;
                    if (aw_done) awvalid = 1'b0;
                    if (w_done) wvalid = 1'b0;
                    cycles = cycles + 1;
                    if (cycles > 1000) begin
                        $display("write %08x timed out", addr);
                        $finish;
                    end
                end
                @(negedge clk);
                awvalid = 1'b0;
                wvalid = 1'b0;
                bready = 1'b0;
            end
        end
    endtask

    initial begin
        repeat (8) @(posedge clk);
        resetn = 1'b1;
        repeat (8) @(posedge clk);
        // ACCESSES
        $display("done");
        $finish;
    end
endmodule
