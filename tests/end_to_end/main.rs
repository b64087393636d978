//! passk's end-to-end suite: the real binary on real files, running real candidates
//! under the real interpreter.

#![allow(clippy::unwrap_used, reason = "a test that cannot set itself up should fail loudly")]

mod architecture;
mod bad_input;
mod bundled;
mod concurrency;
mod container;
mod degraded;
mod deploy;
mod evalplus;
mod evalplus_released;
mod extract_languages;
mod formats;
mod generate;
mod hostile;
mod hostile_calls;
mod hostile_memory;
mod hostile_names;
mod hostile_packages;
mod hostile_signals;
mod hostile_suites;
mod hostile_trust;
mod humaneval;
mod interrupts;
mod judge;
mod languages;
mod library;
mod reports;
mod run_command;
mod sandboxfusion;
mod scale;
mod scoring;
mod serve;
mod serve_hostile;
mod shards;
mod statistics;
mod stdio_rules;
mod survival;
mod transcripts;
mod usage;
mod values;
