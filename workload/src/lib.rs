//! # horus-workload
//!
//! What the simulator (`horus-sim`) and the endpoints (`horus-client`, `horus-worker`, the demo)
//! share of a workload, below both: the task service-time distributions ([`service`]) and the
//! seeded random streams they draw from ([`rng`]), so that a client on a real network asks for
//! the service times the simulator studies.

pub mod rng;
pub mod service;
