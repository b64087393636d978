//! What the server runs programs with, made once at start: the problem sets it was
//! given, the toolchains of every language this machine has, and the pool of workers.

use std::collections::BTreeMap;
use std::sync::Arc;

use passk_eval::events::{Event, EventSink};
use passk_eval::languages::{tell_building, Toolchains};
use passk_eval::served::Served;
use passk_formats::problems::ProblemSet;
use passk_runner::{CancellationToken, Language, Pool};

use crate::error::ServeError;
use crate::ServeSettings;

/// The workers and what they run.
#[derive(Debug)]
pub struct Engine {
    pub(crate) served: Served,
    pub(crate) sets: BTreeMap<String, Arc<ProblemSet>>,
    pub(crate) toolchains: Toolchains,
    /// Languages with a toolchain rule that this machine cannot run, and why.
    pub(crate) unavailable: BTreeMap<String, String>,
    sandbox: String,
    jobs: usize,
}

impl Engine {
    /// Loads the problem sets, finds the toolchains, starts the workers, and gives every
    /// EvalPlus problem its expected outputs (from the cache, or computed now).
    pub async fn start(
        settings: &ServeSettings,
        events: &EventSink,
        interrupt: &CancellationToken,
    ) -> Result<Engine, ServeError> {
        let mut sets = BTreeMap::new();
        for named in &settings.problem_sets {
            let problems = ProblemSet::load(&named.source, &settings.set)
                .map_err(|source| ServeError::ProblemSet { name: named.name.clone(), source })?;
            if sets.insert(named.name.clone(), problems).is_some() {
                return Err(ServeError::DuplicateSet { name: named.name.clone() });
            }
        }
        let (toolchains, unavailable) = {
            let cache = settings.cache_dir.clone();
            let events = events.clone();
            tokio::task::spawn_blocking(move || find_toolchains(cache, &events))
                .await
                .map_err(|_| ServeError::Panicked)?
        };
        for (language, why) in &unavailable {
            events.event(Event::Warning(format!("{language} programs cannot run here: {why}")));
        }
        let workers = &settings.workers;
        let interpreter = workers.interpreter().await.map_err(passk_eval::EvalError::from)?;
        let mut pool_options = workers.pool_options(interpreter)?;
        pool_options.shown = toolchains.shown();
        if let Some(helper) = &settings.helper {
            pool_options.helper = helper.clone();
        }
        let mut pool = Pool::start(pool_options).await.map_err(passk_eval::EvalError::from)?;
        passk_eval::evaluate::warn_about_isolation(pool.isolation(), pool.facts().syscall_filter, events);
        let mut loaded = BTreeMap::new();
        for (name, mut problems) in sets {
            let attached = passk_eval::expected::attach(
                &mut problems,
                &settings.set,
                &mut pool,
                &settings.cache_dir,
                interrupt,
                events,
            )
            .await;
            if let Err(error) = attached {
                pool.stop().await;
                return Err(error.into());
            }
            loaded.insert(name, Arc::new(problems));
        }
        let sandbox = pool.isolation().level.to_string();
        let jobs = workers.jobs;
        Ok(Engine { served: Served::on(pool, settings.queue), sets: loaded, toolchains, unavailable, sandbox, jobs })
    }

    /// One line on what the server is ready with.
    pub fn describe(&self) -> String {
        let sets: Vec<String> =
            self.sets.iter().map(|(name, set)| format!("{name} ({} problems)", set.problems.len())).collect();
        let sets = if sets.is_empty() { "none".to_owned() } else { sets.join(", ") };
        format!(
            "ready: sandbox {}, {} workers, room for {} programs; languages {}; problem sets {sets}",
            self.sandbox,
            self.jobs,
            self.served.capacity(),
            self.languages().join(", "),
        )
    }

    /// The languages programs may be in, by passk's names.
    pub fn languages(&self) -> Vec<String> {
        let host = Language::all().iter().filter(|language| language.program.is_none()).map(|l| l.name.clone());
        host.chain(self.toolchains.found().map(|toolchain| toolchain.language.clone())).collect()
    }

    /// Lets what is queued finish, then stops the workers.
    pub async fn drain(self) {
        self.served.drain().await;
    }
}

/// The toolchain of every language that has one and that this machine can run, and why
/// each of the others cannot run.
fn find_toolchains(cache: std::path::PathBuf, events: &EventSink) -> (Toolchains, BTreeMap<String, String>) {
    let mut toolchains = Toolchains::new(None, cache);
    let mut unavailable = BTreeMap::new();
    let building = tell_building(events);
    for language in Language::all().iter().filter(|language| language.program.is_some()) {
        if let Err(error) = toolchains.find([language.name.as_str()], &building) {
            unavailable.insert(language.name.clone(), passk_runner::error_chain(&*error));
        }
    }
    (toolchains, unavailable)
}
