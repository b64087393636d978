// The tests' side of a Rust function completion (see rust_wire.rs): the problem's
// helpers, a stand-in for each entry point with its declared type, and the tests, built
// with the test harness. The wire is the crate passk_wire, built once per toolchain
// (languages.toml's `prebuilt`).
{helpers}
{stand_ins}

// rand 0.4's interface, which HumanEval-X's tests are written for (CodeGeeX builds them
// with rand 0.4: `gen_range(low, high)`), over Debian's rand 0.8 (`passk_rand`).
mod rand {
    pub use passk_rand::*;

    pub trait Rng: passk_rand::RngCore {
        fn gen<T>(&mut self) -> T
        where
            passk_rand::distributions::Standard: passk_rand::distributions::Distribution<T>,
        {
            passk_rand::Rng::gen(self)
        }

        fn gen_range<T: passk_rand::distributions::uniform::SampleUniform + PartialOrd>(&mut self, low: T, high: T) -> T {
            passk_rand::Rng::gen_range(self, low..high)
        }
    }

    impl<R: passk_rand::RngCore + ?Sized> Rng for R {}
}

{tests}
{runs_main}
