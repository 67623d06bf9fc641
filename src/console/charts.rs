//! Bar charts as SVG, drawn on the server from numbers only: each chart is rectangles with their
//! coordinates (rendered by the page's template, escaped like anything else) and a table of the same
//! numbers beside it for whoever does not see the picture.

/// One bar segment: its place in the chart's 0..WIDTH by 0..HEIGHT box and the series it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    /// The CSS class of its series (`s0`, `s1`).
    pub class: &'static str,
}

/// A chart: stacked bars, one column a day.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub bars: Vec<Bar>,
    /// The largest column, for the axis label.
    pub max: u64,
    pub width: u32,
    pub height: u32,
    /// What each series' colour means: (CSS class, label).
    pub keys: Vec<(&'static str, String)>,
}

pub const WIDTH: u32 = 600;
pub const HEIGHT: u32 = 120;

/// Stacked columns of `values` (each column's parts, bottom first, labelled by `keys`), evenly spread
/// over the width.
pub fn stacked(title: impl Into<String>, keys: &[&str], values: &[Vec<u64>]) -> Chart {
    let max = values.iter().map(|v| v.iter().sum::<u64>()).max().unwrap_or(0);
    let n = values.len().max(1) as f64;
    let slot = f64::from(WIDTH) / n;
    let width = (slot * 0.8).max(1.0);
    let scale = if max == 0 { 0.0 } else { f64::from(HEIGHT) / max as f64 };
    let mut bars = Vec::new();
    for (i, parts) in values.iter().enumerate() {
        let mut top = f64::from(HEIGHT);
        for (k, v) in parts.iter().enumerate() {
            if *v == 0 {
                continue;
            }
            let h = *v as f64 * scale;
            top -= h;
            let round = |x: f64| (x * 10.0).round() / 10.0;
            bars.push(Bar {
                x: round(i as f64 * slot + (slot - width) / 2.0),
                y: round(top),
                width: round(width),
                height: round(h),
                class: if k == 0 { "s0" } else { "s1" },
            });
        }
    }
    let keys = keys.iter().enumerate().map(|(i, k)| (if i == 0 { "s0" } else { "s1" }, (*k).to_owned())).collect();
    Chart { title: title.into(), bars, max, width: WIDTH, height: HEIGHT, keys }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_stack_their_parts_and_the_largest_fills_the_height() {
        let c = stacked("q", &["a", "b"], &[vec![2, 2], vec![0, 0], vec![1, 0]]);
        assert_eq!(c.keys, vec![("s0", "a".to_owned()), ("s1", "b".to_owned())]);
        assert_eq!(c.max, 4);
        assert_eq!(c.bars.len(), 3, "empty parts draw nothing");
        assert_eq!((c.bars[0].y, c.bars[0].height, c.bars[0].class), (60.0, 60.0, "s0"));
        assert_eq!((c.bars[1].y, c.bars[1].height, c.bars[1].class), (0.0, 60.0, "s1"));
        assert_eq!((c.bars[2].y, c.bars[2].height), (90.0, 30.0));
        assert!(c.bars[2].x > c.bars[0].x);
        assert!(stacked("none", &[], &[]).bars.is_empty());
    }
}
