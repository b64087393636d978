// The candidate's side of a Rust function completion (see rust_wire.rs): appended to the
// candidate's code, whose entry points it serves, each through a pointer of its declared
// type. The wire is the crate passk_wire, built once per toolchain (languages.toml's
// `prebuilt`).

fn main() {
    passk_wire::serve(|passk_index, passk_input| match passk_index {
{arms}        _ => ::std::result::Result::Err(passk_wire::Malformed),
    })
}
