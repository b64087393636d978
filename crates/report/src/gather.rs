//! Everything reported of a run's results lines, gathered in one pass: the tally, each
//! problem's row in the documents, and the groups `--cluster-by` names. A run gathers as
//! it writes its results; `score`, `compare` and a repeated command read the file once.

use std::collections::HashMap;
use std::path::Path;

use passk_formats::results::{ResultLine, ResultsFile};
use passk_formats::InputError;
use serde_json::Value;

use crate::rows::{ProblemRow, Rows};
use crate::scores::Groups;
use crate::tally::{Outcome, Tally};

/// What a run's results lines come to.
#[derive(Debug, Default)]
pub struct Gathered {
    pub tally: Tally,
    rows: Rows,
    clusters: Option<Clusters>,
}

/// Each problem's value of the field `--cluster-by` names: every line of a problem must
/// give the same.
#[derive(Debug)]
struct Clusters {
    field: String,
    /// Each task's value and the line that first gave it.
    of_task: HashMap<String, (String, usize)>,
    /// Each value's group, numbered as first seen.
    ids: HashMap<String, usize>,
}

impl Gathered {
    /// Gathers nothing yet; with the groups of the field `cluster_by`, if given.
    pub fn new(cluster_by: Option<&str>) -> Gathered {
        let clusters =
            cluster_by.map(|field| Clusters { field: field.to_owned(), of_task: HashMap::new(), ids: HashMap::new() });
        Gathered { tally: Tally::default(), rows: Rows::default(), clusters }
    }

    /// The results file at `path`, read once.
    pub fn read(path: &Path, cluster_by: Option<&str>) -> Result<Gathered, InputError> {
        let gathered = Gathered::read_even_empty(path, cluster_by)?;
        if gathered.tally.samples() == 0 {
            return Err(InputError::Empty { path: path.display().to_string(), what: "results" });
        }
        Ok(gathered)
    }

    /// `read`, for results that may rightly hold no line: a shard's that holds no problem.
    pub fn read_even_empty(path: &Path, cluster_by: Option<&str>) -> Result<Gathered, InputError> {
        let file = ResultsFile::open(path)?;
        let source = file.source().to_owned();
        let mut gathered = Gathered::new(cluster_by);
        for read in file {
            let (number, line) = read?;
            gathered.add(&source, number, &line)?;
        }
        Ok(gathered)
    }

    /// Adds line `number` of the results `source`.
    pub fn add(&mut self, source: &str, number: usize, line: &ResultLine) -> Result<(), InputError> {
        let task_id = line.task_id().unwrap_or_default();
        if let Some(clusters) = &mut self.clusters {
            clusters.add(source, number, task_id, line)?;
        }
        self.tally.add(task_id, &Outcome::of(&line.verdict));
        self.rows.add(task_id, &line.verdict);
        Ok(())
    }

    /// Each problem's row, in the order problems first appeared.
    pub fn rows(&self) -> Vec<ProblemRow> {
        self.rows.rows()
    }

    /// The groups of `task_ids`, in their order, if `--cluster-by` named a field and
    /// every one of them was gathered.
    pub fn groups(&self, task_ids: &[String]) -> Option<Groups> {
        let clusters = self.clusters.as_ref()?;
        let of_problem = task_ids
            .iter()
            .map(|task_id| clusters.of_task.get(task_id).map(|(value, _)| clusters.ids[value]))
            .collect::<Option<Vec<usize>>>()?;
        Some(Groups { field: clusters.field.clone(), of_problem, count: clusters.ids.len() })
    }
}

impl Clusters {
    fn add(&mut self, source: &str, number: usize, task_id: &str, line: &ResultLine) -> Result<(), InputError> {
        let grouping = |problem: String| InputError::Grouping {
            path: source.to_owned(),
            line: number,
            field: self.field.clone(),
            problem,
        };
        let value = match line.field(&self.field) {
            Some(Value::String(text)) => text,
            Some(value @ (Value::Number(_) | Value::Bool(_))) => value.to_string(),
            _ => return Err(grouping("is missing or not a string or number".into())),
        };
        match self.of_task.get(task_id) {
            Some((first, first_line)) if *first != value => {
                Err(grouping(format!("is {value:?} for {task_id}, which was {first:?} on line {first_line}")))
            }
            Some(_) => Ok(()),
            None => {
                let next = self.ids.len();
                self.ids.entry(value.clone()).or_insert(next);
                self.of_task.insert(task_id.to_owned(), (value, number));
                Ok(())
            }
        }
    }
}
