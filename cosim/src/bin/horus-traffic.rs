//! `horus-traffic`: writes the co-simulation's random traffic (every packet type, hot pools and
//! nodes, non-Horus, malformed and over-long frames) as a pcap file, with a switch configuration
//! that it fits, so that `horus-cosim` can run a capture without a testbed.
//!
//! ```text
//! cargo run --release -p horus-cosim --bin horus-traffic -- --role leaf --frames 3000 --config leaf.toml --output in.pcap
//! cargo run --release -p horus-cosim -- --config leaf.toml --input in.pcap --output out.pcapng
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use horus_cosim::traffic::{Rng, Traffic, config};
use horus_model::config::Role;
use pcap_file::pcap::{PcapPacket, PcapWriter};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Write random Horus traffic (pcap) and a switch configuration it fits (TOML)"
)]
struct Args {
    /// The switch the traffic is for.
    #[arg(long, value_enum, default_value_t = Which::Leaf)]
    role: Which,
    /// The hardware size preset the configuration fits (`small` or `default`).
    #[arg(long, default_value = "small")]
    preset: String,
    /// Frames to write, one per microsecond of capture time.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    frames: u64,
    /// Seed of the traffic and of the configuration.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the configuration goes.
    #[arg(long)]
    config: PathBuf,
    /// Where the frames go.
    #[arg(long)]
    output: PathBuf,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Which {
    Leaf,
    Spine,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let role = match args.role {
        Which::Leaf => Role::Leaf,
        Which::Spine => Role::Spine,
    };
    let preset = horus_pipeline::presets::preset(&args.preset, role).with_context(|| {
        format!(
            "unknown preset {:?}; one of: {}",
            args.preset,
            horus_pipeline::presets::names().join(", ")
        )
    })?;
    let cfg = config(role, preset.sizes(), &mut Rng::new(args.seed));
    std::fs::write(&args.config, cfg.to_toml_string())
        .with_context(|| format!("writing {}", args.config.display()))?;
    let file = File::create(&args.output)
        .with_context(|| format!("creating {}", args.output.display()))?;
    let mut w = PcapWriter::new(BufWriter::new(file))?;
    let mut t = Traffic::new(role, args.seed);
    for i in 0..args.frames {
        let f = t.frame();
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(i),
            f.len() as u32,
            &f,
        ))?;
    }
    println!(
        "wrote {} ({} frames) and {} (a {} of the {} preset)",
        args.output.display(),
        args.frames,
        args.config.display(),
        format!("{role:?}").to_lowercase(),
        args.preset
    );
    Ok(())
}
