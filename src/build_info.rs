//! What this binary was built from, set by build.rs: the version with the git commit for
//! `--version`, so two builds (a board's package, a developer's checkout) can be told apart.

/// `0.1.0 (commit 24619bc)`, `0.1.0 (commit 24619bc-dirty)` when tracked files differed
/// from the commit, or `0.1.0 (commit unknown)` when built outside a git checkout without
/// `LATSCOPE_GIT_COMMIT` (README "Packages and boards").
pub const VERSION: &str = env!("LATSCOPE_VERSION");

/// The commit alone: a short hash, with `-dirty` appended when the tree had changes, or
/// `unknown`.
pub const GIT_COMMIT: &str = env!("LATSCOPE_GIT_COMMIT");

/// The commit's date (YYYY-MM-DD), empty when not built from a git checkout.
pub const COMMIT_DATE: &str = env!("LATSCOPE_COMMIT_DATE");
