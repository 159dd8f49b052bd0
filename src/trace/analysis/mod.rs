//! Analysis (pure: events in, parts and causes out): a timeline per CPU, the per-sample
//! split joined by time (split.rs, wake_split.rs, gpio_split.rs), exclusive-time accounting, spike
//! attribution and noise classes, and the kernel's text format, so saved traces can be
//! read back and analysed without root.

pub mod account;
pub mod analyze;
mod analyze_gpio;
pub mod attribution;
pub mod gpio_split;
pub mod noise_classify;
pub mod parts;
pub mod split;
pub mod text;
pub mod threshold;
pub mod timeline;
pub mod wake_split;

#[cfg(test)]
mod analyze_join_tests;
#[cfg(test)]
mod arm64_tests;
#[cfg(test)]
mod gpio_split_tests;
#[cfg(test)]
mod tests;
