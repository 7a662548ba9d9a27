//! Deparser (being written).
