//! `horus-cosim --config --input --output`: a pcap in, a pcapng out, checked against the model.

use std::process::Command;

use horus_cosim::traffic::{Rng, Traffic, config};
use horus_model::config::Role;
use pcap_file::pcap::{PcapPacket, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};

#[test]
fn pcap_in_pcapng_out_with_one_interface_per_port() {
    let dir = std::env::temp_dir().join(format!("horus-cosim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let preset = horus_pipeline::presets::preset("small", Role::Leaf).unwrap();
    let cfg = config(Role::Leaf, preset.sizes(), &mut Rng::new(3));
    std::fs::write(dir.join("leaf.toml"), cfg.to_toml_string()).unwrap();
    let mut w = PcapWriter::new(std::fs::File::create(dir.join("in.pcap")).unwrap()).unwrap();
    let mut t = Traffic::new(Role::Leaf, 5);
    for i in 0..3000u64 {
        let f = t.frame();
        w.write_packet(&PcapPacket::new(
            std::time::Duration::from_micros(i),
            f.len() as u32,
            &f,
        ))
        .unwrap();
    }
    drop(w);
    let out = Command::new(env!("CARGO_BIN_EXE_horus-cosim"))
        .args([
            "--config",
            "leaf.toml",
            "--input",
            "in.pcap",
            "--output",
            "out.pcapng",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("3000 frames in"), "{text}");
    let mut r = PcapNgReader::new(std::fs::File::open(dir.join("out.pcapng")).unwrap()).unwrap();
    let (mut interfaces, mut packets) = (0, 0);
    while let Some(b) = r.next_block() {
        match b.unwrap() {
            Block::InterfaceDescription(_) => interfaces += 1,
            Block::EnhancedPacket(_) => packets += 1,
            _ => {}
        }
    }
    assert!(
        text.contains(&format!("{packets} out ({interfaces} egress ports)")),
        "{text}"
    );
    assert!(
        packets > 1000 && interfaces > 3,
        "{packets} frames on {interfaces} ports"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn horus_traffic_writes_a_capture_and_a_configuration_that_fits_it() {
    let dir = std::env::temp_dir().join(format!("horus-traffic-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_horus-traffic"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--role", "spine", "--frames", "250", "--seed", "9", "--config", "s.toml", "--output",
        "s.pcap",
    ]);
    assert!(out.status.success(), "{out:?}");
    let cfg = horus_model::config::Config::from_file(&dir.join("s.toml")).unwrap();
    assert_eq!(cfg.switch.role, Role::Spine);
    let mut r =
        pcap_file::pcap::PcapReader::new(std::fs::File::open(dir.join("s.pcap")).unwrap()).unwrap();
    let mut frames = 0;
    while let Some(p) = r.next_packet() {
        assert!(!p.unwrap().data.is_empty());
        frames += 1;
    }
    assert_eq!(frames, 250);
    let out = run(&[
        "--preset", "huge", "--config", "x.toml", "--output", "x.pcap",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown preset \"huge\"") && err.contains("small"),
        "{err}"
    );
    assert!(
        !dir.join("x.toml").exists(),
        "nothing is written for a refused preset"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
