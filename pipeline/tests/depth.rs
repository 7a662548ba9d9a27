//! The logic-depth figure of `check::yosys_synth` on small designs of known depth, synthesized by
//! the real Yosys (`synth_xilinx -family xcup -nowidelut`).

use horus_hdl_tools::check::yosys_synth;

#[test]
fn a_registered_and_is_one_level() {
    let v = "module top(input clk, input a, input b, output reg q);
  reg ra, rb;
  always @(posedge clk) begin
    ra <= a;
    rb <= b;
    q <= ra & rb;
  end
endmodule
";
    let r = yosys_synth("depth_and", v).unwrap();
    println!("depth_and: {r:#}");
    assert_eq!(r.lut_depth, 1, "{r:#}");
    assert!(r.deepest.starts_with("from FDRE"), "{r:#}");
}

#[test]
fn a_registered_24_input_xor_takes_more_than_one_level() {
    let v = "module top(input clk, input [23:0] a, output reg q);
  reg [23:0] ra;
  always @(posedge clk) begin
    ra <= a;
    q <= ^ra;
  end
endmodule
";
    let r = yosys_synth("depth_xor24", v).unwrap();
    println!("depth_xor24: {r:#}");
    // Two LUT6 levels (24 inputs > 6, and at most 36 fit in two): with no wide LUTs
    // (`-nowidelut`) ABC's depth-oriented mapping finds that bound.
    assert_eq!(r.lut_depth, 2, "{r:#}");
}

#[test]
fn a_registered_32_bit_adder_is_one_level_on_its_carry_chain() {
    let v = "module top(input clk, input [31:0] a, input [31:0] b, output reg [31:0] s);
  reg [31:0] ra, rb;
  always @(posedge clk) begin
    ra <= a;
    rb <= b;
    s <= ra + rb;
  end
endmodule
";
    let r = yosys_synth("depth_add32", v).unwrap();
    println!("depth_add32: {r:#}");
    // One LUT per bit (the propagate), then the carry chain: no further levels.
    assert_eq!(r.lut_depth, 1, "{r:#}");
}
