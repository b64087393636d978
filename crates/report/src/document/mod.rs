//! `--report FILE.html` or `FILE.md`: a run's numbers as a document a person reads.
//!
//! The HTML report is one self-contained file that reaches no network at all: the
//! charts are inline SVG drawn by plotters, the styles and the few lines of script that
//! sort the table are inline, and nothing is loaded from elsewhere. The Markdown report
//! says the same without charts or sorting, for pull-request comments. Both come from
//! templates in this directory, filled by minijinja.

mod chart;

use std::path::{Path, PathBuf};

use minijinja::Environment;
use serde::Serialize;

use crate::error::ReportError;
use crate::gather::Gathered;
use crate::scores::{self, UncertaintyOptions};
use crate::summary::Report;
use passk_formats::InputError;

use crate::rows::ProblemRow;

/// The kinds of report, by the file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
}

/// A report asked for, checked before anything runs.
#[derive(Debug, Clone)]
pub struct ReportPath {
    pub path: PathBuf,
    pub format: Format,
}

impl ReportPath {
    /// Checks the name and that the file can be written.
    pub fn new(path: &Path) -> Result<ReportPath, InputError> {
        let format = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("html" | "htm") => Format::Html,
            Some("md" | "markdown") => Format::Markdown,
            _ => return Err(InputError::ReportFormat { path: path.display().to_string() }),
        };
        passk_formats::write::check_writable(path)
            .map_err(|source| InputError::unwritable("--report", path, source))?;
        Ok(ReportPath { path: path.to_owned(), format })
    }
}

/// A score as the templates show it.
#[derive(Debug, Serialize)]
struct ScoreRow {
    name: String,
    value: Option<String>,
    stderr: Option<String>,
    ci95: Option<String>,
}

#[derive(Debug, Serialize)]
struct StatusRow {
    status: String,
    count: u64,
    share: String,
}

#[derive(Debug, Serialize)]
struct CurveRow {
    k: u64,
    pass_at: String,
    pass_hat: String,
}

#[derive(Debug, Serialize)]
struct Context {
    title: String,
    source: String,
    samples: u64,
    problems: usize,
    /// How many problems the set holds, when the samples cover only some (`--partial`):
    /// a score over a subset must not read as the whole set's.
    subset_of: Option<usize>,
    scores: Vec<ScoreRow>,
    statuses: Vec<StatusRow>,
    chart: String,
    curve: Vec<CurveRow>,
    rows: Vec<ProblemRow>,
    footer: Vec<(String, String)>,
}

/// Whether a report was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Report,
    /// None: the run has no pass@k to report (it is incomplete, or problems are unjudgeable).
    NothingToReport,
}

/// Writes the report of a run with pass@k to report.
/// `gathered` are the results' lines (named `results` in the document), gathered as
/// they were written or read.
pub fn write_if_complete(
    target: &ReportPath,
    title: &str,
    report: &Report<'_>,
    results: &Path,
    gathered: &Gathered,
    uncertainty: &UncertaintyOptions,
) -> Result<Written, ReportError> {
    if report.scores.scored.is_empty() {
        return Ok(Written::NothingToReport);
    }
    let rows = gathered.rows();
    let counts = report.tally.counts();
    let max_k = counts.iter().map(|(_, c)| c.n).min().unwrap_or(1);
    let ks = chart::ks_to_draw(max_k);
    let groups = gathered.groups(&counts.iter().map(|(task_id, _)| task_id.clone()).collect::<Vec<_>>());
    let curve = scores::score(counts, groups.as_ref(), &ks, uncertainty)?;
    let points = chart::points(&curve);
    let samples = report.tally.samples();
    let scores = report
        .scores
        .scored
        .iter()
        .filter(|s| !(s.summary.metric() == passk_scorer::Metric::PassHat && s.summary.k() == 1))
        .map(|s| ScoreRow {
            name: s.name(),
            value: match &s.summary {
                passk_scorer::Summary::Estimated { mean, .. } => Some(format!("{mean:.4}")),
                passk_scorer::Summary::LeftOut { .. } => None,
            },
            stderr: s.stderr.map(|se| format!("{se:.4}")),
            ci95: s.ci95.map(|(lo, hi)| format!("[{lo:.4}, {hi:.4}]")),
        })
        .collect();
    let context = Context {
        title: title.to_owned(),
        source: results.display().to_string(),
        samples,
        problems: report.tally.problems(),
        subset_of: report.subset.as_ref().map(|subset| subset.of),
        scores,
        statuses: report
            .tally
            .statuses()
            .iter()
            .map(|(status, count)| StatusRow {
                status: status.clone(),
                count: *count,
                share: format!("{:.1}%", *count as f64 * 100.0 / samples.max(1) as f64),
            })
            .collect(),
        chart: match target.format {
            Format::Html => chart::svg("pass@k and pass^k over k, with 95% intervals", &chart::pass_series(&points))
                .map_err(|message| ReportError::Document { message })?,
            Format::Markdown => String::new(),
        },
        curve: points
            .iter()
            .map(|p| CurveRow {
                k: p.k,
                pass_at: format!("{:.4}", p.pass_at.0),
                pass_hat: format!("{:.4}", p.pass_hat.0),
            })
            .collect(),
        rows,
        footer: report.footer.clone(),
    };
    let templates = match target.format {
        Format::Html => ("report.html", include_str!("report.html")),
        Format::Markdown => ("report.md", include_str!("report.md")),
    };
    render(target, templates, &context)?;
    Ok(Written::Report)
}

/// Fills the template `(name, text)` with `context` and writes it to `target`.
fn render(target: &ReportPath, (name, template): (&str, &str), context: &impl Serialize) -> Result<(), ReportError> {
    let mut environment = Environment::new();
    environment.set_auto_escape_callback(|name| {
        if name.ends_with(".html") {
            minijinja::AutoEscape::Html
        } else if name.ends_with(".md") {
            MARKDOWN
        } else {
            minijinja::AutoEscape::None
        }
    });
    environment.set_formatter(|out, state, value| {
        if state.auto_escape() != MARKDOWN || value.is_safe() {
            return minijinja::escape_formatter(out, state, value);
        }
        if !value.is_undefined() {
            out.write_str(&markdown_escape(&value.to_string()))?;
        }
        Ok(())
    });
    let template_error = |e: minijinja::Error| ReportError::Document { message: e.to_string() };
    environment.add_template("sortable.js", include_str!("sortable.js")).map_err(template_error)?;
    environment.add_template(name, template).map_err(template_error)?;
    let text = environment.get_template(name).and_then(|t| t.render(context)).map_err(template_error)?;
    passk_formats::write::write_atomically(&target.path, text.as_bytes())
        .map_err(|source| ReportError::Write { path: target.path.display().to_string(), source })
}

/// The Markdown templates' escaping: every value they show is escaped as
/// [`markdown_escape`] says, as the HTML templates' are for HTML.
const MARKDOWN: minijinja::AutoEscape = minijinja::AutoEscape::Custom("markdown");

/// `text` as plain text in a Markdown table's cell: what the samples and the candidates
/// wrote (task ids, failure details) must not become markup of the report's, so that a
/// candidate cannot put an image, a link or HTML (a score of its own) into a pull
/// request's comment, nor end a cell or a row. Markdown's punctuation is escaped with a
/// backslash, HTML's with entities, line breaks become spaces and other control
/// characters (terminal escapes) are dropped.
fn markdown_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '!' | '#' => {
                escaped.push('\\');
                escaped.push(c);
            }
            '\n' | '\r' | '\t' => escaped.push(' '),
            c if c.is_control() => {}
            c => escaped.push(c),
        }
    }
    escaped
}

/// Everything a comparison's report shows.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub problems: usize,
    /// One row per metric and k: name, A, B, A - B, SE, 95% CI, p.
    pub rows: Vec<[String; 7]>,
    pub wins: usize,
    pub losses: usize,
    pub ties: usize,
    pub by: String,
    /// Every common problem's `(task_id, A, B, A - B)`, the largest differences first.
    pub differences: Vec<[String; 4]>,
    #[serde(skip)]
    pub curves: [chart::Curve; 2],
    pub chart: String,
}

/// Writes the report of a comparison.
pub fn write_comparison(target: &ReportPath, mut comparison: Comparison) -> Result<(), ReportError> {
    if target.format == Format::Html {
        let [a, b] = std::mem::take(&mut comparison.curves);
        let series = vec![("A: pass@k".to_owned(), chart::BLUE_LINE, a), ("B: pass@k".to_owned(), chart::RED_LINE, b)];
        comparison.chart = chart::svg("pass@k of A and B over k, with 95% intervals", &series)
            .map_err(|message| ReportError::Document { message })?;
    }
    let templates = match target.format {
        Format::Html => ("compare.html", include_str!("compare.html")),
        Format::Markdown => ("compare.md", include_str!("compare.md")),
    };
    render(target, templates, &comparison)
}

/// pass@k of one side at the k worth drawing, with 95% intervals.
pub fn pass_at_curve(counts: &[(String, passk_scorer::Counts)], max_k: u64) -> Result<chart::Curve, ReportError> {
    let scores = scores::score(counts, None, &chart::ks_to_draw(max_k), &UncertaintyOptions::default())?;
    Ok(chart::points(&scores).iter().map(|p| (p.k, p.pass_at)).collect())
}
