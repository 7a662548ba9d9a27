//! Event counters: everything an operator asks a scheduler about. The hardware exposes the same
//! counters, in the same order, through its register map.

use std::fmt;

/// Why a packet, or the state change it asked for, was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The frame is UDP port 1234 but not a well-formed Horus frame (parser error).
    Malformed,
    /// IPv4 header checksum wrong.
    BadChecksum,
    /// A legacy packet type (QUEUE_REMOVE, SCAN_QUEUE_SIGNAL, PROBE_IDLE_*), which we do not run.
    LegacyType,
    /// `pool_id` not below the size of the pool table.
    PoolOutOfRange,
    /// `pool_id` names a pool that is not configured.
    UnknownPool,
    /// A task for a pool that has no nodes.
    EmptyPool,
    /// `src_id` not below the size of the node table.
    NodeOutOfRange,
    /// `src_id` is not an active node of `pool_id`.
    NodeNotInPool,
    /// A message this role does not take (e.g. an idleAdd at a leaf).
    WrongRole,
    /// A continuation packet with no live connection-table entry.
    ContinuationMiss,
    /// An idleAdd for a node that is already in, or being added to, the idle list. The packet
    /// itself (a worker reply) is still forwarded; only the add is dropped.
    IdleAddDuplicate,
    /// An idleRemove that found the removal lock held (the paper: the leaf re-sends it later).
    IdleRemoveLocked,
    /// An idleRemove for a node that is not in the idle list.
    IdleRemoveNotMember,
}

impl DropReason {
    pub const ALL: [DropReason; 13] = [
        DropReason::Malformed,
        DropReason::BadChecksum,
        DropReason::LegacyType,
        DropReason::PoolOutOfRange,
        DropReason::UnknownPool,
        DropReason::EmptyPool,
        DropReason::NodeOutOfRange,
        DropReason::NodeNotInPool,
        DropReason::WrongRole,
        DropReason::ContinuationMiss,
        DropReason::IdleAddDuplicate,
        DropReason::IdleRemoveLocked,
        DropReason::IdleRemoveNotMember,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::BadChecksum => "bad_checksum",
            DropReason::LegacyType => "legacy_type",
            DropReason::PoolOutOfRange => "pool_out_of_range",
            DropReason::UnknownPool => "unknown_pool",
            DropReason::EmptyPool => "empty_pool",
            DropReason::NodeOutOfRange => "node_out_of_range",
            DropReason::NodeNotInPool => "node_not_in_pool",
            DropReason::WrongRole => "wrong_role",
            DropReason::ContinuationMiss => "continuation_miss",
            DropReason::IdleAddDuplicate => "idle_add_duplicate",
            DropReason::IdleRemoveLocked => "idle_remove_locked",
            DropReason::IdleRemoveNotMember => "idle_remove_not_member",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Messages a scheduler sends on its own (mirrored copies), by type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signal {
    /// idleAdd (IDLE_SIGNAL): the rack has idle workers.
    IdleAdd,
    /// idleRemove (IDLE_REMOVE): the rack has no idle workers left.
    IdleRemove,
    /// loadUpdate (QUEUE_SIGNAL): the rack's average load moved.
    LoadUpdate,
}

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Counters of one scheduler. All monotonic, wrapping at 2^64.
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct Counters {
            $($(#[$doc])* pub $name: u64,)*
            /// Drops by reason, indexed like [`DropReason::ALL`].
            pub drops: [u64; DropReason::ALL.len()],
        }

        impl Counters {
            /// `(name, value)` of every counter, drops last as `drop_<reason>`: the order of the
            /// hardware's counter block.
            pub fn entries(&self) -> Vec<(String, u64)> {
                let mut v = vec![$((stringify!($name).to_string(), self.$name)),*];
                for r in DropReason::ALL {
                    v.push((format!("drop_{}", r.name()), self.drop_count(r)));
                }
                v
            }
        }
    };
}

counters! {
    /// Passes of any kind.
    passes,
    /// Resubmitted (second) passes.
    resubmit_passes,
    /// Control passes.
    control_passes,
    /// First passes of new tasks (NEW_TASK, NEW_TASK_RANDOM) that were scheduled.
    tasks,
    /// Tasks sent to a node taken from the idle list.
    idle_hits,
    /// Tasks decided by power-of-two sampling.
    pow2_decisions,
    /// Power-of-two decisions whose drift check asked for a resubmission (Algorithm 2).
    pow2_resubmits,
    /// NEW_TASK_RANDOM tasks sent to a uniformly random node.
    random_tasks,
    /// Task packets forwarded to a node (first packets and continuations).
    tasks_forwarded,
    /// Continuation packets forwarded through the connection table.
    continuations,
    /// Connection-table entries created.
    conn_inserts,
    /// First packets of multi-packet tasks that found their connection slot taken (not inserted).
    conn_collisions,
    /// Connection-table entries found expired.
    conn_expired,
    /// Worker replies (TASK_DONE, TASK_DONE_IDLE) processed at a leaf.
    replies,
    /// Load updates (QUEUE_SIGNAL, QUEUE_SIGNAL_INIT) applied at a spine.
    load_updates,
    /// Nodes added to the idle list.
    idle_adds,
    /// Nodes removed from the middle of the idle list.
    idle_removes,
    /// Leaf: idleAdd messages sent.
    sent_idle_add,
    /// Leaf: idleRemove messages sent.
    sent_idle_remove,
    /// Leaf: loadUpdate messages sent.
    sent_load_update,
    /// Leaf: idle messages re-sent because a task showed the spine's state disagreed (§A.3).
    idle_repairs,
    /// Frames passed through unchanged (non-Horus, or not scheduled by this role).
    passed_through,
    /// Controller packets (KEEP_ALIVE, WORKER_ID, ...) sent to the control port.
    to_control,
}

impl Counters {
    pub fn drop_count(&self, r: DropReason) -> u64 {
        self.drops[r as usize]
    }

    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }

    pub(crate) fn drop(&mut self, r: DropReason) {
        self.drops[r as usize] = self.drops[r as usize].wrapping_add(1);
    }

    pub(crate) fn sent(&mut self, s: Signal) {
        match s {
            Signal::IdleAdd => self.sent_idle_add += 1,
            Signal::IdleRemove => self.sent_idle_remove += 1,
            Signal::LoadUpdate => self.sent_load_update += 1,
        }
    }
}
