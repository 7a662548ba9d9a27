//! A Verilated model of a generated top module, driven cycle by cycle from Rust.
//!
//! The model is built once per content of the Verilog: `verilator --cc --exe --build` with a small
//! generated C++ shim, linked as a shared library and loaded with `libloading`. The shim has one
//! entry point per cycle: it sets every input from one word buffer, evaluates with the clock low,
//! copies every output to another word buffer (the values of this cycle, combinational outputs
//! included), then raises the clock and evaluates again (the edge). One FFI call per cycle.
//!
//! Builds are cached under `target/cosim/<top>-<hash>/`: a rebuild happens only when the Verilog
//! (or the shim, or the build flags) changes; concurrent builds (test threads, test processes)
//! build into private folders and rename.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// A port of the top module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: usize,
    /// Offset of its first 32-bit word in the input or output buffer.
    pub word: usize,
}

impl Port {
    pub fn words(&self) -> usize {
        self.width.div_ceil(32)
    }
}

/// The ports of module `top` in `verilog`, from its declarations (`input wire [W-1:0] name;`,
/// `output reg name;`, ...), in declaration order, with their buffer offsets; the clock `clk`,
/// which the shim drives, is not among them and must be there.
pub fn ports(verilog: &str, top: &str) -> Result<Vec<Port>> {
    let (ports, clock) = module_ports(verilog, top)?;
    if !clock {
        bail!("module {top} has no input `clk`");
    }
    Ok(ports)
}

/// The same for any module: its ports but `clk`, and whether it has `clk`.
pub fn module_ports(verilog: &str, top: &str) -> Result<(Vec<Port>, bool)> {
    let start = verilog
        .find(&format!("module {top}("))
        .with_context(|| format!("no module {top}"))?;
    let body = &verilog[start..];
    let end = body.find("endmodule").context("no endmodule")?;
    let (mut words_in, mut words_out) = (0, 0);
    let mut out = Vec::new();
    let mut clock = false;
    for line in body[..end].lines() {
        let line = line.trim();
        let input = line.starts_with("input ");
        if !input && !line.starts_with("output ") {
            continue;
        }
        let decl = line.trim_end_matches(';');
        let mut width = 1;
        if let (Some(a), Some(b)) = (decl.find('['), decl.find(':')) {
            width = decl[a + 1..b].trim().parse::<usize>()? + 1;
        }
        let name = decl
            .split_whitespace()
            .last()
            .context("port without a name")?
            .to_string();
        if name == "clk" {
            clock = true;
            continue;
        }
        let counter = if input { &mut words_in } else { &mut words_out };
        let p = Port {
            name,
            input,
            width,
            word: *counter,
        };
        *counter += p.words();
        out.push(p);
    }
    if out.is_empty() {
        bail!("module {top} has no ports");
    }
    Ok((out, clock))
}

fn shim(top: &str, ports: &[Port], trace: bool) -> String {
    let class = format!("V{top}");
    let mut set = String::new();
    let mut get = String::new();
    for p in ports {
        let (buf, code) = if p.input {
            (&mut set, true)
        } else {
            (&mut get, false)
        };
        let n = &p.name;
        let w = p.word;
        match (p.width, code) {
            (1..=32, true) => buf.push_str(&format!("    m->{n} = in[{w}];\n")),
            (1..=32, false) => buf.push_str(&format!("    out[{w}] = (uint32_t)m->{n};\n")),
            (33..=64, true) => buf.push_str(&format!(
                "    m->{n} = (uint64_t)in[{w}] | ((uint64_t)in[{}] << 32);\n",
                w + 1
            )),
            (33..=64, false) => buf.push_str(&format!(
                "    out[{w}] = (uint32_t)m->{n}; out[{}] = (uint32_t)(m->{n} >> 32);\n",
                w + 1
            )),
            (_, true) => buf.push_str(&format!(
                "    for (int i = 0; i < {}; i++) m->{n}[i] = in[{w} + i];\n",
                p.words()
            )),
            (_, false) => buf.push_str(&format!(
                "    for (int i = 0; i < {}; i++) out[{w} + i] = m->{n}[i];\n",
                p.words()
            )),
        }
    }
    let (trace_include, trace_fns, dump) = if trace {
        (
            "#include \"verilated_vcd_c.h\"\nstatic VerilatedVcdC* tfp = nullptr;\nstatic uint64_t vcd_time = 0;\n",
            format!(
                "int cosim_trace(void* p, const char* path) {{
    Verilated::traceEverOn(true);
    tfp = new VerilatedVcdC;
    static_cast<{class}*>(p)->trace(tfp, 99);
    tfp->open(path);
    return tfp->isOpen() ? 0 : 1;
}}
void cosim_trace_close() {{ if (tfp) {{ tfp->close(); delete tfp; tfp = nullptr; }} }}
"
            ),
            "    if (tfp) tfp->dump(vcd_time++);\n",
        )
    } else {
        ("", String::new(), "")
    };
    format!(
        "// Generated by horus-cosim. Do not edit.
#include <cstdint>
#include \"verilated.h\"
#include \"{class}.h\"
{trace_include}
double sc_time_stamp() {{ return 0; }}

extern \"C\" {{
void* cosim_new() {{
    Verilated::randReset(0);
    {class}* m = new {class};
    m->clk = 0;
    m->eval();
    return m;
}}
void cosim_free(void* p) {{ delete static_cast<{class}*>(p); }}
{trace_fns}void cosim_step(void* p, const uint32_t* in, uint32_t* out) {{
    {class}* m = static_cast<{class}*>(p);
{set}    m->eval();
{dump}{get}    m->clk = 1;
    m->eval();
{dump}    m->clk = 0;
}}
}}
"
    )
}

type NewFn = unsafe extern "C" fn() -> *mut std::ffi::c_void;
type FreeFn = unsafe extern "C" fn(*mut std::ffi::c_void);
type StepFn = unsafe extern "C" fn(*mut std::ffi::c_void, *const u32, *mut u32);

/// A built model, loaded.
pub struct Model {
    lib: libloading::Library,
    traced: bool,
    pub ports: Vec<Port>,
    words_in: usize,
    words_out: usize,
    pub dir: PathBuf,
}

/// One instance of a model: its inputs and outputs as word buffers.
pub struct Dut<'a> {
    model: &'a Model,
    step: libloading::Symbol<'a, StepFn>,
    free: libloading::Symbol<'a, FreeFn>,
    handle: *mut std::ffi::c_void,
    pub inputs: Vec<u32>,
    pub outputs: Vec<u32>,
    pub cycles: u64,
}

/// How the model is built (part of the cache key).
const VERILATOR_ARGS: [&str; 23] = [
    "--cc",
    "--exe",
    "--build",
    "-j",
    "2",
    "-Wno-fatal",
    "-Wno-lint",
    "-Wno-style",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "-CFLAGS",
    "-fPIC",
    // The model runs where it is built (the cache key names the processor): its instruction set
    // vectorises the copies of wide signals, such as the pass descriptor every stage registers
    // (1,249 bits at e476e75), which -O2 leaves as loops of 32-bit moves.
    "-CFLAGS",
    "-march=native",
    // Verilator's makefile compiles the model with -Os by default; -O3 against -O2 took the
    // co-simulation bench from 0.36-0.42 to 0.60-0.67 million cycles per second (e476e75).
    "-MAKEFLAGS",
    "OPT_FAST=-O3 OPT_SLOW=-O1 OPT_GLOBAL=-O2",
    "-LDFLAGS",
    "-shared",
    "-o",
    "libcosim.so",
];

/// Extra Verilator arguments from `HORUS_VERILATOR_ARGS` (whitespace-separated), for
/// experiments such as `-fno-inline` (one C++ function per module, for a profile by module).
fn extra_args() -> Vec<String> {
    std::env::var("HORUS_VERILATOR_ARGS")
        .map(|a| a.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The C++ compiler of the model: `HORUS_COSIM_CXX` if set, else `clang++` when it runs, else
/// `g++` (Verilator's default on Debian). Clang's code for the Verilated switch runs 7 to 10 %
/// faster than g++ 12's with the same flags (bench medians: 1.05-1.22 against 0.98-1.13 million
/// cycles per second on a 2.6 GHz Xeon at c7c3ac7, 0.43-0.48 against 0.39-0.44 on a 2 GHz EPYC
/// at 111f5b5).
fn compiler() -> String {
    if let Ok(cxx) = std::env::var("HORUS_COSIM_CXX") {
        return cxx;
    }
    let clang = Command::new("clang++").arg("--version").output();
    if clang.is_ok_and(|o| o.status.success()) {
        "clang++".into()
    } else {
        "g++".into()
    }
}

/// What `cxx --version` prints: part of the cache key, like Verilator's version.
fn compiler_version(cxx: &str) -> Result<String> {
    let out = Command::new(cxx)
        .arg("--version")
        .output()
        .with_context(|| format!("running {cxx} --version"))?;
    if !out.status.success() {
        bail!(
            "{cxx} --version failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What `verilator --version` prints: part of the cache key, so that a model built by one
/// Verilator is never loaded for another.
fn verilator_version() -> Result<String> {
    let out = Command::new("verilator")
        .arg("--version")
        .output()
        .context("running verilator --version (install it: scripts/test.sh does)")?;
    if !out.status.success() {
        bail!(
            "verilator --version failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What the processor is and can do (`-march=native` builds for it), from /proc/cpuinfo's first
/// "model name" and "flags" lines: part of the cache key, so that a target folder moved to
/// another machine never loads a model built for instructions it lacks.
fn processor() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    ["model name", "flags"]
        .iter()
        .filter_map(|key| info.lines().find(|l| l.starts_with(key)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn cache_root() -> PathBuf {
    // cosim/ is one level below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("cosim")
}

impl Model {
    /// Builds (or finds in the cache) the model of module `top` of `verilog`.
    pub fn build(verilog: &str, top: &str) -> Result<Model> {
        Model::build_with(verilog, top, false)
    }

    /// The same model able to write a VCD waveform (`Dut::start_trace`); slower.
    pub fn build_traced(verilog: &str, top: &str) -> Result<Model> {
        Model::build_with(verilog, top, true)
    }

    fn build_with(verilog: &str, top: &str, trace: bool) -> Result<Model> {
        let ports = ports(verilog, top)?;
        let shim = shim(top, &ports, trace);
        let mut h = DefaultHasher::new();
        verilog.hash(&mut h);
        shim.hash(&mut h);
        VERILATOR_ARGS.hash(&mut h);
        verilator_version()?.hash(&mut h);
        let cxx = compiler();
        compiler_version(&cxx)?.hash(&mut h);
        processor().hash(&mut h);
        let extra = extra_args();
        extra.hash(&mut h);
        let dir = cache_root().join(format!("{top}-{:016x}", h.finish()));
        let lib = dir.join("libcosim.so");
        if !lib.exists() {
            static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let tmp = cache_root().join(format!("{top}-tmp-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            std::fs::create_dir_all(&tmp)?;
            std::fs::write(tmp.join(format!("{top}.v")), verilog)?;
            std::fs::write(tmp.join("shim.cpp"), &shim)?;
            let out = Command::new("verilator")
                .args(VERILATOR_ARGS)
                .args(if trace { &["--trace"][..] } else { &[][..] })
                .args(["-MAKEFLAGS", &format!("CXX={cxx} LINK={cxx}")])
                .args(&extra)
                .args(["--top-module", top])
                .arg(format!("{top}.v"))
                .arg("shim.cpp")
                .current_dir(&tmp)
                .output()
                .context("running verilator (install it: scripts/test.sh does)")?;
            if !out.status.success() {
                bail!(
                    "verilator failed:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::fs::copy(tmp.join("obj_dir/libcosim.so"), tmp.join("libcosim.so"))?;
            std::fs::create_dir_all(cache_root())?;
            if std::fs::rename(&tmp, &dir).is_err() {
                // Another process built it first.
                let _ = std::fs::remove_dir_all(&tmp);
            }
        }
        // SAFETY: the library is the shim built above; it has no initialisers beyond Verilator's.
        let lib = unsafe { libloading::Library::new(&lib) }
            .with_context(|| format!("loading {}", lib.display()))?;
        let words_in = ports.iter().filter(|p| p.input).map(Port::words).sum();
        let words_out = ports.iter().filter(|p| !p.input).map(Port::words).sum();
        Ok(Model {
            lib,
            traced: trace,
            ports,
            words_in,
            words_out,
            dir,
        })
    }

    pub fn port(&self, name: &str) -> &Port {
        self.ports
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("no port {name}"))
    }

    /// A fresh instance (all registers and memories zero).
    pub fn instance(&self) -> Result<Dut<'_>> {
        // SAFETY: the symbols have the signatures the shim declares.
        unsafe {
            let new: libloading::Symbol<NewFn> = self.lib.get(b"cosim_new")?;
            let step: libloading::Symbol<StepFn> = self.lib.get(b"cosim_step")?;
            let free: libloading::Symbol<FreeFn> = self.lib.get(b"cosim_free")?;
            let handle = new();
            Ok(Dut {
                model: self,
                step,
                free,
                handle,
                inputs: vec![0; self.words_in.max(1)],
                outputs: vec![0; self.words_out.max(1)],
                cycles: 0,
            })
        }
    }
}

impl Dut<'_> {
    /// Starts writing every following cycle to a VCD file at `path`.
    pub fn start_trace(&mut self, path: &Path) -> Result<()> {
        if !self.model.traced {
            bail!("the model was built without tracing (Model::build_traced)");
        }
        let c = std::ffi::CString::new(path.to_string_lossy().as_bytes())?;
        // SAFETY: the traced shim has these symbols; the path is a valid C string.
        unsafe {
            let open: libloading::Symbol<
                unsafe extern "C" fn(*mut std::ffi::c_void, *const std::ffi::c_char) -> i32,
            > = self.model.lib.get(b"cosim_trace")?;
            if open(self.handle, c.as_ptr()) != 0 {
                bail!("cannot write {}", path.display());
            }
        }
        Ok(())
    }

    /// One clock cycle with the current inputs; `outputs` then holds this cycle's outputs (before
    /// the edge).
    pub fn step(&mut self) {
        // SAFETY: the buffers have the sizes the shim indexes.
        unsafe { (self.step)(self.handle, self.inputs.as_ptr(), self.outputs.as_mut_ptr()) };
        self.cycles += 1;
    }

    pub fn set(&mut self, p: &Port, words: &[u32]) {
        debug_assert!(p.input);
        let n = p.words();
        self.inputs[p.word..p.word + n].fill(0);
        for (i, w) in words.iter().take(n).enumerate() {
            self.inputs[p.word + i] = *w;
        }
    }

    pub fn set_u64(&mut self, p: &Port, v: u64) {
        self.set(p, &[v as u32, (v >> 32) as u32]);
    }

    pub fn get(&self, p: &Port) -> &[u32] {
        debug_assert!(!p.input);
        &self.outputs[p.word..p.word + p.words()]
    }

    pub fn get_u64(&self, p: &Port) -> u64 {
        let w = self.get(p);
        u64::from(w[0]) | w.get(1).map_or(0, |&h| u64::from(h) << 32)
    }

    pub fn get_bit(&self, p: &Port) -> bool {
        self.get(p)[0] & 1 == 1
    }
}

impl Drop for Dut<'_> {
    fn drop(&mut self) {
        // SAFETY: the traced shim has this symbol (it flushes the waveform); the model was
        // created by cosim_new and is freed once.
        unsafe {
            if self.model.traced {
                if let Ok(close) = self
                    .model
                    .lib
                    .get::<unsafe extern "C" fn()>(b"cosim_trace_close")
                {
                    close();
                }
            }
            (self.free)(self.handle)
        };
    }
}
