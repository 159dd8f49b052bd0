//! Statistics: the hot-path Recorder, the per-second maximum series, and the summary
//! (percentiles, mean, standard deviation) computed once a run has ended, and the Stat
//! enum naming each statistic.

pub mod bootstrap;
pub mod fixed_buckets;
pub mod live_histogram;
pub mod prefault;
pub mod recorder;
pub mod sample_ring;
pub mod series;
pub mod stat;
pub mod summary;
pub mod worst_case;

pub use recorder::{LiveStats, Recorder, RecorderConfig};
pub use stat::Stat;
pub use summary::Summary;
