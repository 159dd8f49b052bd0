//! Results read back for `report` and `compare`: latscope's own files (the schema in
//! result/), `cyclictest --json` files (cyclictest.rs) and LAVA job logs (lava.rs, with
//! lava_log.rs reading every sighting of a case). Each becomes a `Run`; nothing here
//! renders or writes.

pub mod cyclictest;
pub mod intervals;
pub mod lava;
pub mod lava_log;
pub mod series;
