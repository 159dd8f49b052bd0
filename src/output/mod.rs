//! File output below plan and report: where each export goes (a file or stdout), the
//! checks made before measuring, the locks held for a run, and the writes themselves
//! (to a pipe or FIFO in steps a signal ends: pipe.rs), and text from files and boards
//! escaped before it reaches a terminal (terminal.rs).
//! Plan names outputs with these types, so it imports no renderer.

pub mod atomic;
pub mod exports;
pub mod pipe;
pub mod terminal;
pub mod whole_rows;
