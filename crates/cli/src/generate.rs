//! `passk generate`: samples from a model behind an OpenAI-compatible endpoint, and what
//! a user watches while they arrive.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use passk_formats::problems::{Format, ProblemSet, SetOptions};
use passk_generate::{Event, GenerateError, GenerateOptions, Generated, Mode, Sampling, Template};
use passk_runner::Language;

use crate::error::CommandError;
use crate::say::say;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    Completion,
    Chat,
}

/// How a model is asked for samples: shared by `generate` and `run`.
#[derive(Debug, clap::Args)]
pub struct GenerationArgs {
    /// The OpenAI-compatible API's base URL, such as http://localhost:8000/v1 (vLLM,
    /// SGLang, TGI), http://localhost:8080/v1 (llama.cpp's server) or
    /// https://api.openai.com/v1; passk adds /completions or /chat/completions.
    #[arg(long, value_name = "URL", value_parser = parse_endpoint)]
    pub endpoint: String,
    /// The model's name, as the endpoint knows it.
    #[arg(long)]
    pub model: String,
    /// The environment variable that holds the API key, sent as a bearer token where
    /// it is set.
    #[arg(long, value_name = "NAME", default_value = "OPENAI_API_KEY")]
    pub api_key_env: String,
    /// completion: a base model continues each prompt, stopped at the suite's stop
    /// sequences. chat: a chat model answers an instruction made from --template; its raw
    /// answer is the sample, for `passk evaluate --extract`.
    #[arg(long, value_enum, default_value = "completion")]
    pub mode: ModeArg,
    /// The chat instruction (with --mode chat): a MiniJinja template of prompt,
    /// description, example, starter_code, language, entry_point, task_id and stdio
    /// [default: passk's, which asks for one fenced code block].
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
    /// Samples per problem.
    #[arg(long, default_value = "1", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub n: u32,
    /// Sampling temperature [default: 0 for one sample per problem, 0.8 for more].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::args::parse_nonnegative)]
    pub temperature: Option<f64>,
    /// Nucleus sampling's share of probability, above 0 and at most 1 [default: the
    /// server's].
    #[arg(long, allow_negative_numbers = true, value_parser = parse_top_p)]
    pub top_p: Option<f64>,
    /// The longest answer, in tokens (sent as max_tokens, or max_completion_tokens where
    /// the server takes only that).
    #[arg(long, default_value = "1024", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: u32,
    /// The sampling seed, where the server takes one; a sample asked for alone gets
    /// seed + its index.
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Requests in flight at once.
    #[arg(long, default_value = "16", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub concurrency: u32,
    /// At most this many requests a second.
    #[arg(long, value_name = "RATE", allow_negative_numbers = true, value_parser = crate::args::parse_factor)]
    pub requests_per_second: Option<f64>,
    /// Attempts of one request (after 429, 5xx, or a dropped connection) before giving up.
    #[arg(long, default_value = "8", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_attempts: u32,
    /// The longest a request may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value = "600", allow_negative_numbers = true, value_parser = crate::args::parse_seconds)]
    pub request_timeout: Duration,
}

#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub generation: GenerationArgs,
    /// A problem file in any format passk reads, or a bundled set's name.
    #[arg(long)]
    pub problems: String,
    /// The problem file's format [default: told from its first record].
    #[arg(long, value_parser = crate::args::format_parser())]
    pub format: Option<Format>,
    /// The language to ask for where the problem set names none (the contest sets',
    /// whose programs may be in any): cpp, java, go, rust, javascript, typescript, bash
    /// or python [default: python].
    #[arg(long, value_name = "NAME", value_parser = crate::args::parse_language)]
    pub language: Option<&'static Language>,
    /// Where the samples go, appended as they arrive; the request's settings are
    /// recorded beside them in FILE.request.json.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// Ask for every sample again, whatever FILE holds.
    #[arg(long)]
    pub restart: bool,
}

fn parse_top_p(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(share) if share > 0.0 && share <= 1.0 => Ok(share),
        Ok(_) => Err("must be above 0 and at most 1".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

fn parse_endpoint(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.starts_with("http://") || text.starts_with("https://") {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?} is not an http:// or https:// URL; give the API's base, such as http://localhost:8000/v1"
        ))
    }
}

impl GenerationArgs {
    /// The generation of `problems` into `output` these arguments ask for.
    pub fn into_options(
        self,
        problems: Arc<ProblemSet>,
        language: Option<&'static Language>,
        output: PathBuf,
        restart: bool,
    ) -> Result<GenerateOptions, CommandError> {
        let template = match (&self.template, self.mode) {
            (Some(path), ModeArg::Chat) => Template {
                name: path.display().to_string(),
                text: std::fs::read_to_string(path)
                    .map_err(|source| passk_formats::InputError::Open { path: path.display().to_string(), source })?,
            },
            (Some(_), ModeArg::Completion) => return Err(CommandError::TemplateWithoutChat),
            (None, _) => Template::default(),
        };
        let mut defaulted = Vec::new();
        if self.temperature.is_none() {
            defaulted.push(("temperature", "--temperature"));
        }
        let temperature = self.temperature.unwrap_or(if self.n == 1 { 0.0 } else { 0.8 });
        if self.n > 1 && temperature == 0.0 {
            say!("warning: --n {} at temperature 0: a server samples greedily, and the samples are alike", self.n);
        }
        Ok(GenerateOptions {
            endpoint: self.endpoint,
            model: self.model,
            api_key: std::env::var(&self.api_key_env).ok().filter(|key| !key.trim().is_empty()),
            api_key_env: self.api_key_env,
            problems,
            mode: match self.mode {
                ModeArg::Completion => Mode::Completion,
                ModeArg::Chat => Mode::Chat,
            },
            template,
            language,
            sampling: Sampling {
                n: self.n,
                temperature,
                top_p: self.top_p,
                max_tokens: self.max_tokens,
                seed: self.seed,
            },
            concurrency: self.concurrency as usize,
            requests_per_second: self.requests_per_second,
            max_attempts: self.max_attempts,
            request_timeout: self.request_timeout,
            output,
            restart,
            defaulted,
        })
    }
}

pub fn generate(args: GenerateArgs) -> Result<(), CommandError> {
    if args.output.is_dir() {
        return Err(CommandError::SamplesOutputIsADirectory { path: args.output.display().to_string() });
    }
    let set = SetOptions { format: args.format, ..SetOptions::default() };
    let problems = Arc::new(ProblemSet::load(&args.problems, &set)?);
    let options = args.generation.into_options(problems, args.language, args.output, args.restart)?;
    crate::runtime()?.block_on(async {
        let interrupt = crate::interrupt::listen()?;
        ask_for_samples(options, interrupt).await
    })?;
    Ok(())
}

/// Asks for the samples `options` name, showing them arrive, and says what was done.
pub async fn ask_for_samples(
    options: GenerateOptions,
    interrupt: passk_runner::CancellationToken,
) -> Result<Generated, CommandError> {
    let output = options.output.clone();
    let started = Instant::now();
    let shown = Arc::new(Shown::new());
    let watch = {
        let shown = shown.clone();
        Arc::new(move |event| shown.event(event))
    };
    let generated = passk_generate::generate(options, watch, interrupt).await;
    shown.finish();
    let generated = match generated {
        Ok(generated) => generated,
        Err(GenerateError::Interrupted) => {
            return Err(CommandError::GenerateInterrupted { have: shown.have(), total: shown.total(), output });
        }
        Err(error) => {
            if shown.written() > 0 {
                say!(
                    "{} samples written to {} before it stopped; the same command asks for the rest",
                    shown.written(),
                    output.display()
                );
            }
            return Err(error.into());
        }
    };
    let Generated { total, already, written, tokens, .. } = generated;
    let seconds = started.elapsed().as_secs_f64();
    if written == 0 {
        say!("nothing to ask: {} holds all {total} samples", output.display());
    } else {
        let resumed = if already > 0 { format!(" ({already} were there already)") } else { String::new() };
        say!(
            "samples: {} ({written} asked for{resumed}, {tokens} tokens, {:.0} tokens/s, {seconds:.1} s)",
            output.display(),
            tokens as f64 / seconds.max(0.001)
        );
    }
    Ok(generated)
}

/// What the user sees while samples arrive: a bar with samples, tokens/s and ETA on a
/// terminal, a plain line every ten seconds elsewhere.
#[derive(Debug)]
struct Shown {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    bar: Option<ProgressBar>,
    total: usize,
    have: usize,
    written: usize,
    tokens: u64,
    began: Option<Instant>,
    last_line: Option<Instant>,
}

impl Shown {
    fn new() -> Shown {
        Shown { state: Mutex::new(State::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn event(&self, event: Event) {
        let mut state = self.lock();
        match event {
            Event::Started { total, already, dropped_torn_line } => {
                if dropped_torn_line {
                    say!("warning: the last line of the samples file was cut short (a crash?); it is asked for again");
                }
                if already > 0 && already < total {
                    say!("resuming: {already} of {total} samples are there already");
                }
                state.total = total;
                state.have = already;
                state.began = Some(Instant::now());
                // The first plain line comes ten seconds in: a quick run needs none.
                state.last_line = state.began;
                if std::io::stderr().is_terminal() && already < total {
                    let bar = ProgressBar::new(total as u64);
                    let style = ProgressStyle::with_template("{bar:40} {pos}/{len} samples  {msg}  ETA {eta}")
                        .expect("the template is valid");
                    bar.set_style(style);
                    bar.set_position(already as u64);
                    bar.reset_eta();
                    state.bar = Some(bar);
                }
            }
            Event::Sample { tokens } => {
                state.have += 1;
                state.written += 1;
                state.tokens += tokens;
                let rate =
                    state.tokens as f64 / state.began.map_or(1.0, |began| began.elapsed().as_secs_f64().max(0.001));
                if let Some(bar) = &state.bar {
                    bar.set_message(format!("{rate:.0} tokens/s"));
                    bar.inc(1);
                } else if state.last_line.map_or(true, |last| last.elapsed() >= Duration::from_secs(10)) {
                    state.last_line = Some(Instant::now());
                    say!("{}/{} samples, {rate:.0} tokens/s", state.have, state.total);
                }
            }
            Event::Retrying { task_id, why, wait } => {
                let line = format!("retrying {task_id} in {:.1} s: {why}", wait.as_secs_f64());
                match &state.bar {
                    Some(bar) => bar.suspend(|| say!("{line}")),
                    None => say!("{line}"),
                }
            }
            Event::Adapted { what } => match &state.bar {
                Some(bar) => bar.suspend(|| say!("{what}")),
                None => say!("{what}"),
            },
        }
    }

    fn finish(&self) {
        if let Some(bar) = self.lock().bar.take() {
            bar.finish_and_clear();
        }
    }

    fn have(&self) -> usize {
        self.lock().have
    }

    fn total(&self) -> usize {
        self.lock().total
    }

    fn written(&self) -> usize {
        self.lock().written
    }
}
