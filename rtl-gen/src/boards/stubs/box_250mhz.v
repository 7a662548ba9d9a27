// A port-for-port stub of the OpenNIC shell's box_250mhz (Xilinx/open-nic-shell, Apache-2.0,
// src/box_250mhz/box_250mhz.sv at 940907fc99fc8d73dbea0028b3a23095a660a42a), written from that
// source for checking a plug-in here: the same parameters, ports and widths, the same two
// includes in the same order, and the host streams answered by the box when USE_PHYS_FUNC is 0.
// The box's own reset block (generic_reset on box_rstn) is left out: it drives only
// box_rst_done and the address map's reset, which this plug-in does not use; box_rst_done
// follows box_rstn here. The ref_clk_100mhz input (au50, au55c, au55n, au280 only) is left out:
// the plug-in does not use it. Parameters are `integer` where the source says `int`, so that
// Verilog-2005 tools read it.
//
// rtl-gen inlines the plug-in's two .vh files at the `include lines.
`timescale 1ns/1ps
module box_250mhz #(
  parameter integer MIN_PKT_LEN   = 64,
  parameter integer MAX_PKT_LEN   = 1518,
  parameter integer USE_PHYS_FUNC = 1,
  parameter integer NUM_PHYS_FUNC = 1,
  parameter integer NUM_QDMA      = 1,
  parameter integer NUM_CMAC_PORT = 1
) (
  input                          s_axil_awvalid,
  input                   [31:0] s_axil_awaddr,
  output                         s_axil_awready,
  input                          s_axil_wvalid,
  input                   [31:0] s_axil_wdata,
  output                         s_axil_wready,
  output                         s_axil_bvalid,
  output                   [1:0] s_axil_bresp,
  input                          s_axil_bready,
  input                          s_axil_arvalid,
  input                   [31:0] s_axil_araddr,
  output                         s_axil_arready,
  output                         s_axil_rvalid,
  output                  [31:0] s_axil_rdata,
  output                   [1:0] s_axil_rresp,
  input                          s_axil_rready,

  input      [NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tvalid,
  input  [512*NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tdata,
  input   [64*NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tkeep,
  input      [NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tlast,
  input   [16*NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tuser_size,
  input   [16*NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tuser_src,
  input   [16*NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tuser_dst,
  output     [NUM_PHYS_FUNC*NUM_QDMA-1:0] s_axis_qdma_h2c_tready,

  output     [NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tvalid,
  output [512*NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tdata,
  output  [64*NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tkeep,
  output     [NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tlast,
  output  [16*NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tuser_size,
  output  [16*NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tuser_src,
  output  [16*NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tuser_dst,
  input      [NUM_PHYS_FUNC*NUM_QDMA-1:0] m_axis_qdma_c2h_tready,

  output     [NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tvalid,
  output [512*NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tdata,
  output  [64*NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tkeep,
  output     [NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tlast,
  output  [16*NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tuser_size,
  output  [16*NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tuser_src,
  output  [16*NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tuser_dst,
  input      [NUM_CMAC_PORT-1:0] m_axis_adap_tx_250mhz_tready,

  input      [NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tvalid,
  input  [512*NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tdata,
  input   [64*NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tkeep,
  input      [NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tlast,
  input   [16*NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tuser_size,
  input   [16*NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tuser_src,
  input   [16*NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tuser_dst,
  output     [NUM_CMAC_PORT-1:0] s_axis_adap_rx_250mhz_tready,

  input                   [15:0] mod_rstn,
  output                  [15:0] mod_rst_done,

  input                          box_rstn,
  output                         box_rst_done,

  input                          axil_aclk,
  input                          axis_aclk
);

  assign box_rst_done = box_rstn;

  // What the shell hands every box and this plug-in does not read.
  wire [31:0] _unused_min_pkt_len = MIN_PKT_LEN;
  wire _unused_ok = &{1'b0, mod_rstn[15:1], s_axis_qdma_h2c_tuser_size, s_axis_qdma_h2c_tuser_src,
                      s_axis_qdma_h2c_tuser_dst, s_axis_adap_rx_250mhz_tuser_size,
                      s_axis_adap_rx_250mhz_tuser_src, s_axis_adap_rx_250mhz_tuser_dst, 1'b0};

  `include "box_250mhz_address_map_inst.vh"

  // Built without the host's streams, the box answers them itself (the plug-in's
  // instantiation refuses that build).
  generate if (USE_PHYS_FUNC == 0) begin : no_host_streams
    assign s_axis_qdma_h2c_tready = {(NUM_PHYS_FUNC*NUM_QDMA){1'b1}};
    assign {m_axis_qdma_c2h_tvalid, m_axis_qdma_c2h_tdata, m_axis_qdma_c2h_tkeep,
            m_axis_qdma_c2h_tlast, m_axis_qdma_c2h_tuser_size, m_axis_qdma_c2h_tuser_src,
            m_axis_qdma_c2h_tuser_dst} = 0;
  end endgenerate

  `include "user_plugin_250mhz_inst.vh"

endmodule
