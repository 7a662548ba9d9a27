//! `cargo run -p rtl-gen`: writes every output of the `rtl_gen` library into `build/` (or `--out`),
//! and says where; `--check` runs Verilator's lint and a Yosys synthesis for UltraScale+ on the
//! switches' Verilog and prints the resource figures. `--board B` writes the board target instead
//! (`build/B/`: the shell's plug-in and a README), for one switch (`--role`, default leaf; a
//! leaf's default the one that holds tasks, `--leaf`), and checks a configuration against the
//! board with `--config`. `--target p4` writes the companion
//! P4 programs for Tofino 1 instead (`build/p4/`), each checked by the structural checker.

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Parser;
use clap::ValueEnum;
use horus_model::config::Role;
use horus_model::rng::DEFAULT_SEED;
use horus_model::sched::jbsq::LeafKind;
use horus_pipeline::board::boards::{self, Board};
use horus_pipeline::presets;
use rtl_gen::boards::BoardParams;
use rtl_gen::{Params, check, outputs, write_if_changed};

#[derive(Parser, Debug)]
#[command(
    version,
    about = "Generate Horus hardware sources from the reference model"
)]
struct Args {
    /// What to generate: the FPGA pipeline's sources (`fpga`) or the P4 programs for Tofino 1
    /// (`p4`: `OUT/p4/horus_common.p4`, `horus_leaf.p4`, `horus_spine.p4`).
    #[arg(long, value_enum, default_value_t = Target::Fpga)]
    target: Target,
    /// Output folder.
    #[arg(long, default_value = "build")]
    out: PathBuf,
    /// Which switch to generate (default: both; with `--board`, the leaf).
    #[arg(long, value_enum)]
    role: Option<Which>,
    /// Write the target for this board (`build/BOARD/`) instead of the switches' sources.
    #[arg(long, value_parser = boards::board_named)]
    board: Option<&'static Board>,
    /// With `--board` and a leaf: the leaf that holds tasks (`jbsq`: docs/jbsq-pipeline.md, at
    /// the JBSQ preset of the `--preset` name) or the paper's (`horus`). Default: the
    /// configuration's `[switch] leaf` with `--config`, else `jbsq`, the FPGA targets' leaf.
    #[arg(long, value_enum, requires = "board")]
    leaf: Option<Leaf>,
    /// With `--board`: a switch configuration to check against the board (its ports), the role
    /// and the preset. With `--target p4`: a switch configuration to turn into the switch's
    /// `bfrt_python` set-up script (`OUT/p4/setup_ROLE_ID.py`) and PTF tests generated from the
    /// model (`OUT/p4/ptf_ROLE_ID.py`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Table sizes: `default` (leaf: 64 pools, 4,096 worker slots; spine: 64 pools, 1,024 leaf
    /// slots; 1,024 connection entries) or `small` (8 pools, 64 nodes, 16 connections).
    #[arg(long, default_value = "default", value_parser = preset_name)]
    preset: String,
    /// The random generator's seed (0: the model's default).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Connection-table entries expire after this many microseconds (with `--target p4
    /// --config`: the configuration's `switch.conn_timeout_us`).
    #[arg(long, default_value_t = rtl_gen::DEFAULT_CONN_TIMEOUT_US, value_parser = clap::value_parser!(u32).range(1..))]
    conn_timeout_us: u32,
    /// Lint the Verilog with Verilator and synthesize it with Yosys for UltraScale+; print the
    /// resource figures (with `--board`: the plug-in inside a stub of the shell's box, and its
    /// share of the board's part).
    #[arg(long)]
    check: bool,
    /// With `--check`: print the deepest path into every register deeper than the target, cell
    /// by cell (not only the deepest of all).
    #[arg(long, requires = "check")]
    paths: bool,
    /// With `--target p4`: compile the programs with Intel's Tofino compiler (`bf-p4c`, found
    /// through HORUS_BF_P4C, ~/.cache/horus-p4c/build/bf-p4c or the PATH) and print the stages
    /// and resources each takes, and whether it fits Tofino 1.
    #[arg(long)]
    compile: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Target {
    Fpga,
    P4,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Leaf {
    Horus,
    Jbsq,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Which {
    Leaf,
    Spine,
    Both,
}

fn preset_name(s: &str) -> Result<String, String> {
    if presets::names().contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "unknown preset; one of: {}",
            presets::names().join(", ")
        ))
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    if let Some(board) = args.board {
        if args.target == Target::P4 {
            bail!("--board writes an FPGA card's target; leave it out with --target p4");
        }
        return board_target(&args, board);
    }
    let roles = match args.role.unwrap_or(Which::Both) {
        Which::Leaf => vec![Role::Leaf],
        Which::Spine => vec![Role::Spine],
        Which::Both => vec![Role::Leaf, Role::Spine],
    };
    let mut params = Params {
        roles,
        preset: args.preset,
        seed: args.seed,
        conn_timeout_us: args.conn_timeout_us,
        ..Params::default()
    };
    if args.target == Target::P4 {
        // The Tofino program holds the connection timeout and the repair gap as constants (the
        // Verilog the timeout): the configuration's, when the program is for a configured switch.
        if let Some(path) = args.config.as_deref() {
            let cfg = horus_model::config::Config::from_file(path)
                .with_context(|| format!("reading {}", path.display()))?;
            params.conn_timeout_us = cfg.switch.conn_timeout_us;
            params.repair_gap_us = rtl_gen::p4::repair_gap_us(&cfg)?;
        }
        if args.check {
            bail!(
                "--check lints Verilog; the P4 programs are always checked (structurally) as they are written"
            );
        }
        p4_target(&args.out, &params, args.config.as_deref())?;
        if args.compile {
            p4_compile(&args.out, &params, args.config.as_deref())?;
        }
        return Ok(());
    }
    if args.compile {
        bail!("--compile compiles the P4 programs: it goes with --target p4");
    }
    if args.config.is_some() {
        bail!(
            "--config goes with --board (a configuration to check against the board) or --target p4 (its bfrt_python set-up)"
        );
    }
    let files = rtl_gen::generate(&params)?;
    for f in &files {
        let path = args.out.join(&f.name);
        let changed = write_if_changed(&path, &f.content)?;
        println!(
            "{} {}",
            if changed { "wrote    " } else { "unchanged" },
            path.display()
        );
    }
    if args.check {
        for &role in &params.roles {
            let p = presets::preset(&params.preset, role).expect("every preset has both roles");
            let file = outputs::switch::file_name(&p);
            let v = files
                .iter()
                .find(|f| f.name == file)
                .expect("the switch output wrote every role's Verilog");
            check::check(&p.module_name(), &v.content, args.paths)?;
        }
        if params.roles.contains(&Role::Leaf) {
            let p = presets::jbsq_preset(&params.preset).expect("every preset has a JBSQ leaf");
            let file = format!("{}.v", p.module_name());
            let v = files
                .iter()
                .find(|f| f.name == file)
                .expect("the switch output wrote the JBSQ leaf's Verilog");
            check::check(&p.module_name(), &v.content, args.paths)?;
        }
    }
    Ok(())
}

/// `--target p4`: the P4 programs, checked, and what the checker found.
fn p4_target(
    out: &std::path::Path,
    params: &Params,
    config: Option<&std::path::Path>,
) -> Result<()> {
    let (mut files, reports) = rtl_gen::p4::files(params)?;
    if let Some(path) = config {
        let cfg = horus_model::config::Config::from_file(path)
            .with_context(|| format!("reading {}", path.display()))?;
        let set_up = rtl_gen::p4::setup(&cfg)
            .with_context(|| format!("the set-up of {}", path.display()))?;
        if set_up.len() == 1 {
            println!(
                "{}: no PTF tests (their scenarios need a pool of two nodes or more)",
                path.display()
            );
        }
        files.extend(set_up);
    }
    fs::create_dir_all(out.join(rtl_gen::p4::DIR))
        .with_context(|| format!("creating {}", out.join(rtl_gen::p4::DIR).display()))?;
    for f in &files {
        let path = out.join(&f.name);
        let changed = write_if_changed(&path, &f.content)?;
        println!(
            "{} {}",
            if changed { "wrote    " } else { "unchanged" },
            path.display()
        );
    }
    for (role, r) in reports {
        println!(
            "{role}: {} stages of 12, {} tables, {} registers ({} register actions), {} control paths: \
             every rule of the structural check holds",
            r.stages, r.tables, r.registers, r.register_actions, r.paths
        );
        if r.refusals.is_empty() {
            println!("{role}: nothing bf-p4c is known to refuse");
        } else {
            println!(
                "{role}: {} construct(s) bf-p4c refuses or places past the plan (docs/p4.md), the program does not fit Tofino 1 yet:",
                r.refusals.len()
            );
            for f in &r.refusals {
                println!("  {f}");
            }
        }
    }
    Ok(())
}

/// `--target p4 --compile`: both programs through bf-p4c, with what it reports.
fn p4_compile(
    out: &std::path::Path,
    params: &Params,
    config: Option<&std::path::Path>,
) -> Result<()> {
    use rtl_gen::p4::compile;
    let compiler = compile::find_compiler()?.map_err(|why| anyhow::anyhow!(why))?;
    println!(
        "compiler: {} ({})",
        compiler.display(),
        compile::version(&compiler)?
    );
    let (files, _) = rtl_gen::p4::files(params)?;
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.name.clone(), f.content.clone()))
        .collect();
    let dir = out.join("p4-compile");
    let mut refused = Vec::new();
    for &role in &params.roles {
        let program = rtl_gen::p4::program_file(role);
        let c = compile::compile(&compiler, &dir, &texts, &program)?;
        print!("{}", compile::report(role, &c));
        if !c.fits() {
            refused.push(role.to_string());
            continue;
        }
        // The set-up of a configuration of this role may name only what the program has.
        if let Some(path) = config {
            let cfg = horus_model::config::Config::from_file(path)?;
            if cfg.switch.role == role {
                let bfrt = compile::read_json(&c.out.join("bfrt.json"))?;
                let script = &rtl_gen::p4::setup(&cfg)?[0].content;
                let ingress = rtl_gen::p4::emit::ingress_control(role);
                let problems =
                    compile::script_problems(script, ingress, &compile::bfrt_names(&bfrt));
                if problems.is_empty() {
                    println!(
                        "{role}: the set-up of {} names only tables, actions and fields of bfrt.json",
                        path.display()
                    );
                } else {
                    bail!(
                        "the set-up of {} names what the compiled program lacks:\n{}",
                        path.display(),
                        problems.join("\n")
                    );
                }
            }
        }
    }
    if !refused.is_empty() {
        bail!(
            "the Tofino compiler did not fit: {} (its output is under {})",
            refused.join(", "),
            dir.display()
        );
    }
    Ok(())
}

/// The leaf a board target builds: `--leaf`; else the configuration's `[switch] leaf`; else the
/// leaf that holds tasks, which an FPGA can build and a Tofino cannot (a spine: the paper's).
fn board_leaf(args: &Args, b: &'static Board, role: Role) -> Result<Leaf> {
    if let Some(leaf) = args.leaf {
        return Ok(leaf);
    }
    if role == Role::Spine {
        return Ok(Leaf::Horus);
    }
    if let Some(config) = &args.config {
        let cfg = horus_model::config::Config::from_file_for(config, &b.port_names())
            .with_context(|| config.display().to_string())?;
        return Ok(match cfg.switch.leaf {
            LeafKind::Horus => Leaf::Horus,
            LeafKind::Jbsq => Leaf::Jbsq,
        });
    }
    Ok(Leaf::Jbsq)
}

/// `--board`: the board's target for one switch.
fn board_target(args: &Args, b: &'static Board) -> Result<()> {
    let role = match args.role.unwrap_or(Which::Leaf) {
        Which::Leaf => Role::Leaf,
        Which::Spine => Role::Spine,
        Which::Both => bail!("a card runs one switch: --role leaf or --role spine"),
    };
    let p = match (board_leaf(args, b, role)?, role) {
        (Leaf::Horus, _) => {
            BoardParams::new(b, role, &args.preset, args.seed, args.conn_timeout_us)?
        }
        (Leaf::Jbsq, Role::Leaf) => {
            BoardParams::jbsq(b, &args.preset, args.seed, args.conn_timeout_us)?
        }
        (Leaf::Jbsq, Role::Spine) => bail!("--leaf jbsq is a leaf: only a leaf holds tasks"),
    };
    if let Some(config) = &args.config {
        let cfg = rtl_gen::boards::check_config(&p, config)?;
        println!(
            "{}: {} switch {} fits {} ({})",
            config.display(),
            cfg.switch.role,
            cfg.switch.id,
            p.module_name(),
            b.name
        );
    }
    let files = rtl_gen::boards::files(&p)?;
    for f in &files {
        let path = args.out.join(&f.name);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let changed = write_if_changed(&path, &f.content)?;
        println!(
            "{} {}",
            if changed { "wrote    " } else { "unchanged" },
            path.display()
        );
    }
    if args.check {
        let (text, top) = rtl_gen::boards::in_shell(&p)?;
        check::check_board(b, &p.module_name(), &text, top, args.paths)?;
    }
    Ok(())
}
