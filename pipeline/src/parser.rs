//! First-beat parser (being written).
