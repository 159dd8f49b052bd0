//! File output below plan and report: where each export goes (a file or stdout), the
//! checks made before measuring, the locks held for a run, and the writes themselves.
//! Plan names outputs with these types, so it imports no renderer.

pub mod atomic;
pub mod exports;
pub mod whole_rows;
