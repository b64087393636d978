// The candidate's side of a Rust function completion (see rust_wire.rs): appended to the
// candidate's code, whose entry points it serves, each through a pointer of its declared
// type.
#[path = "{driver}/rust_wire.rs"]
mod passk_wire;

fn main() {
    passk_wire::serve(|passk_index, passk_input| match passk_index {
{arms}        _ => ::std::result::Result::Err(passk_wire::Malformed),
    })
}
