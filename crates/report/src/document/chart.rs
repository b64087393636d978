//! The pass@k and pass^k curves over k, with their 95% bands, as inline SVG.

use plotters::prelude::*;

use crate::scores::Scores;

/// One k's values: `(mean, low, high)` of pass@k and of pass^k.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub k: u64,
    pub pass_at: (f64, f64, f64),
    pub pass_hat: (f64, f64, f64),
}

/// The k drawn: every k up to 20, then about 40 spread evenly on a log scale, up to the
/// largest every problem has samples for.
pub fn ks_to_draw(max_k: u64) -> Vec<u64> {
    let mut ks: Vec<u64> = (1..=max_k.min(20)).collect();
    if max_k > 20 {
        let (low, high) = (20f64.ln(), (max_k as f64).ln());
        ks.extend((1..=40).map(|i| (low + (high - low) * f64::from(i) / 40.0).exp().round() as u64));
        ks.sort_unstable();
        ks.dedup();
    }
    ks
}

/// The points of `scores`, scored at the k of `ks_to_draw`.
pub fn points(scores: &Scores) -> Vec<Point> {
    let value = |metric, k| {
        scores.scored.iter().find(|s| s.summary.metric() == metric && s.summary.k() == k).and_then(|s| {
            match &s.summary {
                passk_scorer::Summary::Estimated { mean, .. } => {
                    let (low, high) = s.ci95.unwrap_or((*mean, *mean));
                    Some((*mean, low, high))
                }
                passk_scorer::Summary::LeftOut { .. } => None,
            }
        })
    };
    let ks: Vec<u64> = scores
        .scored
        .iter()
        .filter(|s| s.summary.metric() == passk_scorer::Metric::PassAt)
        .map(|s| s.summary.k())
        .collect();
    ks.into_iter()
        .filter_map(|k| {
            Some(Point {
                k,
                pass_at: value(passk_scorer::Metric::PassAt, k)?,
                pass_hat: value(passk_scorer::Metric::PassHat, k)?,
            })
        })
        .collect()
}

/// A curve over k: `(k, (mean, low, high))` at each k drawn.
pub type Curve = Vec<(u64, (f64, f64, f64))>;

/// A line to draw: its name, colour and curve.
pub type Series = (String, RGBColor, Curve);

/// The pass@k and pass^k series of `points`.
pub fn pass_series(points: &[Point]) -> Vec<Series> {
    vec![
        ("pass@k".into(), BLUE_LINE, points.iter().map(|p| (p.k, p.pass_at)).collect()),
        ("pass^k".into(), RED_LINE, points.iter().map(|p| (p.k, p.pass_hat)).collect()),
    ]
}

pub const BLUE_LINE: RGBColor = RGBColor(31, 119, 180);
pub const RED_LINE: RGBColor = RGBColor(214, 39, 40);

/// Where the k axis is labelled: k is a whole number, so each label is one, and each
/// once: every k up to 10, then 1, 2 and 5 times each power of ten, up to `max_k`.
fn k_ticks(max_k: u64) -> Vec<f64> {
    if max_k <= 10 {
        return (1..=max_k).map(|k| k as f64).collect();
    }
    let mut ticks = Vec::new();
    let mut decade = 1;
    while decade <= max_k {
        ticks.extend([decade, 2 * decade, 5 * decade].into_iter().filter(|&k| k <= max_k).map(|k| k as f64));
        decade *= 10;
    }
    ticks
}

/// The chart of `series` over k, each line with its 95% band, as an `<svg>` element.
pub fn svg(caption: &str, series: &[Series]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 400)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let max_k =
            series.iter().flat_map(|(_, _, values)| values.last()).map(|(k, _)| *k).max().unwrap_or(1).max(2) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d((1f64..max_k).log_scale().with_key_points(k_ticks(max_k as u64)), 0f64..1f64)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("k")
            .y_desc("estimate")
            .x_label_formatter(&|k| format!("{k:.0}"))
            .draw()
            .map_err(|e| e.to_string())?;
        for (name, color, values) in series {
            let color = *color;
            let band: Vec<(f64, f64)> = values
                .iter()
                .map(|(k, (_, low, _))| (*k as f64, *low))
                .chain(values.iter().rev().map(|(k, (_, _, high))| (*k as f64, *high)))
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(band, color.mix(0.18)))).map_err(|e| e.to_string())?;
            chart
                .draw_series(LineSeries::new(
                    values.iter().map(|(k, (mean, _, _))| (*k as f64, *mean)),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            // A mark at each k drawn, so that a curve of one point shows too.
            chart
                .draw_series(values.iter().map(|(k, (mean, _, _))| Circle::new((*k as f64, *mean), 3, color.filled())))
                .map_err(|e| e.to_string())?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
