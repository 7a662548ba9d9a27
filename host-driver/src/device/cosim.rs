//! The generated Verilog as a device: the switch `rtl-gen` emits for a configuration's preset,
//! Verilated (`horus-cosim`), with its AXI4-Lite port driven one access at a time and its
//! streams running meanwhile: frames handed to [`CosimDevice::send`] go in as the switch takes
//! them, and every frame it sends is kept with its port. So every command is tested on the RTL,
//! with traffic flowing while it programs the switch.

use std::collections::VecDeque;

use horus_cosim::bench::{Beat, Ports, beats};
use horus_cosim::verilated::{Dut, Model};
use horus_model::config::Config;
use horus_model::sched::frame::OutFrame;
use horus_model::sched::jbsq::LeafKind;
use horus_pipeline::egress::TUSER_LEN_SHIFT;
use horus_regs::presets::Preset;

use crate::access::{AccessError, Regs};

/// The core clock: the microsecond clock advances every this many cycles.
const CYCLES_PER_US: u64 = 250;
/// Cycles an AXI4-Lite access may wait for its answer.
const ACCESS_CYCLES: u32 = 64;

/// A Verilated switch with traffic running through it.
pub struct CosimDevice {
    dut: Dut<'static>,
    p: Ports,
    input: VecDeque<Vec<u8>>,
    sending: Option<(Vec<Beat>, usize)>,
    out_frame: Vec<u8>,
    outputs: Vec<OutFrame>,
    time_us: u32,
    what: String,
    /// Frames whose first beat went in, and frames that came out.
    pub frames_in: u64,
    pub frames_out: u64,
}

impl CosimDevice {
    /// A freshly loaded switch of `cfg`'s preset (its role and table sizes) and connection
    /// timeout, generator seeded with `seed`: the Verilog is generated and Verilated (cached
    /// under `target/cosim/`), nothing is configured.
    pub fn fresh(cfg: &Config, seed: u64, what: &str) -> Result<CosimDevice, AccessError> {
        if cfg.switch.leaf == LeafKind::Jbsq {
            let preset = horus_regs::presets::jbsq_preset_for(&cfg.sizes).ok_or_else(|| {
                AccessError::Device(format!(
                    "{what}: no JBSQ leaf's preset has the sizes {:?}",
                    cfg.sizes
                ))
            })?;
            let verilog =
                rtl_gen::outputs::switch::jbsq_verilog(&preset, seed, cfg.switch.conn_timeout_us);
            return Self::of_verilog(&verilog, &preset.module_name(), what);
        }
        let preset = horus_regs::presets::PRESETS
            .iter()
            .find(|p| p.role == cfg.switch.role && p.sizes() == cfg.sizes)
            .copied()
            .ok_or_else(|| {
                AccessError::Device(format!(
                    "{what}: no hardware preset has the sizes {:?}",
                    cfg.sizes
                ))
            })?;
        Self::of_preset(&preset, seed, cfg.switch.conn_timeout_us, what)
    }

    /// A freshly loaded switch of `preset`.
    pub fn of_preset(
        preset: &Preset,
        seed: u64,
        conn_timeout_us: u32,
        what: &str,
    ) -> Result<CosimDevice, AccessError> {
        let verilog = rtl_gen::outputs::switch::verilog(preset, seed, conn_timeout_us);
        Self::of_verilog(&verilog, &preset.module_name(), what)
    }

    /// A freshly loaded switch of module `top` of `verilog` (a paper switch or a JBSQ leaf: both
    /// have the same ports).
    fn of_verilog(verilog: &str, top: &str, what: &str) -> Result<CosimDevice, AccessError> {
        let fail = |e: anyhow::Error| AccessError::Device(format!("{what}: {e:#}"));
        let model = Model::build(verilog, top).map_err(fail)?;
        // The device lives as long as the process that drives it: the model too.
        let model: &'static Model = Box::leak(Box::new(model));
        let mut dut = model.instance().map_err(fail)?;
        let p = Ports::of(model);
        dut.set(&p.bready, &[1]);
        dut.set(&p.rready, &[1]);
        dut.set(&p.m_tready, &[1]);
        Ok(CosimDevice {
            dut,
            p,
            input: VecDeque::new(),
            sending: None,
            out_frame: Vec::new(),
            outputs: Vec::new(),
            time_us: 0,
            what: what.to_string(),
            frames_in: 0,
            frames_out: 0,
        })
    }

    /// Queues `frame` to enter the switch (frames go in back to back, in order).
    pub fn send(&mut self, frame: Vec<u8>) {
        self.input.push_back(frame);
    }

    /// Frames queued or going in.
    pub fn pending_inputs(&self) -> usize {
        self.input.len() + usize::from(self.sending.is_some())
    }

    /// Takes the frames the switch sent, oldest first.
    pub fn take_outputs(&mut self) -> Vec<OutFrame> {
        std::mem::take(&mut self.outputs)
    }

    /// The switch's microsecond clock (`now_us`) as it stands.
    pub fn now_us(&self) -> u32 {
        self.time_us
    }

    /// Clock cycles run.
    pub fn cycles(&self) -> u64 {
        self.dut.cycles
    }

    /// Runs `n` cycles.
    pub fn run(&mut self, n: u64) -> Result<(), AccessError> {
        for _ in 0..n {
            self.cycle()?;
        }
        Ok(())
    }

    /// Runs until every queued frame went in and the pipeline is empty (at most `limit` cycles).
    pub fn drain(&mut self, limit: u64) -> Result<(), AccessError> {
        let mut quiet = 0;
        for _ in 0..limit {
            self.cycle()?;
            let idle = self.pending_inputs() == 0
                && self.out_frame.is_empty()
                && self.dut.get_u64(&self.p.in_flight) == 0
                && !self.dut.get_bit(&self.p.m_tvalid);
            quiet = if idle { quiet + 1 } else { 0 };
            if quiet > 64 {
                return Ok(());
            }
        }
        Err(AccessError::Device(format!(
            "{}: traffic did not drain in {limit} cycles",
            self.what
        )))
    }

    /// One clock cycle of the streams (the AXI4-Lite inputs as the caller set them).
    fn cycle(&mut self) -> Result<(), AccessError> {
        if self.sending.is_none() {
            if let Some(f) = self.input.pop_front() {
                let mut b = Vec::new();
                beats(&f, &mut b);
                self.sending = Some((b, 0));
            }
        }
        if let Some((b, i)) = &self.sending {
            let (data, keep, last) = &b[*i];
            self.dut.set(&self.p.s_tdata, data);
            self.dut.set(&self.p.s_tkeep, keep);
            self.dut.set(&self.p.s_tlast, &[u32::from(*last)]);
        }
        self.dut
            .set(&self.p.s_tvalid, &[u32::from(self.sending.is_some())]);
        if self.dut.cycles % CYCLES_PER_US == 0 {
            self.time_us = self.time_us.wrapping_add(1);
        }
        self.dut.set(&self.p.now_us, &[self.time_us]);
        self.dut.step();
        if self.dut.get_bit(&self.p.overflow) {
            return Err(AccessError::Device(format!(
                "{}: the egress overflowed at cycle {}",
                self.what, self.dut.cycles
            )));
        }
        if self.sending.is_some() && self.dut.get_bit(&self.p.s_tready) {
            let (b, i) = self.sending.as_mut().expect("sending");
            if *i == 0 {
                self.frames_in += 1;
            }
            *i += 1;
            if *i == b.len() {
                self.sending = None;
            }
        }
        if self.dut.get_bit(&self.p.m_tvalid) {
            let keep = self.dut.get_u64(&self.p.m_tkeep);
            let n = keep.trailing_ones() as usize;
            let data = self.dut.get(&self.p.m_tdata);
            self.out_frame
                .extend(data.iter().flat_map(|w| w.to_le_bytes()).take(n));
            if self.dut.get_bit(&self.p.m_tlast) {
                let tuser = self.dut.get_u64(&self.p.m_tuser);
                let len = (tuser >> TUSER_LEN_SHIFT) & 0xfff;
                if len != self.out_frame.len() as u64 {
                    return Err(AccessError::Device(format!(
                        "{}: tuser gives {len} bytes to a frame of {}",
                        self.what,
                        self.out_frame.len()
                    )));
                }
                self.frames_out += 1;
                self.outputs.push(OutFrame {
                    port: tuser as u8,
                    frame: std::mem::take(&mut self.out_frame),
                });
            }
        }
        Ok(())
    }
}

impl Regs for CosimDevice {
    fn write(&mut self, addr: u32, value: u32) -> Result<(), AccessError> {
        self.dut.set_u64(&self.p.awaddr, addr.into());
        self.dut.set(&self.p.wdata, &[value]);
        self.dut.set(&self.p.wstrb, &[0xf]);
        self.dut.set(&self.p.awvalid, &[1]);
        self.dut.set(&self.p.wvalid, &[1]);
        let mut taken = false;
        for _ in 0..ACCESS_CYCLES {
            self.cycle()?;
            if !taken && self.dut.get_bit(&self.p.awready) {
                taken = true;
                self.dut.set(&self.p.awvalid, &[0]);
                self.dut.set(&self.p.wvalid, &[0]);
                continue;
            }
            if taken && self.dut.get_bit(&self.p.bvalid) {
                return match self.dut.get_u64(&self.p.bresp) {
                    0 => Ok(()),
                    _ => Err(AccessError::SlvErr { op: "write", addr }),
                };
            }
        }
        Err(AccessError::Device(format!(
            "{}: the write to {addr:#x} got no response",
            self.what
        )))
    }

    fn read(&mut self, addr: u32) -> Result<u32, AccessError> {
        self.dut.set_u64(&self.p.araddr, addr.into());
        self.dut.set(&self.p.arvalid, &[1]);
        self.cycle()?;
        self.dut.set(&self.p.arvalid, &[0]);
        for _ in 0..ACCESS_CYCLES {
            self.cycle()?;
            if self.dut.get_bit(&self.p.rvalid) {
                return match self.dut.get_u64(&self.p.rresp) {
                    0 => Ok(self.dut.get(&self.p.rdata)[0]),
                    _ => Err(AccessError::SlvErr { op: "read", addr }),
                };
            }
        }
        Err(AccessError::Device(format!(
            "{}: the read of {addr:#x} got no response",
            self.what
        )))
    }

    fn describe(&self) -> String {
        self.what.clone()
    }
}
