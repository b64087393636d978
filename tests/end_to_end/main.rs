//! passk's end-to-end suite: the real binary on real files, running real candidates
//! under the real interpreter.

mod bad_input;
mod bundled;
mod hostile;
mod humaneval;
mod scoring;
