//! `horus-cosim`: runs the frames of a pcap file through the Verilated switch (the Verilog that
//! `rtl-gen` emits for the configuration's role and table sizes), checked frame by frame against
//! the reference model, and writes what leaves the switch to a pcapng file with one interface per
//! egress port (`port N`), so that both files open in Wireshark.
//!
//! ```text
//! cargo run --release -p horus-cosim -- --config configs/example-leaf.toml --input in.pcap --output out.pcapng
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use horus_cosim::bench::{RunOptions, run_with, verilog};
use horus_cosim::traffic::Input;
use horus_cosim::verilated::Model;
use horus_model::config::Config;
use horus_model::rng::DEFAULT_SEED;
use horus_model::sched::frame::OutFrame;
use pcap_file::DataLink;
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Run a pcap file through the Verilated Horus switch, checked against the model"
)]
struct Args {
    /// The switch configuration (TOML); its role and table sizes choose the hardware preset.
    #[arg(long)]
    config: PathBuf,
    /// Input frames (pcap, Ethernet).
    #[arg(long)]
    input: PathBuf,
    /// Output frames (pcapng, one interface per egress port).
    #[arg(long)]
    output: PathBuf,
    /// The random generator's seed of the switch (and of the model).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Percent of cycles with a beat offered on the input (within and between frames).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100))]
    input_busy: u64,
    /// Percent of cycles the output is ready.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100))]
    output_ready: u64,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let cfg = Config::from_file(&args.config)
        .with_context(|| format!("reading {}", args.config.display()))?;
    let preset = horus_pipeline::presets::PRESETS
        .iter()
        .find(|p| p.role == cfg.switch.role && p.sizes() == cfg.sizes)
        .copied()
        .with_context(|| {
            format!(
                "no hardware preset of a {} has the sizes {:?}",
                cfg.switch.role, cfg.sizes
            )
        })?;
    let mut reader = PcapReader::new(BufReader::new(
        File::open(&args.input).with_context(|| format!("opening {}", args.input.display()))?,
    ))
    .with_context(|| format!("reading {}", args.input.display()))?;
    if reader.header().datalink != DataLink::ETHERNET {
        bail!(
            "{}: link type {:?}, not Ethernet",
            args.input.display(),
            reader.header().datalink
        );
    }
    let mut frames = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.with_context(|| format!("reading {}", args.input.display()))?;
        if (p.data.len() as u32) < p.orig_len {
            bail!(
                "{}: frame {} was captured truncated ({} of {} bytes)",
                args.input.display(),
                frames.len() + 1,
                p.data.len(),
                p.orig_len
            );
        }
        frames.push(p.data.into_owned());
    }
    eprintln!(
        "{} frames from {}; building {} (cached after the first time)",
        frames.len(),
        args.input.display(),
        preset.module_name()
    );
    let model = Model::build(&verilog(&preset, &cfg, args.seed), &preset.module_name())?;
    let opts = RunOptions {
        frames: frames.len(),
        seed: 1,
        input_busy: args.input_busy,
        output_ready: args.output_ready,
        mix: horus_cosim::traffic::Mix::Mixed,
        trace: None,
    };
    let mut next = frames.into_iter();
    let mut outputs: Vec<OutFrame> = Vec::new();
    let r = run_with(
        &model,
        &preset,
        &cfg,
        args.seed,
        &opts,
        &mut |_| next.next().map(Input::Frame),
        &mut |o| outputs.push(o.clone()),
    )?;

    let mut writer = PcapNgWriter::new(BufWriter::new(
        File::create(&args.output)
            .with_context(|| format!("creating {}", args.output.display()))?,
    ))?;
    let mut interfaces: BTreeMap<u8, u32> = BTreeMap::new();
    for o in &outputs {
        if !interfaces.contains_key(&o.port) {
            let id = interfaces.len() as u32;
            interfaces.insert(o.port, id);
            let mut idb = InterfaceDescriptionBlock::new(DataLink::ETHERNET, 65535);
            idb.options.push(InterfaceDescriptionOption::IfName(
                format!("port {}", o.port).into(),
            ));
            writer.write_pcapng_block(idb)?;
        }
    }
    // Output frames are stamped one microsecond apart, in the order they left.
    for (i, o) in outputs.iter().enumerate() {
        writer.write_pcapng_block(EnhancedPacketBlock {
            interface_id: interfaces[&o.port],
            timestamp: Duration::from_micros(i as u64),
            original_len: o.frame.len() as u32,
            data: o.frame.as_slice().into(),
            options: Vec::new(),
        })?;
    }
    println!(
        "{} frames in, {} out ({} egress ports) to {}; every output equal to the model's; {} passes ({} resubmitted, {} control) in {} cycles",
        r.frames_in,
        r.frames_out,
        interfaces.len(),
        args.output.display(),
        r.passes,
        r.resubmitted,
        r.controls,
        r.cycles
    );
    Ok(())
}
