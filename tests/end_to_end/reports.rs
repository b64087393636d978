//! `--report`: the HTML report opened in a real browser (Debian's headless Chromium),
//! and the Markdown report read as text.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use passk_tests::{finish, passk, repo_root};
use serde_json::Value;

/// Hosts Chromium itself calls (updates, accounts, time) whatever page it shows.
const CHROMIUM_OWN_HOSTS: [&str; 6] = [
    "update.googleapis.com",
    "accounts.google.com",
    "clients2.google.com",
    "clients1.google.com",
    "optimizationguide-pa.googleapis.com",
    "safebrowsing.googleapis.com",
];

fn chromium_binary() -> &'static str {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|name| Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("Chromium is installed (Debian's `chromium` package; .ci/run installs it)")
}

/// Headless Chromium on `page`, every request sent through the proxy at `proxy`.
fn chromium(page: &Path, proxy: u16, extra: &[&str]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new(chromium_binary())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{proxy}"))
        .arg("--proxy-bypass-list=<-loopback>")
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

/// A proxy that takes every connection and keeps its first line: what a page asked for.
struct Proxy {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut stream = stream;
                let mut first = [0; 512];
                let read = stream.read(&mut first).unwrap_or(0);
                let text = String::from_utf8_lossy(&first[..read]).lines().next().unwrap_or_default().to_owned();
                seen.lock().unwrap().push(text);
            }
        });
        Proxy { port, requests }
    }

    /// The requests since the last call that Chromium did not make for itself.
    fn page_requests(&self) -> Vec<String> {
        let mut requests = self.requests.lock().unwrap();
        let pages = requests.iter().filter(|line| !CHROMIUM_OWN_HOSTS.iter().any(|host| line.contains(host))).cloned();
        let pages = pages.collect();
        requests.clear();
        pages
    }
}

fn evaluate_with_report(dir: &Path, report: &str) -> (PathBuf, Value) {
    let summary = dir.join("summary.json");
    let finished = finish(
        passk(["evaluate"])
            .arg(repo_root().join("problems/basic-samples.jsonl"))
            .args(["--problems", "basic", "--k", "1,2", "--results"])
            .arg(dir.join("results.jsonl"))
            .arg("--summary")
            .arg(&summary)
            .arg("--report")
            .arg(dir.join(report)),
    );
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    (dir.join(report), serde_json::from_slice(&std::fs::read(summary).unwrap()).unwrap())
}

#[test]
fn the_html_report_renders_in_a_browser_with_its_numbers_and_no_network() {
    let dir = tempfile::tempdir().unwrap();
    let (report, summary) = evaluate_with_report(dir.path(), "report.html");
    let proxy = Proxy::start();

    // The proxy sees what a page fetches: a page with one remote image is caught.
    let control = dir.path().join("control.html");
    std::fs::write(&control, "<html><body><img src=\"http://example.com/tracker.png\"></body></html>").unwrap();
    chromium(&control, proxy.port, &["--dump-dom"]);
    assert!(proxy.page_requests().iter().any(|r| r.contains("example.com")), "the proxy catches a page's requests");

    let dom = chromium(&report, proxy.port, &["--dump-dom"]);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    assert_eq!(proxy.page_requests(), Vec::<String>::new(), "the report fetches nothing");
    let dom = String::from_utf8_lossy(&dom.stdout);
    let pass_at_1 = format!("{:.4}", summary["pass@1"].as_f64().unwrap());
    let stderr = format!("{:.4}", summary["stderr"]["pass@1"].as_f64().unwrap());
    let scores = dom.split("id=\"scores\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert!(scores.contains(&pass_at_1) && scores.contains(&stderr), "{scores}");
    let problems = dom.split("id=\"problems\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert_eq!(problems.matches("<td>basic/").count(), 24, "a row per problem");
    assert!(problems.contains("<td>basic/0</td>"), "{problems}");
    for (status, count) in summary["counts"].as_object().unwrap() {
        assert!(dom.contains(&format!("<td>{status}</td><td class=\"number\">{count}</td>")), "{status}: {count}");
    }
    assert!(dom.contains("<svg") && dom.contains("pass^k"), "the chart is inline");

    // Clicking a heading sorts by that column, numbers as numbers; again, the other way.
    let sorter = dir.path().join("sorter.html");
    std::fs::write(&sorter, SORTER).unwrap();
    let sorted =
        chromium(&sorter, proxy.port, &["--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom"]);
    let sorted = String::from_utf8_lossy(&sorted.stdout);
    let out = sorted.split("<pre id=\"out\">").nth(1).and_then(|rest| rest.split("</pre>").next()).unwrap();
    let out: Value = serde_json::from_str(&out.replace("&quot;", "\"")).unwrap_or_else(|e| panic!("{e}: {out}"));
    let column = |name: &str| -> Vec<String> {
        out[name].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
    };
    let numbers = |values: Vec<String>| -> Vec<f64> { values.iter().map(|v| v.parse().unwrap()).collect() };
    let ascending = numbers(column("pass_ascending"));
    assert!(ascending.windows(2).all(|w| w[0] <= w[1]), "{ascending:?}");
    let descending = numbers(column("pass_descending"));
    assert!(descending.windows(2).all(|w| w[0] >= w[1]), "{descending:?}");
    let expected: Vec<String> = (0..24).map(|i| format!("basic/{i}")).collect();
    assert_eq!(column("task_ids"), expected, "task ids sorted as people read them");

    let screenshot = dir.path().join("report.png");
    let shot =
        chromium(&report, proxy.port, &["--window-size=1200,1600", &format!("--screenshot={}", screenshot.display())]);
    assert!(shot.status.success(), "{}", String::from_utf8_lossy(&shot.stderr));
    let png = std::fs::read(&screenshot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    // A blank page of this size compresses to a few kilobytes; text, tables and a chart do not.
    assert!(png.len() > 40_000, "the screenshot is not blank: {} bytes", png.len());
    assert_eq!(proxy.page_requests(), Vec::<String>::new(), "the report fetches nothing");
}

#[test]
fn the_markdown_report_says_the_same_in_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (report, summary) = evaluate_with_report(dir.path(), "report.md");
    let text = std::fs::read_to_string(report).unwrap();
    let pass_at_1 = format!(
        "| pass@1 | {:.4} | {:.4} |",
        summary["pass@1"].as_f64().unwrap(),
        summary["stderr"]["pass@1"].as_f64().unwrap()
    );
    assert!(text.contains(&pass_at_1), "{pass_at_1}: {text}");
    assert_eq!(text.lines().filter(|line| line.starts_with("| basic/")).count(), 24);
    assert!(text.contains("| 2 | "), "the curve over k as a table: {text}");
    assert!(!text.contains("<svg"));

    let refused = finish(passk(["score"]).arg(dir.path().join("results.jsonl")).args(["--report", "report.txt"]));
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("must end in .html or .md"), "{}", refused.stderr);
}

/// Guards against a report of a `--partial` run reading as the whole set's: the table
/// said "over 3 of 24 problems", the documents only "3 problems".
#[test]
fn a_report_of_some_of_the_problems_says_they_are_a_subset() {
    let dir = tempfile::tempdir().unwrap();
    let all = std::fs::read_to_string(repo_root().join("problems/basic-samples.jsonl")).unwrap();
    let some: String = all
        .lines()
        .filter(|line| ["\"basic/0\"", "\"basic/1\"", "\"basic/2\""].iter().any(|id| line.contains(id)))
        .map(|line| format!("{line}\n"))
        .collect();
    let samples = dir.path().join("samples.jsonl");
    std::fs::write(&samples, some).unwrap();
    for report in ["report.md", "report.html"] {
        let finished = finish(
            passk(["evaluate"])
                .arg(&samples)
                .args(["--problems", "basic", "--partial", "--k", "1", "--restart", "--report"])
                .arg(dir.path().join(report)),
        );
        assert_eq!(finished.code, Some(0), "{}", finished.stderr);
        let text = std::fs::read_to_string(dir.path().join(report)).unwrap();
        assert!(text.contains("3 problems") && text.contains("a subset of the 24 of the problem set"), "{text}");
    }
    // Regression: `score` of those results, as they were left, forgot they were of a
    // subset: its table, summary and report said nothing of the other problems.
    let results = dir.path().join("samples.jsonl_results.jsonl");
    let summary = dir.path().join("summary.json");
    let scored = finish(
        passk(["score", "--k", "1", "--report"])
            .arg(dir.path().join("scored.md"))
            .arg(&results)
            .arg("--summary")
            .arg(&summary),
    );
    assert_eq!(scored.code, Some(0), "{}", scored.stderr);
    assert!(scored.stdout.contains("over 3 of 24 problems"), "{}", scored.stdout);
    let recorded: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    assert_eq!(recorded["subset"]["of"], 24, "{recorded}");
    let text = std::fs::read_to_string(dir.path().join("scored.md")).unwrap();
    assert!(text.contains("a subset of the 24 of the problem set"), "{text}");
    // Results changed since their run are not taken to be that run's.
    let mut lines = std::fs::read_to_string(&results).unwrap();
    lines.push_str(&lines.clone());
    std::fs::write(&results, lines).unwrap();
    let changed = finish(passk(["score", "--k", "1"]).arg(&results));
    assert!(!changed.stdout.contains(" of 24 problems"), "{}", changed.stdout);
}

/// Guards against candidate text becoming markup of the Markdown report: a failure's
/// detail went into its cell raw but for `|` and newlines, so a candidate's exception
/// could put HTML, an image or a link (a score of its own) into a pull request's comment.
#[test]
fn what_a_candidate_wrote_is_plain_text_in_the_markdown_report() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let forged = "line 3: </td><script>alert(1)</script><img src=x onerror=alert(2)> ![pass@1 1.0](http://x/y.png) \
                  [ok](http://x) `code` **bold** | cell\n| pass@1 | 1.0000 |\r\u{1b}[2J end";
    passk_tests::write_jsonl(
        &results,
        &[
            serde_json::json!({"task_id": "t/0", "passed": false, "status": "failed", "detail": forged}),
            serde_json::json!({"task_id": "t/0", "passed": true, "status": "passed"}),
        ],
    );
    let report = dir.path().join("report.md");
    let scored = finish(passk(["score"]).arg(&results).arg("--report").arg(&report));
    assert_eq!(scored.code, Some(0), "{}", scored.stderr);
    let text = std::fs::read_to_string(&report).unwrap();
    let row = text.lines().find(|line| line.starts_with("| t/0 |")).unwrap_or_else(|| panic!("{text}"));
    for raw in ["<script", "<img", "</td>", "![", "[ok]", "`code`", "**bold**", "\u{1b}", "\r"] {
        assert!(!text.contains(raw), "{raw:?} reached the report raw: {row}");
    }
    assert!(!text.lines().any(|line| line.starts_with("| pass@1 | 1.0000")), "a forged row: {text}");
    // The row keeps its 7 cells: every `|` of the detail is escaped.
    assert_eq!(row.replace("\\|", "").matches('|').count(), 8, "{row}");
    assert!(row.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && row.ends_with(" end |"), "{row}");
}

/// A page that opens the report in a frame, clicks its headings, and writes down the
/// order of the rows after each click.
const SORTER: &str = r##"<html><body><pre id="out">waiting</pre>
<iframe id="report" src="report.html"></iframe>
<script>
document.getElementById("report").addEventListener("load", function () {
  var doc = this.contentDocument;
  var column = function (index) {
    return Array.prototype.map.call(doc.querySelectorAll("#problems tbody tr"), function (r) { return r.cells[index].textContent; });
  };
  var headings = doc.querySelectorAll("#problems th");
  headings[3].click();
  var ascending = column(3);
  headings[3].click();
  var descending = column(3);
  headings[0].click();
  document.getElementById("out").textContent =
    JSON.stringify({pass_ascending: ascending, pass_descending: descending, task_ids: column(0)});
});
</script></body></html>"##;

/// A results file whose problem `i` has 10 samples of which `passes[i]` pass.
fn results_file(path: &Path, passes: &[u64]) {
    let lines: Vec<Value> = passes
        .iter()
        .enumerate()
        .flat_map(|(i, &c)| (0..10).map(move |j| serde_json::json!({"task_id": format!("t/{i}"), "passed": j < c})))
        .collect();
    passk_tests::write_jsonl(path, &lines);
}

#[test]
fn the_comparison_report_shows_both_runs_and_every_problems_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    results_file(&a, &[10, 8, 9, 2, 7]);
    results_file(&b, &[9, 8, 6, 1, 7]);
    let summary = dir.path().join("compare.json");
    let html = dir.path().join("compare.html");
    let compared = finish(passk(["compare"]).arg(&a).arg(&b).arg("--summary").arg(&summary).arg("--report").arg(&html));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    let summary: Value = serde_json::from_slice(&std::fs::read(&summary).unwrap()).unwrap();
    let difference = format!("{:+.4}", summary["difference"]["pass@1"]["mean"].as_f64().unwrap());

    let proxy = Proxy::start();
    let dom = chromium(&html, proxy.port, &["--dump-dom"]);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    assert_eq!(proxy.page_requests(), Vec::<String>::new(), "the report fetches nothing");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains(&difference), "{difference}: {dom}");
    assert!(dom.contains("A: pass@k") && dom.contains("B: pass@k"), "both runs on one chart");
    let rows = dom.split("id=\"differences\"").nth(1).unwrap();
    assert_eq!(rows.matches("<td>t/").count(), 5, "every problem's difference");
    assert!(rows.contains(
        "<td>t/2</td><td class=\"number\">0.9000</td><td class=\"number\">0.6000</td><td class=\"number\">+0.3000</td>"
    ));

    let markdown = dir.path().join("compare.md");
    let compared = finish(passk(["compare"]).arg(&a).arg(&b).arg("--report").arg(&markdown));
    assert_eq!(compared.code, Some(0), "{}", compared.stderr);
    let text = std::fs::read_to_string(&markdown).unwrap();
    assert!(text.contains("| t/2 | 0.9000 | 0.6000 | +0.3000 |"), "{text}");
    assert!(text.contains(&format!("| pass@1 | 0.7200 | 0.6200 | {difference} |")), "{text}");
}

/// Regression: the chart labelled the integer k `1.0 … 10.0`, and drew `10.0` twice. Each
/// k is labelled once, as the whole number it is.
#[test]
fn the_charts_k_axis_labels_each_whole_k_once() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    results_file(&results, &[10, 8, 9, 2, 7]);
    let html = dir.path().join("report.html");
    let scored = finish(passk(["score"]).arg(&results).args(["--k", "1,10", "--report"]).arg(&html));
    assert_eq!(scored.code, Some(0), "{}", scored.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    let svg = page.split("<svg").nth(1).unwrap().split("</svg>").next().unwrap();
    let labels: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .map(|text| text.split_once('>').unwrap().1.split('<').next().unwrap().trim())
        .collect();
    // The k axis's labels follow its title `k` and the estimate axis's eleven (0.0 to
    // 1.0), and come before the legend.
    let after_k = labels.iter().skip_while(|label| **label != "k").skip(12);
    let k_labels: Vec<&str> = after_k.take_while(|label| !label.starts_with("pass")).copied().collect();
    assert_eq!(k_labels, ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"], "{labels:?}");
}
