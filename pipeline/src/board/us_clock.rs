//! A free-running microsecond counter for the switch's `now_us`, from the core clock: the shells
//! give a plug-in its clock (250 MHz in the OpenNIC shell's `box_250mhz`, 200 to 280 MHz in
//! NetFPGA-PLUS) but no time. `now_us` wraps at 2^32 microseconds, as the switch expects (its
//! connection timeouts and repair gaps compare wrapping differences). The clock frequency is a
//! whole number of cycles per microsecond, set when the block is built.

use rust_hdl::prelude::*;

/// The largest clock the counter takes, in MHz (cycles per microsecond).
pub const MAX_CYCLES_PER_US: u64 = 1023;

#[derive(LogicBlock)]
pub struct UsClock {
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: `now_us` restarts at zero.
    pub reset: Signal<In, Bit>,
    pub now_us: Signal<Out, Bits<32>>,
    /// Cycles since the last microsecond.
    tick: DFF<Bits<10>>,
    us: DFF<Bits<32>>,
    /// `cycles_per_us - 1`: the tick that ends a microsecond.
    last_tick: Constant<Bits<10>>,
    one10: Constant<Bits<10>>,
    one32: Constant<Bits<32>>,
    zero10: Constant<Bits<10>>,
    zero32: Constant<Bits<32>>,
}

impl UsClock {
    /// A counter for a clock of `cycles_per_us` MHz (1 to [`MAX_CYCLES_PER_US`]).
    pub fn new(cycles_per_us: u64) -> Self {
        assert!(
            (1..=MAX_CYCLES_PER_US).contains(&cycles_per_us),
            "a clock of 1 to {MAX_CYCLES_PER_US} MHz, not {cycles_per_us}"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            now_us: Default::default(),
            tick: Default::default(),
            us: Default::default(),
            last_tick: Constant::new((cycles_per_us - 1).into()),
            one10: Constant::new(1.into()),
            one32: Constant::new(1.into()),
            zero10: Constant::new(0.into()),
            zero32: Constant::new(0.into()),
        }
    }
}

impl Logic for UsClock {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, tick, us);
        if self.tick.q.val() == self.last_tick.val() {
            self.tick.d.next = self.zero10.val();
            self.us.d.next = self.us.q.val() + self.one32.val();
        } else {
            self.tick.d.next = self.tick.q.val() + self.one10.val();
        }
        if self.reset.val() {
            self.tick.d.next = self.zero10.val();
            self.us.d.next = self.zero32.val();
        }
        self.now_us.next = self.us.q.val();
    }
}
