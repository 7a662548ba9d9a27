//! A shell's AXI4-Lite window onto the switch's register port, across clock domains.
//!
//! The OpenNIC shell gives a plug-in its register window at `axil_aclk` (125 MHz), 32-bit
//! addresses and no `wstrb`; the switch's registers (`axil::AxiLiteRegs`) run at the core clock
//! (250 MHz) with 12-bit addresses and `wstrb`. This bridge takes one transaction at a time on
//! its slave side (`s_axil`, clock `s_clock`), hands it to the master side (`m_axil`, clock
//! `m_clock`) by a toggle that crosses through two flip-flops, and returns the response by a
//! toggle the other way. Address, data and response stay in their registers, unchanged, from the toggle
//! that announces them until the toggle that answers it, so they cross as stable values: the
//! bridge is correct for any two clocks (the shell's two are related, 2:1 and phase-aligned; a
//! NetFPGA-PLUS datapath has one clock for both sides, which works the same).
//!
//! - A write's byte strobes cross with its data (the OpenNIC window has none: its box ties them
//!   to all ones, whole words).
//! - An address at or above the switch's window (`2^AXIL_ADDR_BITS` bytes) is answered
//!   `SLVERR` on the slave side at once, without crossing (reads return 0), so the 1 MiB window of
//!   the shell never aliases the switch's 4 KiB.
//! - A read is taken before a write when both wait and nothing of the write has been accepted;
//!   once one of a write's address or data is taken, the write goes first.
//! - `s_reset` (slave domain) and `m_reset` (master domain) are synchronous and must overlap: the
//!   board's reset holds both (`board::opennic`). After a reset nothing is in flight.
//!
//! ```text
//!  s_clock:  AW+W / AR -> hold addr, data; req ^= 1 ──sync──> m_clock: issue on m_axil; wait B / R
//!            B / R <- resp, rdata            <──sync── ack ^= 1; hold resp, rdata
//! ```

use crate::axil::AXIL_ADDR_BITS;
use crate::axil_bus::{AxilMgr, AxilSub};
use rust_hdl::prelude::*;

/// `bresp` / `rresp` for an address outside the switch's window.
const SLVERR: u64 = 0b10;

#[derive(LogicBlock)]
pub struct AxilCdc {
    /* Slave side: the shell's window, at `s_clock`. */
    pub s_clock: Signal<In, Clock>,
    pub s_reset: Signal<In, Bit>,
    /// The window: 32-bit addresses, byte strobes (all ones for a shell without them).
    pub s_axil: AxilSub<32>,
    /* Master side: the switch's register port, at `m_clock`. */
    pub m_clock: Signal<In, Clock>,
    pub m_reset: Signal<In, Bit>,
    /// The switch's port: `AXIL_ADDR_BITS`-bit addresses.
    pub m_axil: AxilMgr<AXIL_ADDR_BITS>,

    /* Slave domain. */
    /// A read's address taken; a write's address and data taken (in either order).
    ar_got: DFF<Bit>,
    aw_got: DFF<Bit>,
    w_got: DFF<Bit>,
    /// The transaction held for the master side: a write (else a read), its address and data.
    is_write: DFF<Bit>,
    addr: DFF<Bits<32>>,
    wdata: DFF<Bits<32>>,
    wstrb: DFF<Bits<4>>,
    /// Handed to the master side, waiting for its answer.
    busy: DFF<Bit>,
    req: DFF<Bit>,
    /// The master side's `ack`, through two flip-flops (`_meta`, `_sync`: marked `ASYNC_REG`),
    /// and the value last seen.
    ack_meta: DFF<Bit>,
    ack_sync: DFF<Bit>,
    ack_seen: DFF<Bit>,
    bvalid: DFF<Bit>,
    bresp: DFF<Bits<2>>,
    rvalid: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    rresp: DFF<Bits<2>>,
    /* Master domain. */
    req_meta: DFF<Bit>,
    req_sync: DFF<Bit>,
    req_seen: DFF<Bit>,
    /// A transaction is under way on the master port: its address (and data) not yet taken,
    /// its response not yet come.
    m_busy: DFF<Bit>,
    aw_pending: DFF<Bit>,
    w_pending: DFF<Bit>,
    ar_pending: DFF<Bit>,
    ack: DFF<Bit>,
    /// The response, held for the slave side from the `ack` toggle on.
    m_resp: DFF<Bits<2>>,
    m_data: DFF<Bits<32>>,

    s_idle: Signal<Local, Bit>,
    take_ar: Signal<Local, Bit>,
    take_aw: Signal<Local, Bit>,
    take_w: Signal<Local, Bit>,
    /// The held transaction's address is outside the window.
    /// A whole transaction is held: a read's address, or a write's address and data.
    held: Signal<Local, Bit>,
    outside: Signal<Local, Bit>,
    m_start: Signal<Local, Bit>,
    /// The switch's window: `2^AXIL_ADDR_BITS` bytes.
    window: Constant<Bits<32>>,
    slverr: Constant<Bits<2>>,
    zero32: Constant<Bits<32>>,
}

impl Default for AxilCdc {
    fn default() -> Self {
        Self {
            s_clock: Default::default(),
            s_reset: Default::default(),
            s_axil: Default::default(),
            m_clock: Default::default(),
            m_reset: Default::default(),
            m_axil: Default::default(),
            ar_got: Default::default(),
            aw_got: Default::default(),
            w_got: Default::default(),
            is_write: Default::default(),
            addr: Default::default(),
            wdata: Default::default(),
            wstrb: Default::default(),
            busy: Default::default(),
            req: Default::default(),
            ack_meta: Default::default(),
            ack_sync: Default::default(),
            ack_seen: Default::default(),
            bvalid: Default::default(),
            bresp: Default::default(),
            rvalid: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            req_meta: Default::default(),
            req_sync: Default::default(),
            req_seen: Default::default(),
            m_busy: Default::default(),
            aw_pending: Default::default(),
            w_pending: Default::default(),
            ar_pending: Default::default(),
            ack: Default::default(),
            m_resp: Default::default(),
            m_data: Default::default(),
            s_idle: Default::default(),
            take_ar: Default::default(),
            take_aw: Default::default(),
            take_w: Default::default(),
            held: Default::default(),
            outside: Default::default(),
            m_start: Default::default(),
            window: Constant::new((1u64 << AXIL_ADDR_BITS).into()),
            slverr: Constant::new(SLVERR.into()),
            zero32: Constant::new(0.into()),
        }
    }
}

impl Logic for AxilCdc {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, s_clock, ar_got, aw_got, w_got, is_write, addr, wdata, wstrb, busy, req,
            ack_meta, ack_sync, ack_seen, bvalid, bresp, rvalid, rdata, rresp
        );
        dff_setup!(
            self, m_clock, req_meta, req_sync, req_seen, m_busy, aw_pending, w_pending, ar_pending,
            ack, m_resp, m_data
        );

        // ---- Slave domain: take one transaction into registers; in a later cycle hand it over
        // (or refuse it), from those registers alone; answer it.
        self.s_idle.next = !self.busy.q.val() & !self.bvalid.q.val() & !self.rvalid.q.val();
        self.held.next = self.ar_got.q.val() | (self.aw_got.q.val() & self.w_got.q.val());
        self.take_ar.next = self.s_idle.val()
            & !self.held.val()
            & !self.aw_got.q.val()
            & !self.w_got.q.val()
            & self.s_axil.arvalid.val();
        self.take_aw.next = self.s_idle.val()
            & !self.ar_got.q.val()
            & !self.aw_got.q.val()
            & !self.take_ar.val()
            & self.s_axil.awvalid.val();
        self.take_w.next = self.s_idle.val()
            & !self.ar_got.q.val()
            & !self.w_got.q.val()
            & !self.take_ar.val()
            & self.s_axil.wvalid.val();
        self.s_axil.arready.next = self.take_ar.val();
        self.s_axil.awready.next = self.take_aw.val();
        self.s_axil.wready.next = self.take_w.val();
        if self.take_aw.val() {
            self.aw_got.d.next = true;
            self.addr.d.next = self.s_axil.awaddr.val();
        }
        if self.take_w.val() {
            self.w_got.d.next = true;
            self.wdata.d.next = self.s_axil.wdata.val();
            self.wstrb.d.next = self.s_axil.wstrb.val();
        }
        if self.take_ar.val() {
            self.ar_got.d.next = true;
            self.addr.d.next = self.s_axil.araddr.val();
        }
        // A transaction held: out of the window it is answered here, without crossing; else it
        // is handed to the master side.
        self.outside.next = self.addr.q.val() >= self.window.val();
        if self.s_idle.val() & self.held.val() {
            self.ar_got.d.next = false;
            self.aw_got.d.next = false;
            self.w_got.d.next = false;
            self.is_write.d.next = !self.ar_got.q.val();
            if self.outside.val() {
                if self.ar_got.q.val() {
                    self.rvalid.d.next = true;
                    self.rresp.d.next = self.slverr.val();
                    self.rdata.d.next = self.zero32.val();
                } else {
                    self.bvalid.d.next = true;
                    self.bresp.d.next = self.slverr.val();
                }
            } else {
                self.busy.d.next = true;
                self.req.d.next = !self.req.q.val();
            }
        }
        // The answer: the master side's `ack` toggled; its response and data are stable.
        self.ack_meta.d.next = self.ack.q.val();
        self.ack_sync.d.next = self.ack_meta.q.val();
        if self.busy.q.val() & (self.ack_sync.q.val() != self.ack_seen.q.val()) {
            self.ack_seen.d.next = self.ack_sync.q.val();
            self.busy.d.next = false;
            if self.is_write.q.val() {
                self.bvalid.d.next = true;
                self.bresp.d.next = self.m_resp.q.val();
            } else {
                self.rvalid.d.next = true;
                self.rresp.d.next = self.m_resp.q.val();
                self.rdata.d.next = self.m_data.q.val();
            }
        }
        if self.bvalid.q.val() & self.s_axil.bready.val() {
            self.bvalid.d.next = false;
        }
        if self.rvalid.q.val() & self.s_axil.rready.val() {
            self.rvalid.d.next = false;
        }
        self.s_axil.bvalid.next = self.bvalid.q.val();
        self.s_axil.bresp.next = self.bresp.q.val();
        self.s_axil.rvalid.next = self.rvalid.q.val();
        self.s_axil.rresp.next = self.rresp.q.val();
        self.s_axil.rdata.next = self.rdata.q.val();
        if self.s_reset.val() {
            self.ar_got.d.next = false;
            self.aw_got.d.next = false;
            self.w_got.d.next = false;
            self.busy.d.next = false;
            self.bvalid.d.next = false;
            self.rvalid.d.next = false;
            self.req.d.next = false;
            self.ack_seen.d.next = false;
            self.ack_meta.d.next = false;
            self.ack_sync.d.next = false;
        }

        // ---- Master domain: a new `req` starts the held transaction on the switch's port.
        self.req_meta.d.next = self.req.q.val();
        self.req_sync.d.next = self.req_meta.q.val();
        self.m_start.next = !self.m_busy.q.val() & (self.req_sync.q.val() != self.req_seen.q.val());
        if self.m_start.val() {
            self.req_seen.d.next = self.req_sync.q.val();
            self.m_busy.d.next = true;
            self.aw_pending.d.next = self.is_write.q.val();
            self.w_pending.d.next = self.is_write.q.val();
            self.ar_pending.d.next = !self.is_write.q.val();
        }
        self.m_axil.awaddr.next = self.addr.q.val().get_bits::<AXIL_ADDR_BITS>(0);
        self.m_axil.araddr.next = self.addr.q.val().get_bits::<AXIL_ADDR_BITS>(0);
        self.m_axil.wdata.next = self.wdata.q.val();
        self.m_axil.wstrb.next = self.wstrb.q.val();
        self.m_axil.awvalid.next = self.aw_pending.q.val();
        self.m_axil.wvalid.next = self.w_pending.q.val();
        self.m_axil.arvalid.next = self.ar_pending.q.val();
        if self.aw_pending.q.val() & self.m_axil.awready.val() {
            self.aw_pending.d.next = false;
        }
        if self.w_pending.q.val() & self.m_axil.wready.val() {
            self.w_pending.d.next = false;
        }
        if self.ar_pending.q.val() & self.m_axil.arready.val() {
            self.ar_pending.d.next = false;
        }
        self.m_axil.bready.next = self.m_busy.q.val();
        self.m_axil.rready.next = self.m_busy.q.val();
        if self.m_busy.q.val() & self.m_axil.bvalid.val() {
            self.m_busy.d.next = false;
            self.m_resp.d.next = self.m_axil.bresp.val();
            self.ack.d.next = !self.ack.q.val();
        }
        if self.m_busy.q.val() & self.m_axil.rvalid.val() {
            self.m_busy.d.next = false;
            self.m_resp.d.next = self.m_axil.rresp.val();
            self.m_data.d.next = self.m_axil.rdata.val();
            self.ack.d.next = !self.ack.q.val();
        }
        if self.m_reset.val() {
            self.m_busy.d.next = false;
            self.aw_pending.d.next = false;
            self.w_pending.d.next = false;
            self.ar_pending.d.next = false;
            self.ack.d.next = false;
            self.req_seen.d.next = false;
            self.req_meta.d.next = false;
            self.req_sync.d.next = false;
        }
    }
}
