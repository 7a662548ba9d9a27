//! The software switch: a Horus leaf or spine on a UDP socket, deciding with the same engine a
//! card runs.
//!
//! The engine is a device of `horus_host_driver` behind the register map, programmed by the
//! driver exactly as a card: the reference model (`model`: a `FrameSwitch`, the paper's software
//! scheduler) or the Verilog `rtl-gen` emits, Verilated (`rtl`: the hardware, cycle by cycle).
//! Both take the configuration files `horusctl` and the card take (`Switch::apply`). A leaf
//! embeds the controller (`horus_host_driver::controller`): what the switch sends to its control
//! port (WORKER_ID, KEEP_ALIVE, ...) goes to the controller, which registers, watches and
//! removes workers through the same driver, and answers them with bare headers over UDP.
//!
//! Every other frame the engine emits is delivered to its own IPv4 destination and UDP port
//! ([`crate::link`]): tasks to workers or leaves, idle and load messages to spines, replies on to
//! their clients. The egress port the engine chose is counted per port.
//!
//! Time: with the model the switch's microsecond clock is the wall clock since the switch started
//! (wrapping at 2^32 as the hardware's); with the RTL it is the simulated clock (250 cycles per
//! microsecond), which runs slower than the wall clock: timeouts and repair gaps count simulated
//! time there.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use horus_host_driver::controller::{Controller, Micros};
use horus_host_driver::device::JbsqModelDevice;
#[cfg(feature = "cosim")]
use horus_host_driver::device::cosim::CosimDevice;
use horus_host_driver::device::model::ModelDevice;
use horus_host_driver::jbsq::JbsqDriver;
use horus_host_driver::leaf::Leaf;
use horus_host_driver::security::Allow;
use horus_host_driver::{Device, Switch};
use horus_model::config::{Config, Role};
use horus_model::sched::frame::OutFrame;
use horus_model::wire::{Endpoint, HorusFrame, HorusHeader};
use serde::Serialize;

use crate::link::{self, MAX_DATAGRAM};

/// Which implementation decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The reference model (`horus_model`).
    Model,
    /// The generated Verilog, Verilated (in a build with the `cosim` feature).
    Rtl,
}

/// The embedded controller's settings (a leaf's).
#[derive(Clone, Debug)]
pub struct ControllerOpts {
    /// A worker silent for this long is removed.
    pub timeout_us: Micros,
    /// Egress port of the workers it registers.
    pub worker_port: u8,
    /// The membership file.
    pub state: Option<PathBuf>,
    /// The control frames' keyed MAC (`None`: none).
    pub keys: Option<Arc<horus_host_driver::auth::Keys>>,
}

impl Default for ControllerOpts {
    fn default() -> Self {
        ControllerOpts {
            timeout_us: 1_000_000,
            worker_port: crate::demo::WORKER_PORT,
            state: None,
            keys: None,
        }
    }
}

/// What the switch does with what its engine emitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// A frame to its destination, from egress port `port`.
    Frame {
        port: u8,
        to: SocketAddr,
        frame: Vec<u8>,
    },
    /// A controller's answer to a worker, as a UDP datagram: the Horus header, bare for this
    /// project's workers, padded for a public testbed server (its WORKER_ID).
    Controller { to: SocketAddr, message: Vec<u8> },
}

/// What the switch counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SwitchStats {
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames per egress port.
    pub per_port: BTreeMap<u8, u64>,
    /// Frames to the control port (to the controller on a leaf; counted and dropped on a spine).
    pub to_control: u64,
    pub controller_replies: u64,
    /// Frames the engine emitted with no IPv4/UDP destination to deliver to.
    pub undeliverable: u64,
    /// Frames the engine addressed to this switch itself (a reply to a client whose address is
    /// the switch's, say): dropped, as nothing on the way would ever end their loop.
    pub looped: u64,
    /// Datagrams that were not frames (bare headers, malformed), dropped before the engine.
    pub not_frames: u64,
    /// Frames the engine sent to a host outside the allowed networks (a pass-through frame with
    /// an arbitrary destination, say): not relayed, so that the switch reflects nothing to a
    /// third party.
    pub refused_relay: u64,
    /// Datagrams from a host outside the allowed networks ([`SoftSwitch::set_allow`]), dropped
    /// before the engine.
    pub refused_not_allowed: u64,
    /// Bytes of the socket's receive buffer, as the kernel gave them ([`link::grow_receive_buffer`]).
    pub receive_buffer: usize,
    /// Datagrams the kernel dropped for the switch's socket (its receive buffer full), as last
    /// read (`/proc/self/net/udp`); `None` on a kernel that does not tell.
    pub kernel_drops: Option<u64>,
    /// Frames written to the capture file, and writes it refused (the switch goes on).
    pub captured: u64,
    pub capture_errors: u64,
}

/// What the software switch drives its engine through: the paper switch's driver or the JBSQ
/// leaf's. Both program the engine from the configuration as they program a card.
pub trait Driver: Leaf<Regs = Device> + Sized {
    /// The model engine of `cfg`'s switch.
    fn model(cfg: &Config, seed: u64, what: &str) -> Result<Device>;
    fn open(dev: Device) -> Result<Self>;
    /// Sets the freshly loaded engine up from `cfg`.
    fn apply(&mut self, cfg: &Config) -> Result<()>;
}

impl Driver for Switch<Device> {
    fn model(cfg: &Config, seed: u64, what: &str) -> Result<Device> {
        Ok(Device::Model(Box::new(ModelDevice::fresh(
            cfg, seed, what,
        )?)))
    }
    fn open(dev: Device) -> Result<Self> {
        Ok(Switch::open(dev)?)
    }
    fn apply(&mut self, cfg: &Config) -> Result<()> {
        Switch::apply(self, cfg)?;
        Ok(())
    }
}

impl Driver for JbsqDriver<Device> {
    fn model(cfg: &Config, seed: u64, what: &str) -> Result<Device> {
        Ok(Device::JbsqModel(Box::new(JbsqModelDevice::fresh(
            cfg, seed, what,
        )?)))
    }
    fn open(dev: Device) -> Result<Self> {
        Ok(JbsqDriver::open(dev)?)
    }
    fn apply(&mut self, cfg: &Config) -> Result<()> {
        JbsqDriver::apply(self, cfg)?;
        Ok(())
    }
}

/// A switch: its engine, its controller, its counts. `D` is the paper switch's driver or, for a
/// leaf that holds tasks (`[switch] leaf = "jbsq"`), the JBSQ leaf's ([`Driver`]).
pub struct SoftSwitch<D: Driver = Switch<Device>> {
    pub sw: D,
    /// The switch's own address (`[switch] ip` and `udp_port`).
    me: SocketAddr,
    /// Its MAC, the source of the controller's messages in a capture.
    mac: horus_model::wire::MacAddr,
    ctl: Option<Controller<D::State>>,
    control_port: u8,
    pub engine: Engine,
    pub stats: SwitchStats,
    /// The networks whose hosts the switch takes datagrams from and relays to.
    allow: Allow,
}

/// How many cycles the RTL may take to take in a frame and let its passes leave.
#[cfg(feature = "cosim")]
const DRAIN_CYCLES: u64 = 20_000;

impl SoftSwitch {
    /// A switch of `cfg`'s role and sizes on `engine` (generator seeded with `seed`), programmed
    /// with `cfg` by the driver; a leaf gets a controller with `ctl` (`None`: none; its control
    /// frames are counted and dropped). `now` is the controller's clock. A leaf that holds tasks
    /// is [`SoftSwitch::open_with`]'s, with the JBSQ driver.
    pub fn open(
        cfg: &Config,
        engine: Engine,
        seed: u64,
        ctl: Option<ControllerOpts>,
        now: Micros,
    ) -> Result<SoftSwitch> {
        SoftSwitch::open_with(cfg, engine, seed, ctl, now)
    }
}

impl<D: Driver> SoftSwitch<D> {
    /// [`SoftSwitch::open`] through driver `D`.
    pub fn open_with(
        cfg: &Config,
        engine: Engine,
        seed: u64,
        ctl: Option<ControllerOpts>,
        now: Micros,
    ) -> Result<SoftSwitch<D>> {
        let what = format!("{} switch {} ({engine:?})", cfg.switch.role, cfg.switch.id);
        let dev = match engine {
            Engine::Model => D::model(cfg, seed, &what)?,
            #[cfg(feature = "cosim")]
            Engine::Rtl => Device::Cosim(Box::new(CosimDevice::fresh(cfg, seed, &what)?)),
            #[cfg(not(feature = "cosim"))]
            Engine::Rtl => bail!("{}", horus_host_driver::device::NO_COSIM),
        };
        let mut sw = D::open(dev)?;
        sw.apply(cfg)
            .with_context(|| format!("applying the configuration to the {what}"))?;
        let ctl = match ctl {
            Some(o) if cfg.switch.role == Role::Leaf => {
                let mut c = Controller::start(
                    &mut sw,
                    o.worker_port,
                    o.timeout_us,
                    o.state.as_deref(),
                    now,
                )?;
                c.keys = o.keys;
                Some(c)
            }
            Some(_) => bail!(
                "a controller runs beside a leaf; switch {} is a spine",
                cfg.switch.id
            ),
            None => None,
        };
        let mut s = SoftSwitch {
            sw,
            me: SocketAddr::from((cfg.switch.ip, cfg.switch.udp_port)),
            mac: cfg.switch.mac,
            ctl,
            control_port: cfg.switch.control_port,
            engine,
            stats: SwitchStats::default(),
            allow: Allow::any(),
        };
        s.set_allow(Allow::resolve(Some(cfg), &[], None));
        Ok(s)
    }

    /// The networks whose hosts the switch takes datagrams from and relays frames to, and its
    /// controller control frames (by default [`Allow::resolve`] of the configuration alone).
    pub fn set_allow(&mut self, allow: Allow) {
        if let Some(c) = self.ctl.as_mut() {
            c.allow = allow.clone();
        }
        self.allow = allow;
    }

    pub fn allow(&self) -> &Allow {
        &self.allow
    }

    /// Whether a datagram from `from` is taken (counted when not).
    pub fn admits(&mut self, from: SocketAddr) -> bool {
        let ok = match from.ip() {
            std::net::IpAddr::V4(ip) => self.allow.allows(ip),
            std::net::IpAddr::V6(_) => false,
        };
        if !ok {
            self.stats.refused_not_allowed += 1;
        }
        ok
    }

    /// What the engine emitted outside a frame's passes (the configuration's passes: a leaf's
    /// first idle messages to its spines), to deliver when the switch joins the network.
    pub fn pending(&mut self, now: Micros) -> Result<Vec<Delivery>> {
        self.deliver(now)
    }

    /// What the engine emitted since the last call. The RTL first runs until its pipeline is
    /// empty: a control pass the driver started may still be on its way out.
    fn take_outputs(&mut self) -> Result<Vec<OutFrame>> {
        Ok(match self.sw.regs() {
            Device::Model(d) => d.take_outputs(),
            Device::JbsqModel(d) => d.take_outputs(),
            #[cfg(feature = "cosim")]
            Device::Cosim(d) => {
                d.drain(DRAIN_CYCLES)?;
                d.take_outputs()
            }
            _ => Vec::new(),
        })
    }

    /// The frame `frame` arriving at `now` (microseconds of the switch's clock: the wall clock
    /// for the model; the RTL keeps its own): what to deliver, in the order it left.
    pub fn frame(&mut self, frame: Vec<u8>, now: Micros) -> Result<Vec<Delivery>> {
        self.stats.frames_in += 1;
        match self.sw.regs() {
            Device::Model(d) => {
                d.frame(frame, now as u32);
            }
            Device::JbsqModel(d) => d.frame(frame, now as u32),
            #[cfg(feature = "cosim")]
            Device::Cosim(d) => d.send(frame),
            _ => unreachable!("a software switch runs on the model or the RTL"),
        }
        self.deliver(now)
    }

    /// The controller's removals due at `now`.
    pub fn tick(&mut self, now: Micros) -> Result<Vec<Delivery>> {
        let Some(c) = self.ctl.as_mut() else {
            return Ok(Vec::new());
        };
        let replies = c.tick(&mut self.sw, now)?;
        let mut out = self.replies(replies);
        out.extend(self.deliver(now)?);
        Ok(out)
    }

    /// When the controller next has a removal due.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.ctl.as_ref().and_then(|c| c.next_deadline())
    }

    pub fn controller(&self) -> Option<&Controller<D::State>> {
        self.ctl.as_ref()
    }

    fn replies(&mut self, r: Vec<horus_host_driver::controller::Reply>) -> Vec<Delivery> {
        self.stats.controller_replies += r.len() as u64;
        r.into_iter()
            .map(|r| Delivery::Controller {
                to: link::socket_addr(&r.to),
                message: r.to_bytes(),
            })
            .collect()
    }

    /// Everything the engine emitted: control-port frames through the controller (whose passes
    /// may emit more), the others to their destinations.
    fn deliver(&mut self, now: Micros) -> Result<Vec<Delivery>> {
        let mut out = Vec::new();
        let mut pending = self.take_outputs()?;
        while !pending.is_empty() {
            for f in std::mem::take(&mut pending) {
                if f.port == self.control_port {
                    self.stats.to_control += 1;
                    if let Some(c) = self.ctl.as_mut() {
                        let r = c.on_frame(&mut self.sw, &f.frame, now)?;
                        out.extend(self.replies(r));
                        pending.extend(self.take_outputs()?);
                    }
                    continue;
                }
                match link::frame_dst(&f.frame) {
                    Some(to) if to == self.me => self.stats.looped += 1,
                    Some(SocketAddr::V4(to)) if !self.allow.allows(*to.ip()) => {
                        self.stats.refused_relay += 1
                    }
                    Some(to) => {
                        self.stats.frames_out += 1;
                        *self.stats.per_port.entry(f.port).or_default() += 1;
                        out.push(Delivery::Frame {
                            port: f.port,
                            to,
                            frame: f.frame,
                        });
                    }
                    None => self.stats.undeliverable += 1,
                }
            }
        }
        Ok(out)
    }

    /// The switch's metrics in the Prometheus text format: its own counts
    /// (`horus_softswitch_*`), the controller's (`horus_controller_*`, `horus_worker_up`) and
    /// the engine's counters as a card's (`horus_switch_*`).
    pub fn metrics(&mut self) -> Result<String> {
        let st = &self.stats;
        let mut s = String::new();
        for (name, help, v) in [
            (
                "frames_in_total",
                "Frames taken from the socket.",
                st.frames_in,
            ),
            ("frames_out_total", "Frames delivered.", st.frames_out),
            (
                "to_control_total",
                "Frames the engine sent to its control port.",
                st.to_control,
            ),
            (
                "controller_replies_total",
                "Answers of the controller to workers.",
                st.controller_replies,
            ),
            (
                "undeliverable_total",
                "Frames without an IPv4/UDP destination.",
                st.undeliverable,
            ),
            (
                "looped_total",
                "Frames addressed to the switch itself, dropped.",
                st.looped,
            ),
            (
                "not_frames_total",
                "Datagrams that were not frames.",
                st.not_frames,
            ),
            (
                "refused_relay_total",
                "Frames to a host outside the allowed networks, not relayed.",
                st.refused_relay,
            ),
            (
                "refused_not_allowed_total",
                "Datagrams from a host outside the allowed networks.",
                st.refused_not_allowed,
            ),
            (
                "capture_errors_total",
                "Capture writes the disk refused.",
                st.capture_errors,
            ),
        ] {
            s += &format!(
                "# HELP horus_softswitch_{name} {help}\n# TYPE horus_softswitch_{name} counter\nhorus_softswitch_{name} {v}\n"
            );
        }
        // Left out where the kernel does not tell, rather than shown as a false 0.
        if let Some(v) = st.kernel_drops {
            let name = "kernel_drops_total";
            let help = "Datagrams the kernel dropped for the switch's socket (buffer full).";
            s += &format!(
                "# HELP horus_softswitch_{name} {help}\n# TYPE horus_softswitch_{name} counter\nhorus_softswitch_{name} {v}\n"
            );
        }
        s += "# HELP horus_softswitch_port_frames_total Frames delivered per egress port.\n# TYPE horus_softswitch_port_frames_total counter\n";
        for (p, v) in &st.per_port {
            s += &format!("horus_softswitch_port_frames_total{{port=\"{p}\"}} {v}\n");
        }
        if let Some(c) = &self.ctl {
            s += &c.metrics();
        }
        s += &horus_host_driver::metrics::switch_metrics(&mut self.sw)?;
        Ok(s)
    }

    /// The engine's counters (the switch's `PASSES`, ..., `DROP_*`), non-zero ones.
    pub fn counters(&mut self) -> Result<Vec<(&'static str, u32)>> {
        Ok(self
            .sw
            .counters()?
            .into_iter()
            .filter(|c| c.1 != 0)
            .collect())
    }
}

/// A pcap file (Ethernet) of every frame a switch takes and sends, for a dissector such as
/// Wireshark's or `endpoints/tests/dissect.py`. A controller's message, which leaves as a bare
/// datagram on this network, is written as the frame that carries it on a card's host interface.
pub struct Capture {
    w: pcap_file::pcap::PcapWriter<Buffered>,
    /// The writer's buffer, to flush it.
    file: Buffered,
    start: Instant,
}

/// A buffered file that two owners write and flush.
#[derive(Clone)]
struct Buffered(std::rc::Rc<std::cell::RefCell<std::io::BufWriter<std::fs::File>>>);

impl std::io::Write for Buffered {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

impl Capture {
    pub fn create(path: &Path) -> Result<Capture> {
        let f = std::fs::File::create(path)
            .with_context(|| format!("creating the capture {}", path.display()))?;
        let file = Buffered(std::rc::Rc::new(std::cell::RefCell::new(
            std::io::BufWriter::new(f),
        )));
        let w = pcap_file::pcap::PcapWriter::with_header(
            file.clone(),
            pcap_file::pcap::PcapHeader {
                datalink: pcap_file::DataLink::ETHERNET,
                ..Default::default()
            },
        )
        .with_context(|| format!("writing the capture {}", path.display()))?;
        Ok(Capture {
            w,
            file,
            start: Instant::now(),
        })
    }

    fn write(&mut self, frame: &[u8], stats: &mut SwitchStats) {
        let p = pcap_file::pcap::PcapPacket::new(self.start.elapsed(), frame.len() as u32, frame);
        match self.w.write_packet(&p) {
            Ok(_) => stats.captured += 1,
            Err(_) => stats.capture_errors += 1,
        }
    }

    /// What switch `s` delivers.
    fn deliveries<D: Driver>(&mut self, s: &mut SoftSwitch<D>, out: &[Delivery]) {
        for d in out {
            match d {
                Delivery::Frame { frame, .. } => self.write(frame, &mut s.stats),
                Delivery::Controller { to, message } => {
                    let Ok(h) = HorusHeader::parse(message) else {
                        continue;
                    };
                    let ip = match to.ip() {
                        std::net::IpAddr::V4(ip) => ip,
                        std::net::IpAddr::V6(_) => continue,
                    };
                    let me_ip = match s.me.ip() {
                        std::net::IpAddr::V4(ip) => ip,
                        std::net::IpAddr::V6(_) => continue,
                    };
                    let f = HorusFrame::new(
                        Endpoint {
                            mac: s.mac,
                            ip: me_ip,
                            udp_port: horus_model::wire::HORUS_UDP_PORT,
                        },
                        Endpoint {
                            mac: link::mac_of(ip),
                            ip,
                            udp_port: to.port(),
                        },
                        h,
                        message[horus_model::wire::HEADER_LEN..].to_vec(),
                    );
                    self.write(&f.to_bytes(), &mut s.stats);
                }
            }
        }
    }

    fn flush(&mut self, stats: &mut SwitchStats) {
        if std::io::Write::flush(&mut self.file).is_err() {
            stats.capture_errors += 1;
        }
    }
}

/// Sends what the switch delivers; a destination that cannot be reached now loses the datagram
/// (as a wire would), counted.
pub fn send_all(sock: &UdpSocket, out: Vec<Delivery>, lost: &mut u64) {
    for d in out {
        let r = match &d {
            Delivery::Frame { to, frame, .. } => sock.send_to(frame, to),
            Delivery::Controller { to, message } => sock.send_to(message, to),
        };
        if r.is_err() {
            *lost += 1;
        }
    }
}

/// How long a running switch serves, and how often it reports.
#[derive(Clone, Debug)]
pub struct RunOpts {
    pub duration: Option<Duration>,
    pub stats_every: Option<Duration>,
    /// Stops the switch when set (checked at least every 50 ms).
    pub stop: Option<Arc<AtomicBool>>,
    /// Where to publish the metrics ([`SoftSwitch::metrics`]), at most once a second.
    pub metrics: Option<Arc<Mutex<String>>>,
    /// How long the switch polls its socket after the last frame before it sleeps until the
    /// next (default 0: it sleeps at once). Polling takes each frame without a thread wake-up
    /// (tens of microseconds on a virtual machine) at the cost of a core: worth it for a switch
    /// with a core of its own, not where the switches share a small machine with their workers
    /// and clients (`docs/endpoints.md`).
    pub spin: Duration,
    /// Write every frame taken and sent to this pcap file.
    pub capture: Option<PathBuf>,
}

impl Default for RunOpts {
    fn default() -> Self {
        RunOpts {
            duration: None,
            stats_every: None,
            stop: None,
            metrics: None,
            spin: Duration::ZERO,
            capture: None,
        }
    }
}

/// Sleeps until `sock` has a datagram, at most `d`.
fn wait_readable(sock: &UdpSocket, d: Duration) {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask.
    unsafe {
        libc::ppoll(&mut p, 1, &ts, std::ptr::null());
    }
}

/// Serves on `listen` until the duration ends (forever without one): the counts at the end.
pub fn run<D: Driver>(
    s: &mut SoftSwitch<D>,
    listen: SocketAddr,
    opts: &RunOpts,
    start: Instant,
    mut report: impl FnMut(&mut SoftSwitch<D>) -> Result<()>,
) -> Result<u64> {
    let sock = UdpSocket::bind(listen).with_context(|| format!("binding UDP {listen}"))?;
    s.stats.receive_buffer = link::grow_receive_buffer(&sock, 16 << 20);
    let now = || start.elapsed().as_micros() as Micros;
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    let mut lost = 0u64;
    let mut reported = Instant::now();
    let mut capture = opts.capture.as_deref().map(Capture::create).transpose()?;
    let send =
        |s: &mut SoftSwitch<D>, c: &mut Option<Capture>, out: Vec<Delivery>, lost: &mut u64| {
            if let Some(c) = c.as_mut() {
                c.deliveries(s, &out);
            }
            send_all(&sock, out, lost);
        };
    let out = s.pending(now())?;
    send(s, &mut capture, out, &mut lost);
    sock.set_nonblocking(true)?;
    let mut idle_since: Option<Instant> = None;
    let mut published: Option<Instant> = None;
    loop {
        if let Some(m) = &opts.metrics
            && published.is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            published = Some(Instant::now());
            s.stats.kernel_drops = link::kernel_drops(&sock).or(s.stats.kernel_drops);
            let text = s.metrics()?;
            if let Ok(mut m) = m.lock() {
                *m = text;
            }
        }
        if opts.duration.is_some_and(|d| start.elapsed() >= d)
            || opts
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            if let Some(c) = capture.as_mut() {
                c.flush(&mut s.stats);
            }
            s.stats.kernel_drops = link::kernel_drops(&sock).or(s.stats.kernel_drops);
            return Ok(lost);
        }
        if opts.stats_every.is_some_and(|e| reported.elapsed() >= e) {
            reported = Instant::now();
            s.stats.kernel_drops = link::kernel_drops(&sock).or(s.stats.kernel_drops);
            report(s)?;
        }
        match sock.recv_from(&mut buf) {
            Ok((n, from)) => {
                idle_since = None;
                let d = &buf[..n];
                if !s.admits(from) {
                    continue;
                }
                // A frame is at least an Ethernet header; a bare header is a controller's
                // message to a host, never to a switch.
                if n < horus_model::wire::ETH_HEADER_LEN || n == horus_model::wire::HEADER_LEN {
                    s.stats.not_frames += 1;
                } else {
                    if let Some(c) = capture.as_mut() {
                        c.write(d, &mut s.stats);
                    }
                    let out = s.frame(d.to_vec(), now())?;
                    send(s, &mut capture, out, &mut lost);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                // The controller removes silent workers only once the socket is empty: a
                // switch behind its traffic still holds their keep-alives.
                if s.next_deadline().is_some_and(|d| d <= now()) {
                    let out = s.tick(now())?;
                    send(s, &mut capture, out, &mut lost);
                    continue;
                }
                let since = *idle_since.get_or_insert_with(Instant::now);
                if since.elapsed() < opts.spin {
                    std::hint::spin_loop();
                } else {
                    // Idle: the capture on disk is whole up to here (a demo ends its switches
                    // with a signal).
                    if let Some(c) = capture.as_mut() {
                        c.flush(&mut s.stats);
                    }
                    let wait = s
                        .next_deadline()
                        .map_or(50_000, |d| d.saturating_sub(now()).clamp(100, 50_000));
                    wait_readable(&sock, Duration::from_micros(wait));
                }
            }
            // A signal, or a stop and continue: nothing lost, go on.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("receiving a frame"),
        }
    }
}
