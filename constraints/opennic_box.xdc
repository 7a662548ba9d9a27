# Timing constraints the Horus plug-in adds to the OpenNIC shell's (box_250mhz).
#
# `cargo run -p rtl-gen -- --board <board>` copies this file into the plug-in folder, and the
# plug-in's build_box_250mhz.tcl adds it to the shell's project as an unmanaged Tcl constraint
# file (file_type TCL, as UG903 describes): plain XDC takes no `if`, and the constraints below
# must be skipped where their clocks cannot be found. It constrains only what the plug-in adds:
# the shell owns the pins, the clocks and its own resets. Of the plug-in's two clocks, axis_aclk
# (250 MHz) is the QDMA IP's user clock (`aclk_250mhz` in qdma_subsystem_qdma_wrapper.v) and
# axil_aclk (125 MHz) comes from it through the subsystem's clock wizard
# (qdma_subsystem_clk_div): related clocks, which Vivado would time against each other.
#
# What crosses between them (pipeline/src/board/opennic.rs, axil_cdc.rs):
# - one-bit toggles into a two-flip-flop synchronizer: the register bridge's request (axil_aclk
#   to axis_aclk) and answer (back), and the reset (axil_aclk to axis_aclk). The synchronizers'
#   flip-flops carry ASYNC_REG in the Verilog, so Vivado places each pair together.
# - values held stable while a toggle crosses: the bridge's address, write data, byte strobes
#   and kind (read in axis_aclk after the request's synchronizer has settled), and its response
#   and read data (read in axil_aclk after the answer's).
# Between the two related clocks Vivado would time these as ordinary synchronous paths. They are
# instead bounded as data paths (no clock skew, no hold check, which a crossing does not need) of
# one axis_aclk period: a toggle and the values it announces arrive within a cycle, placement
# keeps them short, and no crossing is left unconstrained. Each constraint names both its ends'
# clocks, so no path within one clock loses its ordinary setup and hold checks.
#
# The clocks are found from a flip-flop of each. While the QDMA IP is a black box (synthesis of
# the shell with its IP out of context), its clocks may not reach the plug-in's pins yet: then
# the lookups find nothing, the constraints are skipped with a warning, and they apply in
# implementation, where the whole design and its clocks are present.
#
# Names are the generated Verilog's: the plug-in is instance horus_inst of box_250mhz
# (user_plugin_250mhz_inst.vh), and rust-hdl emits each flip-flop as a module whose register is
# q. rtl-gen/tests/board.rs checks that every name here is a flip-flop of the generated plug-in.

# The plug-in's two clocks, found from a flip-flop of each.
set horus_axil_clk [get_clocks -quiet -of_objects [get_pins -quiet -hierarchical -filter {NAME =~ */horus_inst/rst_active/q_reg/C}]]
set horus_core_clk [get_clocks -quiet -of_objects [get_pins -quiet -hierarchical -filter {NAME =~ */horus_inst/rst_sync/q_reg/C}]]

if {[llength $horus_axil_clk] == 0 || [llength $horus_core_clk] == 0} {
    puts "WARNING: \[Horus\] the plug-in's clocks are not found yet (the QDMA IP is a black box?): its clock-domain crossing constraints are skipped in this run"
} else {
    # Into the first flip-flop of each synchronizer.
    set_max_delay -datapath_only 4.0 -from $horus_axil_clk -to [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/req_meta/q_reg*}]
    set_max_delay -datapath_only 4.0 -from $horus_core_clk -to [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/ack_meta/q_reg*}]
    set_max_delay -datapath_only 4.0 -from $horus_axil_clk -to [get_cells -hierarchical -filter {NAME =~ */horus_inst/rst_meta/q_reg*}]

    # The held values, into the clock that reads them.
    set_max_delay -datapath_only 4.0 -from [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/addr/q_reg*}] -to $horus_core_clk
    set_max_delay -datapath_only 4.0 -from [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/wdata/q_reg*}] -to $horus_core_clk
    set_max_delay -datapath_only 4.0 -from [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/wstrb/q_reg*}] -to $horus_core_clk
    set_max_delay -datapath_only 4.0 -from [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/is_write/q_reg*}] -to $horus_core_clk
    set_max_delay -datapath_only 4.0 -from [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/m_resp/q_reg*}] -to $horus_axil_clk
    set_max_delay -datapath_only 4.0 -from [get_cells -hierarchical -filter {NAME =~ */horus_inst/core/cdc/m_data/q_reg*}] -to $horus_axil_clk
}
